// The Matte client: every operation typed from the served OpenAPI document (`client.api`, openapi-fetch),
// and the batch flow as helpers that raise MatteApiError for any refused request.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.ts';
import { errorFromResponse } from './errors.ts';
import { retryingFetch, type RetryOptions } from './retry.ts';
import { pacedFetch, type PaceOptions } from './pacing.ts';
import { followBatch, type BatchUpdate, type FollowOptions } from './events.ts';
import type { OutputFormat } from './formats.ts';
import type {
  Account,
  AddedItems,
  Batch,
  BatchDefaults,
  BatchList,
  BatchQuery,
  CancelledBatch,
  CreateBatchRequest,
  CreatedBatch,
  DownloadQuery,
  FileQuery,
  FullBatch,
  ItemRetried,
  LedgerPage,
  Presets,
  ReviewQueue,
  StartRequest,
  TouchUpRequest,
} from './types.ts';

export interface MatteClientOptions {
  /** The server, for example `http://localhost:8080` (no `/v1`). In a browser on the same origin: `location.origin`. */
  baseUrl: string;
  /** An API key (sent as `Authorization: Bearer`). Leave it out in the studio, where the session cookie speaks. */
  apiKey?: string;
  /** Extra headers on every request (the studio's X-CSRF-Token). */
  headers?: Record<string, string>;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of safe requests on 429, 503 and broken connections; `{ retries: 0 }` turns them off. */
  retry?: RetryOptions;
  /**
   * Keeping to the key's request rate from the rate-limit headers of each answer (pacing.ts): a request that would
   * be refused with 429 waits until the window has room. On by default; `{ enabled: false }` turns it off.
   */
  pace?: PaceOptions;
}

/** A photo to add: a File (browsers, or fileFromPath in Node), or bytes or a stream with a name. */
export type PhotoInput = File | { name: string; data: Blob | Uint8Array | ReadableStream<Uint8Array> };

export type Api = Client<paths>;

/** What the heavy tier runs on this server: a stronger model of its own, or none (the light model again). */
export type HeavyModel = 'stronger' | 'none';

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** A new Idempotency-Key (the server accepts 8-128 of A-Za-z0-9._:-). */
export const idempotencyKey = (): string => `matte-${crypto.randomUUID()}`;

export class MatteClient {
  /** Every operation of the API, typed: `client.api.GET('/v1/jobs/{id}', { params: { path: { id } } })`. */
  readonly api: Api;
  readonly baseUrl: string;
  private readonly auth: Record<string, string>;
  private readonly send: (request: Request) => Promise<Response>;

