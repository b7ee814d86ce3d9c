// A seller's touch-up of a finished photo (beyond the spec): erase and restore strokes painted on its cut-out,
// snapping to the photo's edges (imaging/touch-up.mjs), and the way back to the model's cut-out. Free: the
// ledger does not move and the model does not run.
//
// The touched-up cut-out becomes the photo's cut-out: its output, thumbnail, previews, re-renders (apply) and
// the batch ZIP follow it. The model's cut-out is kept beside it (`model_cutout_blob`): the check's verdict,
// reports and the charge stay the model's, and a revert brings it back. Like a re-render, a touch-up writes
// files of its own and makes them current with a compare-and-set on the photo's `rev`; one that lost a race
// (a re-run, a re-render, another touch-up) is painted again on what won, so strokes are never lost or applied
// twice, and nothing is half-applied.
import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../errors.ts';
import type { Store } from '../db/store.ts';
import type { ItemRow, JobRow } from '../db/schema.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { ImageDecoder } from '../adapters/images/decoder.ts';
import type { ImageRenderer } from '../adapters/images/renderer.ts';
import type { CheckRasters } from '../adapters/images/rasters.ts';
import type { TouchedUp } from '../imaging/cutout-writer.ts';
import {
  paintedArea,
  photoWindow,
  SNAP_DEFAULTS,
  strokesWindow,
  type PhotoWindow,
  type SnapOptions,
} from '../imaging/touch-up.mjs';
import type { BBox, Job } from '../domain/batch.schemas.ts';
import { MAX_TOUCH_UP_POINTS, type Stroke, type TouchUpRequest } from '../domain/touch-up.schemas.ts';
import type { StoredTouchUp } from '../domain/touch-up.schemas.ts';
import { checkRendered, drawCutout } from '../pipeline/photo-pipeline.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import { blobKeys, resultFiles } from './blob-keys.ts';
import { storedMeta } from './job-view.ts';
import { jsonText } from '../db/json-text.ts';

/** Paints strokes on a cut-out off the event loop (the cut-out writer's threads). */
export interface CutoutPainter {
  touchUp(
    cutout: { png: Buffer; width: number; height: number },
    photo: PhotoWindow,
    strokes: Stroke[],
    snap: SnapOptions | null,
  ): Promise<TouchedUp>;
}

/** How often a touch-up that lost the race for the photo is painted again on what won. */
const ATTEMPTS = 3;

/**
 * The most a request's stroke runs may work over, in multiples of the cut-out: each run of strokes of one mode is
 * painted over its own bounds, so a request alternating erase and restore across the photo would cost as many
 * passes over it as it has runs.
 */
const MAX_PAINTED_CUTOUTS = 64;

export class TouchUpService {
  constructor(
    private readonly deps: {
      store: Store;
      blobs: BlobStore;
      decoder: ImageDecoder;
      renderer: ImageRenderer;
      rasters: CheckRasters;
      painter: CutoutPainter;
      queries: BatchQueries;
      bus: EventBus;
      clock: () => number;
    },
  ) {}

