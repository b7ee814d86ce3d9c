// Filling a draft: each photo (a file, a ZIP entry or a link) is checked (format, pixel limit, a full
// decode for its thumbnail) and stored, or lands in `rejected` with its reason. The batch limit and the
// key's hourly photo budget are enforced in the transaction that records the photos.
import os from 'node:os';
import { AppError, errorCode, PhotoError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Store, Repos } from '../db/store.ts';
import type { NewItem } from '../db/schema.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { Job, Rejected } from '../domain/batch.schemas.ts';
import { MAX_PHOTOS_PER_BATCH } from '../domain/batch-rules.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import { blobKeys } from './blob-keys.ts';
import { lockAccount } from './locks.ts';
import { PHOTO_REFUSALS } from '../domain/photo-refusals.ts';
import { jsonText } from '../db/json-text.ts';

/** Photos checked at once while an upload is received (about one per core). */
const INTAKE_PARALLELISM = Math.max(2, Math.min(4, os.availableParallelism()));

/** What intake needs from the image codec: a header check and a thumbnail (a full decode, which catches truncated files). */
export interface PhotoInspector {
  probe(data: Buffer): Promise<{ format: string; width: number; height: number }>;
  thumbnail(data: Buffer): Promise<Buffer>;
}

export type PhotoSource =
  /**
   * `decoded`: the caller decodes the photo anyway (POST /v1/images) and this settles with that decode.
   * Intake then takes it as the check that the file is whole, and makes no thumbnail: the input
   * thumbnail is made when it is first asked for (InputThumbnails).
   */
  | { name: string; data: Buffer; decoded?: Promise<void> }
  | { name: string; reason: string }
  | { name: string; entries: () => AsyncIterable<{ name: string; data: Buffer } | { name: string; reason: string }> };

/** The caller's hourly photo budget (see RateLimitService). */
interface PhotoBudget {
  limit: number;
  /** Photos that may still be added: intake refuses the rest without decoding them. */
  remaining: number;
  /** Takes up to `n` photos inside the transaction that adds them; returns how many fit. */
  take(r: Repos, n: number): Promise<{ granted: number }>;
}

export interface AddPhotosOptions {
  /** Photos the batch may hold (the account licence's batch limit; default 200). */
  maxPhotos?: number;
  budget?: PhotoBudget;
}

const batchFull = (max: number) => `The batch already holds ${max} photos, the most a batch takes.`;
const OVER_BUDGET = 'Over the hourly photo budget';
const overBudget = (limit: number) =>
  `${OVER_BUDGET} of this key (${limit} photos an hour); add it again later (see X-Matte-Photos-Reset).`;
/** True for the `rejected` reason of a photo refused because the hourly budget was spent. */
export const isOverBudget = (reason: string) => reason.startsWith(OVER_BUDGET);

export class IntakeService {
  constructor(
    private readonly deps: {
      store: Store;
      blobs: BlobStore;
      inspector: PhotoInspector;
      bus: EventBus;
      clock: () => number;
      queries: BatchQueries;
    },
  ) {}