  constructor(options: MatteClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.auth = { ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}), ...options.headers };
    const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.send = retryingFetch(pacedFetch(base, options.pace), options.retry);
    this.api = createClient<paths>({ baseUrl: this.baseUrl, headers: this.auth, fetch: this.send });
  }

  /** The answer's data, or the refusal as MatteApiError. */
  private async ok<T>(answer: Promise<Answer<T>>): Promise<T> {
    const { data, error, response } = await answer;
    if (!response.ok) throw await errorFromResponse(response, error);
    return data as T;
  }

  account(): Promise<Account> {
    return this.ok(this.api.GET('/v1/account'));
  }

  /**
   * The account, and whether this server's heavy tier is a model of its own (the X-Matte-Heavy-Model header of
   * GET /v1/account): `none` means a heavy re-run (2 credits) runs the light model again, with the same cut-out.
   */
  async accountWithTiers(): Promise<{ account: Account; heavyModel: HeavyModel }> {
    const answer = await this.api.GET('/v1/account');
    const account = await this.ok(Promise.resolve(answer));
    return {
      account,
      heavyModel: answer.response.headers.get('x-matte-heavy-model') === 'stronger' ? 'stronger' : 'none',
    };
  }

  presets(): Promise<Presets> {
    return this.ok(this.api.GET('/v1/presets'));
  }

  ledger(query: { limit?: number; before?: string } = {}): Promise<LedgerPage> {
    return this.ok(this.api.GET('/v1/credits/ledger', { params: { query } }));
  }

  listBatches(query: BatchQuery = {}): Promise<BatchList> {
    return this.ok(this.api.GET('/v1/jobs', { params: { query } }));
  }

  /** A batch with every photo. */
  async getBatch(id: string): Promise<FullBatch> {
    return (await this.ok(this.api.GET('/v1/jobs/{id}', { params: { path: { id } } }))) as FullBatch;
  }

  /** Creates an empty batch (draft; nothing charged). Every default has a default. */
  createBatch(body: CreateBatchRequest = {}): Promise<CreatedBatch> {
    return this.ok(this.api.POST('/v1/jobs', { body }));
  }

  /**
   * Adds photos (JPEG, PNG, WebP, or ZIPs of them, sent as they are) to a draft in one request. Streams are
   * read into memory first (a form's parts need their size). Refused files come back in `rejected`.
   * Adding is not repeated on a failure: resending would add the photos twice.
   */
  async addFiles(id: string, photos: Iterable<PhotoInput> | AsyncIterable<PhotoInput>): Promise<AddedItems> {
    const form = new FormData();
    for await (const photo of photos) {
      if (photo instanceof File) form.append('files', photo, photo.name);
      else {
        const blob =
          photo.data instanceof Blob
            ? photo.data
            : photo.data instanceof Uint8Array
              ? new Blob([photo.data as Uint8Array<ArrayBuffer>])
              : await new Response(photo.data).blob();
        form.append('files', blob, photo.name);
      }
    }
    return this.ok(
      this.api.POST('/v1/jobs/{id}/items', {
        params: { path: { id } },
        body: form as never,
        bodySerializer: (body) => body as unknown as FormData,
      }),
    );
  }

  /** Adds photos by link (public http(s) only; fetched by the server). Refusals come back in `rejected`. */
  addUrls(id: string, urls: string[], zipUrl?: string): Promise<AddedItems> {
    return this.ok(this.api.POST('/v1/jobs/{id}/items', { params: { path: { id } }, body: { urls, zipUrl } }));
  }

  /**
   * Charges and starts a draft. It carries an Idempotency-Key (made here unless given), so a retry after a
   * lost answer replays the first one instead of charging twice.
   */
  start(id: string, body: StartRequest = {}, options: { idempotencyKey?: string } = {}): Promise<Batch> {
    return this.ok(
      this.api.POST('/v1/jobs/{id}/start', {
        params: { path: { id }, header: { 'idempotency-key': options.idempotencyKey ?? idempotencyKey() } },
        body,
      }),
    );
  }

  /** Runs the held photos (after a sample or a stop); the rest is charged now. */
  continue(id: string): Promise<Batch> {
    return this.ok(this.api.POST('/v1/jobs/{id}/continue', { params: { path: { id } } }));
  }

  /** Stops a running batch: photos not yet at the model are held and their credits released. */
  cancel(id: string): Promise<CancelledBatch> {
    return this.ok(this.api.POST('/v1/jobs/{id}/cancel', { params: { path: { id } } }));
  }

  async deleteBatch(id: string): Promise<void> {
    await this.ok(this.api.DELETE('/v1/jobs/{id}', { params: { path: { id } } }));
  }

  /** The photos the check flagged (not charged) and the failed ones. */
  review(id: string): Promise<ReviewQueue> {
    return this.ok(this.api.GET('/v1/jobs/{id}/review', { params: { path: { id } } }));
  }

  /** Runs one photo again (light: 1 credit; heavy: 2), reserved at once. */
  retryItem(id: string, itemId: string, tier: 'light' | 'heavy' = 'light'): Promise<ItemRetried> {
    return this.ok(
      this.api.POST('/v1/jobs/{id}/items/{itemId}/retry', { params: { path: { id, itemId } }, body: { tier } }),
    );
  }

  /**
   * Cuts out one photo in one call (POST /v1/images) and answers the image with what the check said of it. A result
   * the check judged broken is answered too, but `flagged` is true and `charged` 0: it was not charged, and
   * GET /v1/jobs/{jobId}/review says why. `scaledFrom` is the upload's size when it was larger than the largest
   * side a cut-out is made at (4096 px): the image is then that much smaller. `processing` when the photo was not
   * done within the server's wait (`timeout`, 5-60 s): follow it with getBatch(jobId).
   */
  async cutOut(
    photo: PhotoInput,
    options: { settings?: BatchDefaults; format?: OutputFormat; timeout?: number; idempotencyKey?: string } = {},
  ): Promise<CutOut> {
    const form = new FormData();
    const data =
      photo instanceof File
        ? photo
        : photo.data instanceof Blob
          ? photo.data
          : photo.data instanceof Uint8Array
            ? new Blob([photo.data as Uint8Array<ArrayBuffer>])
            : await new Response(photo.data).blob();
    form.append('file', data, photo.name);
    if (options.settings) form.append('settings', JSON.stringify(options.settings));
    if (options.format) form.append('format', options.format);
    if (options.timeout) form.append('timeout', String(options.timeout));
    // An Idempotency-Key makes the request safe to send again: a retry after a lost answer is not charged twice.
    const response = await this.raw('/v1/images', {
      method: 'POST',
      body: form,
      headers: { 'idempotency-key': options.idempotencyKey ?? idempotencyKey() },
    });
    if (!response.ok) throw await errorFromResponse(response, undefined);
    if (response.status === 202) {
      const pending = (await response.json()) as { jobId: string; itemId: string };
      return { status: 'processing', jobId: pending.jobId, itemId: pending.itemId };
    }
    const header = (n: string) => response.headers.get(n) ?? '';
    const scaled = /^(\d+)x(\d+)$/.exec(header('x-matte-scaled-from'));
    const review = header('x-matte-review') === 'red' ? 'red' : 'none';
    return {
      status: 'done',
      image: await response.blob(),
      contentType: header('content-type'),
      jobId: header('x-matte-job-id'),
      itemId: header('x-matte-item-id'),
      review,
      flagged: review === 'red',
      charged: Number(header('x-matte-charged') || 0),
      score: header('x-matte-score') === '' ? null : Number(header('x-matte-score')),
      scaledFrom: scaled ? { width: Number(scaled[1]), height: Number(scaled[2]) } : null,
    };
  }

  /**
   * Paints brush strokes on a finished photo's cut-out (free, no model run): `erase` makes what the brush covers
   * transparent, `restore` brings the photo back there; with `snap` (the default) each stroke follows the photo's
   * edges. Points and sizes are in cut-out pixels (`meta.cutout`). Strokes add up over calls; the answer is the
   * batch, whose photo carries `touchUp` and a new `rev`. Not repeated on a failure: strokes would be painted twice.
   */
  touchUp(id: string, itemId: string, body: TouchUpRequest): Promise<FullBatch> {
    return this.ok(
      this.api.POST('/v1/jobs/{id}/items/{itemId}/touch-up', { params: { path: { id, itemId } }, body }),
    ) as Promise<FullBatch>;
  }

  /** Brings back the model's cut-out of a touched-up photo (free); a photo not touched up is left as it is. */
  revertTouchUp(id: string, itemId: string): Promise<FullBatch> {
    return this.ok(
      this.api.DELETE('/v1/jobs/{id}/items/{itemId}/touch-up', { params: { path: { id, itemId } } }),
    ) as Promise<FullBatch>;
  }

  /**
   * The batch's events as they happen: a snapshot first, then `job.*` and `item.*` events, until the batch is
   * done (or stops, with `untilSettled`). Over SSE, reconnecting with Last-Event-ID; where the stream cannot be
   * read, by `?wait=` long-polls.
   */
  follow(id: string, options: FollowOptions = {}): AsyncGenerator<BatchUpdate> {
    return followBatch(this, id, options);
  }

  /** The batch's ZIP of finished photos, as a stream (with the server's file name). */
  async download(
    id: string,
    query: DownloadQuery = {},
  ): Promise<{ stream: ReadableStream<Uint8Array>; fileName: string | undefined }> {
    const { data, error, response } = await this.api.GET('/v1/jobs/{id}/download', {
      params: { path: { id }, query },
      parseAs: 'stream',
    });
    if (!response.ok || !data) throw await errorFromResponse(response, error);
    return { stream: data as ReadableStream<Uint8Array>, fileName: fileNameOf(response) };
  }

  /** One file of a photo (`variant` output by default), as a stream. */
  async file(
    id: string,
    itemId: string,
    query: FileQuery = {},
  ): Promise<{ stream: ReadableStream<Uint8Array>; contentType: string | null }> {
    const { data, error, response } = await this.api.GET('/v1/jobs/{id}/items/{itemId}/file', {
      params: { path: { id, itemId }, query },
      parseAs: 'stream',
    });
    if (!response.ok || !data) throw await errorFromResponse(response, error);
    return { stream: data as ReadableStream<Uint8Array>, contentType: response.headers.get('content-type') };
  }

  /** A request outside the typed operations (the SSE stream), with the client's headers and retries. */
  raw(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.auth)) if (!headers.has(name)) headers.set(name, value);
    return this.send(new Request(`${this.baseUrl}${path}`, { ...init, headers }));
  }
}

function fileNameOf(response: Response): string | undefined {
  const disposition = response.headers.get('content-disposition') ?? '';
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (star) return decodeURIComponent(star[1]);
  return /filename="([^"]+)"/i.exec(disposition)?.[1];
}

/** What cutOut answers: the image and what the check said of it, or that the photo is still running. */
export type CutOut =
  | {
      status: 'done';
      image: Blob;
      contentType: string;
      jobId: string;
      itemId: string;
      review: 'none' | 'red';
      /** The check judged the cut-out broken: it was not charged (`charged` 0), and the image is answered all the same. */
      flagged: boolean;
      charged: number;
      score: number | null;
      /** The upload's size when it was larger than the largest side a cut-out is made at (4096 px). */
      scaledFrom: { width: number; height: number } | null;
    }
  | { status: 'processing'; jobId: string; itemId: string };

export function createMatteClient(options: MatteClientOptions): MatteClient {
  return new MatteClient(options);
}