  async touchUp(accountId: string, jobId: string, itemId: string, request: TouchUpRequest): Promise<Job> {
    const points = request.strokes.reduce((sum, s) => sum + s.points.length, 0);
    if (points > MAX_TOUCH_UP_POINTS)
      throw new AppError(
        'VALIDATION',
        `A touch-up carries at most ${MAX_TOUCH_UP_POINTS.toLocaleString('en')} points; this one has ${points.toLocaleString('en')}. Send the strokes in several requests.`,
        { errors: [{ path: 'body/strokes', message: `more than ${MAX_TOUCH_UP_POINTS} points in all` }] },
      );
    const snap = request.snap === false ? null : SNAP_DEFAULTS;
    const job = await this.deps.queries.requireJob(accountId, jobId);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const item = await this.finished(jobId, itemId);
      const size = storedMeta(item).cutout ?? { width: item.source_width, height: item.source_height };
      if (paintedArea(request.strokes, size.width, size.height, snap) > MAX_PAINTED_CUTOUTS * size.width * size.height)
        throw new AppError(
          'VALIDATION',
          'These strokes switch between erase and restore too often across the photo for one request; send them in several.',
          { errors: [{ path: 'body/strokes', message: 'too many runs of erase and restore over the photo' }] },
        );
      const files = resultFiles(item);
      const [input, cutout] = await Promise.all([
        this.deps.blobs.get(item.input_blob),
        this.deps.blobs.get(files.cutout),
      ]);
      // The photo at the cut-out's size, of which only the strokes' window goes to the painting thread.
      const photo = await this.deps.decoder.decode(input);
      if (photo.width !== size.width || photo.height !== size.height)
        throw new Error(
          `photo ${item.id}: its cut-out is ${size.width}x${size.height}, its photo ${photo.width}x${photo.height}`,
        );
      const window = photoWindow(photo, strokesWindow(request.strokes, size.width, size.height, snap));
      const painted = await this.deps.painter.touchUp({ png: cutout, ...size }, window, request.strokes, snap);
      const state: StoredTouchUp = {
        strokes: (item.touch_up?.strokes ?? 0) + request.strokes.length,
        updatedAt: this.deps.clock(),
        modelBbox: item.touch_up ? item.touch_up.modelBbox : (storedMeta(item).bbox ?? null),
      };
      const next = { cutout: painted.png, bbox: painted.bbox, touchUp: state };
      if (await this.makeCurrent(job, item, next)) return this.changed(accountId, jobId);
    }
    throw changedMeanwhile(itemId);
  }

  /** Brings back the model's cut-out; a photo that is not touched up is left as it is. */
  async revert(accountId: string, jobId: string, itemId: string): Promise<Job> {
    const job = await this.deps.queries.requireJob(accountId, jobId);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const item = await this.finished(jobId, itemId);
      if (!item.model_cutout_blob || !item.touch_up) return this.deps.queries.getJob(accountId, jobId);
      const cutout = await this.deps.blobs.get(item.model_cutout_blob);
      if (await this.makeCurrent(job, item, { cutout, bbox: item.touch_up.modelBbox, touchUp: null }))
        return this.changed(accountId, jobId);
    }
    throw changedMeanwhile(itemId);
  }

  /** The photo, finished with an output; 404 when it is not this batch's, 409 NOT_DONE when not finished. */
  private async finished(jobId: string, itemId: string): Promise<ItemRow> {
    const item = await this.deps.store.repos.items.findInJob(jobId, itemId);
    if (!item) throw notFound('photo');
    if (item.status !== 'done' || item.output_format === null)
      throw new AppError(
        'CONFLICT',
        `Photo ${item.name} is ${item.status}; only a finished photo's cut-out can be touched up.`,
        { reason: 'NOT_DONE', jobId, itemId },
      );
    return item;
  }

  /**
   * Renders the photo's output from `next.cutout` with its own settings, stores the files, and makes them the
   * photo's if it is still as it was read (its `rev`). `touchUp` null: the cut-out is the model's again.
   * False when the photo changed meanwhile (the files written here are removed).
   */
  private async makeCurrent(
    job: JobRow,
    item: ItemRow,
    next: { cutout: Buffer; bbox: BBox | null; touchUp: StoredTouchUp | null },
  ): Promise<boolean> {
    const { blobs, renderer } = this.deps;
    const meta = storedMeta(item);
    const size = meta.cutout ?? (await this.deps.decoder.size(next.cutout));
    const settings = item.settings;
    const background =
      settings.background.mode === 'image' && job.background_blob ? await blobs.get(job.background_blob) : null;
    const drawn = await drawCutout(this.deps, next.cutout, size, next.bbox, settings, background);
    const { rendered, compliance } = await checkRendered(this.deps, drawn, size, next.bbox, settings);
    const token = randomUUID().slice(0, 13);
    const previous = resultFiles(item);
    // A touch-up writes a cut-out of its own; a revert makes the model's current again.
    const cutoutKey = next.touchUp ? blobKeys.result(item.job_id, item.id, token, 'cutout.png') : previous.modelCutout!;
    const written = {
      output: blobKeys.result(item.job_id, item.id, token, 'output'),
      thumb: blobKeys.result(item.job_id, item.id, token, 'thumb.webp'),
      ...(next.touchUp ? { cutout: cutoutKey } : {}),
    };
    await Promise.all([
      blobs.put(written.output, rendered.output),
      written.cutout ? blobs.put(written.cutout, next.cutout) : undefined,
    ]);
    const done = await this.deps.store.repos.items.updateResult(item.id, item.rev, {
      cutout_blob: cutoutKey,
      // The model's cut-out stays where it is while touch-ups follow one another.
      model_cutout_blob: next.touchUp ? (previous.modelCutout ?? previous.cutout) : null,
      touch_up: next.touchUp ? jsonText(next.touchUp) : null,
      output_format: rendered.format,
      output_blob: written.output,
      thumb_blob: written.thumb,
      meta: jsonText({
        ...meta,
        output: {
          width: rendered.width,
          height: rendered.height,
          format: rendered.format,
          bytes: rendered.output.length,
        },
        bbox: next.bbox,
        compliance,
      }),
      rev: item.rev + 1,
      updated_at: this.deps.clock(),
    });
    // Whichever files lost are removed: the photo's old output and thumbnail, and an old touched-up cut-out
    // (never the model's), or what this request wrote.
    const stale = done
      ? [previous.output, previous.thumb, ...(previous.modelCutout ? [previous.cutout] : [])]
      : Object.values(written);
    const kept = new Set(done ? [cutoutKey, previous.modelCutout ?? previous.cutout] : []);
    await Promise.all(stale.filter((key) => !kept.has(key)).map((key) => blobs.delete(key).catch(() => undefined)));
    // The thumbnail after the answer, off its path (80 ms of a 2000x2000 touch-up's 220): until it is stored the
    // files route makes it from the output (OutputThumbnails), as after a model run.
    if (done)
      void renderer
        .thumbnail(rendered.output)
        .then((thumb) => blobs.put(written.thumb, thumb))
        // Changed again meanwhile (another touch-up, a revert): this thumbnail must not stay behind its row.
        .then(() => this.deps.store.repos.items.findById(item.id))
        .then((now) => (now && resultFiles(now).thumb === written.thumb ? undefined : blobs.delete(written.thumb)))
        .catch(() => undefined);
    return done;
  }

  private async changed(accountId: string, jobId: string): Promise<Job> {
    await this.deps.store.repos.jobs.update(jobId, { updated_at: this.deps.clock() });
    this.deps.bus.jobChanged(jobId);
    return this.deps.queries.getJob(accountId, jobId);
  }
}

function changedMeanwhile(itemId: string): AppError {
  return new AppError('CONFLICT', 'The photo kept changing while it was touched up; read it again and retry.', {
    reason: 'CHANGED',
    itemId,
  });
}
