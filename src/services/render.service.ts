// Re-rendering finished photos from their stored cut-outs (apply) and trying settings on one photo
// (preview). Never a model call, never a charge: the ledger does not move.
//
// apply renders each photo outside any transaction into files of its own, then makes them current
// with a compare-and-set on the photo's `rev`: a photo re-run or re-rendered meanwhile keeps the
// other change, and the files rendered here are removed. Each photo is applied on its own; the answer
// is the batch after all of them.
import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../errors.ts';
import type { Store } from '../db/store.ts';
import type { ItemRow, JobRow } from '../db/schema.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import { exportKeepsStored } from '../domain/export-rules.ts';
import type { ImageDecoder } from '../adapters/images/decoder.ts';
import type { ImageRenderer } from '../adapters/images/renderer.ts';
import type { CheckRasters } from '../adapters/images/rasters.ts';
import type { Compliance, ImageFormat, Job, Optimize, Settings } from '../domain/batch.schemas.ts';
import { findPreset } from '../presets/presets.ts';
import type { ApplyRequest, PreviewRequest } from '../domain/render.schemas.ts';
import { checkRendered, drawCutout, type Drawn } from '../pipeline/photo-pipeline.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import { blobKeys, resultFiles } from './blob-keys.ts';
import { patchSettings } from './settings.ts';
import { storedFormat, storedMeta } from './job-view.ts';
import { jsonText } from '../db/json-text.ts';

export class RenderService {
  constructor(
    private readonly deps: {
      store: Store;
      blobs: BlobStore;
      decoder: ImageDecoder;
      renderer: ImageRenderer;
      rasters: CheckRasters;
      queries: BatchQueries;
      bus: EventBus;
      clock: () => number;
    },
  ) {}

  async apply(
    accountId: string,
    jobId: string,
    request: ApplyRequest,
    image: Buffer | null,
  ): Promise<{ job: Job; applied: number; skipped: number }> {
    const job = await this.deps.queries.requireJob(accountId, jobId);
    const items = await this.select(jobId, request.itemIds);
    if (image) await this.deps.decoder.probe(image).catch((err: unknown) => badBackground(err));
    const hasBackgroundImage = image !== null || job.background_blob !== null;
    // Every photo's new settings are checked before anything is rendered: a bad patch changes nothing.
    const planned = items.map((item) => ({
      item,
      settings: patchSettings(item.settings, request.settings, {
        hasBackgroundImage,
        path: 'body/settings',
      }),
    }));
    let background = image;
    if (image) {
      const key = `${blobKeys.background(jobId)}-${randomUUID().slice(0, 8)}`;
      await this.deps.blobs.put(key, image);
      await this.deps.store.repos.jobs.update(jobId, { background_blob: key, updated_at: this.deps.clock() });
      if (job.background_blob) await this.deps.blobs.delete(job.background_blob).catch(() => undefined);
    } else if (planned.some((p) => p.settings.background.mode === 'image')) {
      background = await this.deps.blobs.get(job.background_blob!);
    }

    let applied = 0;
    for (const { item, settings } of planned) if (await this.applyOne(item, settings, background)) applied++;
    await this.deps.store.repos.jobs.update(jobId, { updated_at: this.deps.clock() });
    this.deps.bus.jobChanged(jobId);
    return { job: await this.deps.queries.getJob(accountId, jobId), applied, skipped: planned.length - applied };
  }

  async preview(accountId: string, jobId: string, itemId: string, request: PreviewRequest): Promise<Drawn> {
    const job = await this.deps.queries.requireJob(accountId, jobId);
    const [item] = await this.select(jobId, [itemId]);
    const settings = patchSettings(item.settings, request.settings ?? {}, {
      hasBackgroundImage: job.background_blob !== null,
      path: 'body/settings',
    });
    const rendered = await this.render(item, settings, await this.backgroundFor(job, settings));
    if (!request.format || request.format === rendered.format) return rendered;
    const output = await this.deps.renderer.convert(rendered.output, request.format, 'off');
    return { ...rendered, output, format: request.format };
  }