  /**
   * Adds photos to a draft. Each source is checked (format, pixel limit, a full decode for the input
   * thumbnail); what fails lands in `rejected` with a reason and the rest is added.
   */
  async addPhotos(
    accountId: string,
    jobId: string,
    sources: AsyncIterable<PhotoSource> | PhotoSource[],
    opts: AddPhotosOptions = {},
  ): Promise<Job & { added: number }> {
    const { store, blobs, inspector } = this.deps;
    const maxPhotos = opts.maxPhotos ?? MAX_PHOTOS_PER_BATCH;
    const budget = opts.budget;
    let acceptedHere = 0;
    const job = await this.deps.queries.requireJob(accountId, jobId);
    if (job.status !== 'draft')
      throw new AppError('NOT_DRAFT', 'Photos can only be added before the batch is started.');
    const settings = job.options.defaults;
    let count = await store.repos.items.countForJob(jobId);
    let position = await store.repos.items.maxPosition(jobId);
    const rejected: Rejected[] = [];
    const rows: NewItem[] = [];
    const overflow: NewItem[] = [];

    type Commit = () => Promise<unknown> | unknown;
    /**
     * Checking a photo (a full decode for its thumbnail) is the slow part of intake: photos are checked
     * INTAKE_PARALLELISM at a time while the upload goes on, and recorded one by one in upload order,
     * so positions, the batch limit and `rejected` come out as if checked in turn.
     */
    const pending: { candidate: boolean; result: Promise<Commit> }[] = [];
    const commitOldest = async () => {
      const commit = await pending.shift()!.result;
      await commit();
    };
    const enqueue = async (candidate: boolean, result: Promise<Commit>) => {
      pending.push({ candidate, result });
      while (pending.length >= INTAKE_PARALLELISM) await commitOldest();
    };
    const reject = (name: string, reason: string) =>
      enqueue(
        false,
        Promise.resolve(() => rejected.push({ name, reason })),
      );

    /** `shown` names the photo in `rejected`: a ZIP entry is shown as archive/path. */
    const accept = async (name: string, data: Buffer, shown = name, decoded?: Promise<void>) => {
      // Near a limit, finish the photos in flight first: one of them may yet be rejected.
      const inFlight = pending.filter((p) => p.candidate).length;
      if (count + inFlight >= maxPhotos || (budget && acceptedHere + inFlight >= budget.remaining))
        while (pending.length) await commitOldest();
      if (count >= maxPhotos) return reject(shown, batchFull(maxPhotos));
      if (budget && acceptedHere >= budget.remaining) return reject(shown, overBudget(budget.limit));
      // The header check first: it refuses an oversized image before anything is decoded.
      const check = async (): Promise<Buffer | null> =>
        decoded ? decoded.then(() => null) : inspector.thumbnail(data);
      const inspected = inspector
        .probe(data)
        .then(async (info) => ({ info, thumb: await check() }))
        .then(
          ({ info, thumb }): Commit =>
            () =>
              record(name, data, info, thumb),
          (err: unknown): Commit =>
            () =>
              rejected.push({
                name: shown,
                reason: err instanceof PhotoError ? err.message : PHOTO_REFUSALS.unreadable,
              }),
        );
      await enqueue(true, inspected);
    };

    const record = async (
      name: string,
      data: Buffer,
      info: { format: string; width: number; height: number },
      thumb: Buffer | null,
    ) => {
      const itemId = newId('img');
      const now = this.deps.clock();
      try {
        await blobs.put(blobKeys.input(jobId, itemId), data);
        if (thumb) await blobs.put(blobKeys.inputThumb(jobId, itemId), thumb);
      } catch (err) {
        await blobs.deletePrefix(`${blobKeys.job(jobId)}/${itemId}`).catch(() => undefined);
        throw storageError(err);
      }
      count++;
      acceptedHere++;
      rows.push({
        id: itemId,
        job_id: jobId,
        account_id: accountId,
        position: ++position,
        name,
        status: 'held',
        sample: 0,
        tier: 'light',
        settings: jsonText(settings),
        input_blob: blobKeys.input(jobId, itemId),
        input_bytes: data.length,
        source_width: info.width,
        source_height: info.height,
        source_format: info.format,
        error_code: null,
        error_message: null,
        error_input_fault: null,
        review: 'none',
        refunded: 0,
        reserved_plan: 0,
        reserved_pack: 0,
        charged: 0,
        rev: 0,
        attempts: 0,
        stage: null,
        quality: null,
        meta: null,
        output_format: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        started_at: null,
        stage_started_at: null,
        finished_at: null,
      });
    };

    try {
      for await (const source of sources) {
        if ('reason' in source) await reject(source.name, source.reason);
        else if ('data' in source) await accept(source.name, source.data, source.name, source.decoded);
        else {
          for await (const entry of source.entries()) {
            if ('reason' in entry) await reject(`${source.name}/${entry.name}`, entry.reason);
            else await accept(entry.name, entry.data, `${source.name}/${entry.name}`);
          }
        }
      }
      while (pending.length) await commitOldest();

      await store.transaction(async (r) => {
        await lockAccount(r, accountId);
        const current = await this.deps.queries.requireJob(accountId, jobId, r);
        if (current.status !== 'draft')
          throw new AppError('NOT_DRAFT', 'The batch was started while the photos were uploading.');
        // Another upload to this batch may have landed while these photos were checked: count again.
        const room = Math.max(0, maxPhotos - (await r.items.countForJob(jobId)));
        for (const row of rows.splice(room)) {
          overflow.push(row);
          rejected.push({ name: row.name, reason: batchFull(maxPhotos) });
        }
        // The hourly budget is spent in the transaction that adds the photos: two uploads at once can
        // never both take its last photos. What does not fit is refused like any other photo.
        const granted = budget ? (await budget.take(r, rows.length)).granted : rows.length;
        for (const row of rows.splice(granted)) {
          overflow.push(row);
          rejected.push({ name: row.name, reason: overBudget(budget!.limit) });
        }
        await r.items.insertMany(rows);
        await r.jobs.update(jobId, {
          rejected: jsonText([...current.rejected, ...rejected]),
          updated_at: this.deps.clock(),
        });
      });
    } catch (err) {
      // Nothing half-written: the rows never landed, so their files go too.
      await Promise.all([...rows, ...overflow].map((row) => blobs.deletePrefix(`${blobKeys.job(jobId)}/${row.id}`)));
      throw err;
    }
    await Promise.all(overflow.map((row) => blobs.deletePrefix(`${blobKeys.job(jobId)}/${row.id}`)));
    this.deps.bus.jobChanged(jobId);
    const view = await this.deps.queries.getJob(accountId, jobId);
    return { ...view, added: rows.length };
  }
}

function storageError(err: unknown): AppError {
  const code = errorCode(err);
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return new AppError('STORAGE_FULL', 'The data volume is full; nothing was added.');
  return new AppError('UPLOAD_FAILED', 'Storing the photos failed; nothing was added. Retry the same request.');
}
