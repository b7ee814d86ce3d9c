// POST /v1/images: a one-photo batch created, started and waited for in one request.
import { AppError, PhotoError } from '../errors.ts';
import type { ItemRow } from '../db/schema.ts';
import type { ImageFormat, JobDefaults, Optimize } from '../domain/batch.schemas.ts';
import type { RenderService } from './render.service.ts';
import type { BatchService } from './batch.service.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import type { PhotoQueue } from './photo-queue.service.ts';
import { isOverBudget, type AddPhotosOptions, type IntakeService, type PhotoInspector } from './intake.service.ts';
import type { PreparedInputs } from '../pipeline/prepared-inputs.ts';
import { storedFormat } from './job-view.ts';
import { PHOTO_REFUSALS } from '../domain/photo-refusals.ts';

export type ImageOutcome =
  { state: 'done'; jobId: string; item: ItemRow } | { state: 'processing'; jobId: string; item: ItemRow };

export class ImageService {
  constructor(
    private readonly deps: {
      batches: BatchService;
      intake: IntakeService;
      queries: BatchQueries;
      queue: PhotoQueue;
      render: RenderService;
      inspector: PhotoInspector;
      clock: () => number;
      /** Set when this process runs the photo worker: the photo is decoded while it is stored and queued. */
      prepared?: PreparedInputs;
    },
  ) {}

  /** `encoding`: the format and encoding to store the output in (default: what the settings give, as rendered). */
  async process(
    accountId: string,
    input: {
      name: string;
      data: Buffer;
      settings?: JobDefaults;
      timeoutMs: number;
      encoding?: { format?: ImageFormat; optimize: Optimize };
    },
    intake: AddPhotosOptions = {},
  ): Promise<ImageOutcome> {
    const { batches, intake: photos, queries, queue, clock } = this.deps;
    const deadline = clock() + input.timeoutMs;
    // Input at fault is refused before anything exists or is charged.
    try {
      await this.deps.inspector.probe(input.data);
    } catch (err) {
      if (err instanceof PhotoError) throw new AppError('PROCESSING_FAILED', err.message, { reason: err.code }, 422);
      throw err;
    }
    // Decoded while the batch is made: that decode is also the intake's check that the file is whole.
    const decoded = this.deps.prepared?.prepare(input.data);
    const job = await batches
      .createJob(accountId, { defaults: input.settings, origin: 'image', name: input.name.slice(0, 120) }, null)
      .catch((err: unknown) => {
        this.deps.prepared?.drop(input.data);
        throw err;
      });
    try {
      const added = await photos.addPhotos(
        accountId,
        job.id,
        [{ name: input.name, data: input.data, decoded }],
        intake,
      );
      if (added.added === 0) {
        const reason = added.rejected[0]?.reason ?? PHOTO_REFUSALS.unreadable;
        // Another request spent the last of the hourly budget while this photo was checked.
        if (isOverBudget(reason)) throw new AppError('RATE_LIMITED', reason, { retryAfter: 60 });
        throw new AppError('PROCESSING_FAILED', reason, { reason: 'INVALID_IMAGE' }, 422);
      }
      await batches.start(accountId, job.id, {});
    } catch (err) {
      // Nothing was charged: the draft goes away with whatever was refused.
      this.deps.prepared?.drop(input.data);
      await batches.deleteJob(accountId, job.id).catch(() => undefined);
      throw err;
    }
    const itemId = (await queries.getJob(accountId, job.id)).items[0].id;

    for (;;) {
      const item = await queries.getItem(accountId, job.id, itemId);
      if (item.status === 'done') {
        const encoding = input.encoding;
        const stored = encoding
          ? await this.deps.render.encodeAs(item, encoding.format ?? storedFormat(item), encoding.optimize)
          : item;
        return { state: 'done', jobId: job.id, item: stored };
      }
      if (item.status === 'failed') {
        const inputFault = item.error_input_fault === 1;
        throw new AppError(
          'PROCESSING_FAILED',
          item.error_message ?? 'The photo could not be processed.',
          { reason: item.error_code ?? 'PROCESSING_FAILED', jobId: job.id, itemId },
          inputFault ? 422 : 503,
        );
      }
      const remaining = deadline - clock();
      if (remaining <= 0) {
        if (item.status === 'pending' && (await queue.abandonUnstarted(job.id, itemId))) {
          throw new AppError('TIMEOUT', 'The photo did not start before the timeout; its reservation was released.', {
            reason: 'NOT_STARTED',
            jobId: job.id,
            itemId,
          });
        }
        return { state: 'processing', jobId: job.id, item: await queries.getItem(accountId, job.id, itemId) };
      }
      await queries.waitForChange(accountId, job.id, item.updated_at + 1, remaining);
    }
  }
}