  /**
   * Stores a finished photo's output in another format or encoding (POST /v1/images with `format` or
   * `optimize`): what is stored, and behind its fileUrl, is what was asked for. Returns the row as it
   * is afterwards; unchanged when nothing needs converting or the photo changed meanwhile.
   */
  async encodeAs(item: ItemRow, format: ImageFormat, optimize: Optimize): Promise<ItemRow> {
    const stored = storedFormat(item);
    const maxBytes = findPreset(item.settings.presetId)?.maxBytes;
    const files = resultFiles(item);
    const meta = storedMeta(item);
    // Known from the photo's meta without reading the file: the answer is the stored output (the common case).
    const bytes = meta.output?.bytes;
    if (bytes !== undefined && exportKeepsStored(stored, bytes, format, optimize, maxBytes)) return item;
    const before = await this.deps.blobs.get(files.output);
    const output = await this.deps.renderer.exportOutput(before, stored, format, optimize, maxBytes);
    if (output === before) return item;
    const key = blobKeys.result(item.job_id, item.id, randomUUID().slice(0, 13), 'output');
    await this.deps.blobs.put(key, output);
    const written = {
      output_format: format,
      output_blob: key,
      meta: {
        ...meta,
        output: {
          ...(meta.output ?? { width: item.source_width, height: item.source_height }),
          format,
          bytes: output.length,
        },
      },
      rev: item.rev + 1,
      updated_at: this.deps.clock(),
    };
    const done = await this.deps.store.repos.items.updateResult(item.id, item.rev, {
      ...written,
      meta: jsonText(written.meta),
    });
    await this.deps.blobs.delete(done ? files.output : key).catch(() => undefined);
    return done ? { ...item, ...written } : item;
  }

  /** The photos named (all must be finished), or every finished photo; 409 NOT_DONE when there is none. */
  private async select(jobId: string, itemIds: string[] | undefined): Promise<ItemRow[]> {
    const items = await this.deps.store.repos.items.listForJob(jobId);
    if (!itemIds) {
      const done = items.filter(isRendered);
      if (!done.length)
        throw new AppError('CONFLICT', 'No photo of this batch has finished yet.', { reason: 'NOT_DONE', jobId });
      return done;
    }
    const byId = new Map(items.map((i) => [i.id, i]));
    return itemIds.map((id) => {
      const item = byId.get(id);
      if (!item) throw notFound('photo');
      if (!isRendered(item))
        throw new AppError(
          'CONFLICT',
          `Photo ${item.name} is ${item.status}; only finished photos are rendered again.`,
          { reason: 'NOT_DONE', jobId, itemId: id },
        );
      return item;
    });
  }

  private async backgroundFor(job: JobRow, settings: Settings): Promise<Buffer | null> {
    return settings.background.mode === 'image' && job.background_blob
      ? this.deps.blobs.get(job.background_blob)
      : null;
  }

  /** Draws the photo from its stored cut-out and checks it against its preset; no thumbnail. */
  private async render(
    item: ItemRow,
    settings: Settings,
    background: Buffer | null,
  ): Promise<Drawn & { compliance?: Compliance }> {
    const meta = storedMeta(item);
    const cutout = await this.deps.blobs.get(resultFiles(item).cutout);
    const size = meta.cutout ?? (await this.deps.decoder.size(cutout));
    const drawn = await drawCutout(this.deps, cutout, size, meta.bbox ?? null, settings, background);
    const { rendered, compliance } = await checkRendered(this.deps, drawn, size, meta.bbox ?? null, settings);
    return {
      output: rendered.output,
      format: rendered.format,
      width: rendered.width,
      height: rendered.height,
      compliance,
    };
  }

  private async applyOne(item: ItemRow, settings: Settings, background: Buffer | null): Promise<boolean> {
    const rendered = await this.render(item, settings, background);
    const thumb = await this.deps.renderer.thumbnail(rendered.output);
    const token = randomUUID().slice(0, 13);
    const files = {
      output: blobKeys.result(item.job_id, item.id, token, 'output'),
      thumb: blobKeys.result(item.job_id, item.id, token, 'thumb.webp'),
    };
    await Promise.all([this.deps.blobs.put(files.output, rendered.output), this.deps.blobs.put(files.thumb, thumb)]);
    const meta = storedMeta(item);
    const now = this.deps.clock();
    const done = await this.deps.store.repos.items.updateResult(item.id, item.rev, {
      settings: jsonText(settings),
      output_format: rendered.format,
      output_blob: files.output,
      thumb_blob: files.thumb,
      meta: jsonText({
        ...meta,
        output: {
          width: rendered.width,
          height: rendered.height,
          format: rendered.format,
          bytes: rendered.output.length,
        },
        presetId: settings.presetId,
        compliance: rendered.compliance,
      }),
      rev: item.rev + 1,
      updated_at: now,
    });
    const previous = resultFiles(item);
    // Whichever files lost are removed; the cut-out stays (it is the photo's, not the render's).
    const stale = done ? [previous.output, previous.thumb] : [files.output, files.thumb];
    await Promise.all(
      stale.filter((key) => key !== previous.cutout).map((key) => this.deps.blobs.delete(key).catch(() => undefined)),
    );
    return done;
  }
}

function isRendered(item: ItemRow): boolean {
  return item.status === 'done' && item.output_format !== null;
}

function badBackground(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  throw new AppError('VALIDATION', `The background image is not usable: ${message}`, {
    errors: [{ path: 'body/image', message }],
  });
}
