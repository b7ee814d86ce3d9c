// The photo worker: claims pending photos from the database queue with a lease, runs the pipeline,
// settles the result. `concurrency` photos are in flight so that one photo's decode and encode
// overlap another's model run; the model itself runs one photo at a time.
import { randomUUID } from 'node:crypto';
import type { Metrics } from '../adapters/metrics.ts';
import type { Logger } from 'pino';
import { PhotoError } from '../errors.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { Claimed, PhotoQueue } from '../services/photo-queue.service.ts';
import { blobKeys, type ResultFiles } from '../services/blob-keys.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import { runPhoto, type PipelineDeps } from '../pipeline/photo-pipeline.ts';
import type { ItemRow, JobRow } from '../db/schema.ts';
import type { HelperThreadPriority } from '../runtime/thread-priority.ts';

export interface WorkerOptions {
  concurrency: number;
  leaseMs: number;
  maxAttempts: number;
  /** How often an idle worker looks for work queued by another process (the bus wakes it at once for its own). */
  idlePollMs?: number;
}

/** Keeps a moving average of photo times for the estimates in batch answers. */
export class ThroughputStats {
  private avg: number;
  constructor(initialMs = 2500) {
    this.avg = initialMs;
  }
  record(ms: number): void {
    this.avg = this.avg * 0.8 + ms * 0.2;
  }
  perImageMs(): number {
    return this.avg;
  }
}

export class PhotoWorker {
  readonly id = `worker-${randomUUID()}`;
  private running = false;
  private readonly slots: Promise<void>[] = [];
  private readonly waiters = new Set<() => void>();
  private unsubscribe: (() => void) | null = null;
  private maintenance: NodeJS.Timeout | null = null;
  /** Photos this worker is running now. */
  private inFlight = 0;

  constructor(
    private readonly deps: {
      queue: PhotoQueue;
      blobs: BlobStore;
      pipeline: PipelineDeps;
      bus: EventBus;
      stats: ThroughputStats;
      priority?: Pick<HelperThreadPriority, 'apply' | 'restore'>;
      metrics?: Metrics;
      log: Logger;
    },
    private readonly opts: WorkerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.deps.bus.onWorkQueued(() => this.wakeAll());
    for (let i = 0; i < this.opts.concurrency; i++) this.slots.push(this.loop());
    this.maintenance = setInterval(() => void this.maintain(), Math.max(1000, Math.floor(this.opts.leaseMs / 2)));
    this.maintenance.unref();
    void this.maintain();
  }

  /** Stops claiming; photos in flight finish (or their lease runs out and another worker takes them). */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    if (this.maintenance) clearInterval(this.maintenance);
    this.wakeAll();
    await Promise.all(this.slots);
  }

  /** Photos this worker still runs go back to the queue now (a stop that cannot wait for them). */
  async handBack(): Promise<number> {
    return this.deps.queue.handBack(this.id);
  }

  private async maintain(): Promise<void> {
    try {
      await this.deps.queue.requeueExpired(this.opts.maxAttempts);
      await this.deps.queue.deleteExpired();
    } catch (err) {
      this.deps.log.error({ err }, 'worker maintenance failed');
    }
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private async idle(ms = this.opts.idlePollMs ?? 1000): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.waiters.add(done);
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      let claimed: Claimed | undefined;
      try {
        claimed = await this.deps.queue.claim(this.id, this.opts.leaseMs);
        failures = 0;
      } catch (err) {
        // The database is away (or the claim failed): wait longer each time, up to 30 s, instead of spinning.
        failures++;
        this.deps.log.error({ err, failures }, 'claiming a photo failed; backing off');
        await this.idle(Math.min(30_000, 1000 * 2 ** Math.min(failures, 5)));
        continue;
      }
      if (!claimed) {
        await this.idle();
        continue;
      }
      await this.process(claimed.item, claimed.job);
    }
  }

  /** Runs a claimed photo; `job` is its batch's row as the claim read it (undefined: the batch is gone). */
  async process(item: ItemRow, job: JobRow | undefined): Promise<void> {
    const log = this.deps.log.child({ jobId: item.job_id, itemId: item.id });
    const { queue, blobs } = this.deps;
    const renew = setInterval(
      () => void queue.renewLease(item, this.id, this.opts.leaseMs).catch(() => undefined),
      Math.floor(this.opts.leaseMs / 3),
    );
    renew.unref();
    this.inFlight++;
    this.prioritise();
    let files: ResultFiles | undefined;
    let cutoutWrite: Promise<void> | undefined;
    try {
      if (!job) return;
      const input = await blobs.get(item.input_blob);
      const settings = item.settings;
      const background = settings.background.mode === 'image' ? await queue.loadBackground(job) : null;
      // This result's own files: named on the row only when the result settles, so a worker that lost
      // its lease never overwrites the files of the run that won.
      const token = randomUUID().slice(0, 13);
      files = {
        cutout: blobKeys.result(item.job_id, item.id, token, 'cutout.png'),
        output: blobKeys.result(item.job_id, item.id, token, 'output'),
        thumb: blobKeys.result(item.job_id, item.id, token, 'thumb.webp'),
      };
      const own = files;
      const result = await runPhoto(
        this.deps.pipeline,
        input,
        settings,
        background,
        {
          onStage: async (stage) => {
            await queue.markStage(item, this.id, stage);
          },
          // The cut-out is stored band by band as it is made, while the photo is checked and the output drawn.
          onCutout: (parts, whole) => (cutoutWrite = blobs.putParts(own.cutout, parts, whole)),
        },
        item.tier,
      );
      // With default settings the output is the cut-out itself: stored once, under both names.
      const outputIsCutout = result.output === result.cutout || result.output.equals(result.cutout);
      await (outputIsCutout ? blobs.copy(files.cutout, files.output) : blobs.put(files.output, result.output));
      const settled = await queue.settleDone(item, this.id, {
        red: result.red,
        quality: result.quality,
        meta: result.meta,
        outputFormat: result.format,
        files,
      });
      this.report(item, settled ? (result.red ? 'flagged' : 'done') : 'dropped', result.meta.timings);
      if (settled) {
        const own = files;
        // The row names them now: nothing below may remove them.
        files = undefined;
        this.deps.stats.record(result.meta.timings?.total ?? 0);
        await queue.forgetFiles(settled.previous, own);
        // The thumbnail after the photo is done, off its answer's path. Until it is stored (or if this
        // fails) the files route makes it from the output (OutputThumbnails). A re-render in these few
        // milliseconds may leave this one behind its row; the batch's prefix delete removes it.
        await blobs
          .put(own.thumb, await result.thumbnail())
          .catch((err: unknown) => log.warn({ err }, 'storing the thumbnail failed; it is made when first asked for'));
        // A batch deleted in the meantime took its files before this one was stored: leave none behind.
        if (!(await queue.getJobRowForWorker(item.job_id)))
          await blobs.deletePrefix(blobKeys.job(item.job_id)).catch(() => undefined);
      } else if (!(await queue.getJobRowForWorker(item.job_id))) {
        // The batch was deleted while the photo ran (its account was deleted): leave no files behind.
        await blobs.deletePrefix(blobKeys.job(item.job_id));
        log.info('batch deleted while the photo ran; result dropped');
      } else {
        await queue.forgetFiles(files);
        log.warn('lease lost before the photo settled; result dropped');
      }
    } catch (err) {
      // Files of this run written before it failed (the cut-out is stored as soon as it exists).
      if (files) {
        await cutoutWrite?.catch(() => undefined);
        await queue.forgetFiles(files);
      }
      const photoError =
        err instanceof PhotoError
          ? err
          : new PhotoError('PROCESSING_FAILED', 'The photo could not be processed; retrying may help.', false);
      if (!(err instanceof PhotoError)) log.error({ err }, 'photo failed');
      else log.info({ code: err.code }, 'photo failed');
      await queue
        .settleFailed(item, this.id, photoError)
        .catch((e: unknown) => log.error({ err: e }, 'recording a failure failed'));
      this.report(item, 'failed', undefined, photoError.code);
    } finally {
      clearInterval(renew);
      this.inFlight--;
      // libvips starts workers while it encodes: lowered now, if another photo still runs, rather than when the next one starts.
      this.prioritise();
    }
  }

  /**
   * One line per photo this process settled, with what an operator needs to follow it across processes
   * (batch, photo, process, attempt, outcome, stage timings), and the same in the metrics.
   */
  private report(
    item: ItemRow,
    outcome: 'done' | 'flagged' | 'failed' | 'dropped',
    timings: Partial<Record<string, number>> | undefined,
    code?: string,
  ): void {
    const { metrics, log } = this.deps;
    log.info(
      {
        jobId: item.job_id,
        itemId: item.id,
        process: this.id,
        pid: process.pid,
        attempt: item.attempts,
        tier: item.tier,
        outcome,
        code,
        timings,
      },
      'photo settled',
    );
    if (!metrics || outcome === 'dropped') return;
    metrics.photos.inc({ outcome, tier: item.tier });
    for (const [stage, ms] of Object.entries(timings ?? {}))
      if (typeof ms === 'number') metrics.stageSeconds.observe({ stage }, ms / 1000);
    if (typeof timings?.inference === 'number')
      metrics.inferenceSeconds.observe({ tier: item.tier }, timings.inference / 1000);
    if (code?.startsWith('REMOTE_')) metrics.remoteErrors.inc({ code });
  }

  /** Helper threads yield to the model while photos overlap, and have their priority back when one runs alone (thread-priority.ts). */
  private prioritise(): void {
    if (this.inFlight >= 2) this.deps.priority?.apply();
    else this.deps.priority?.restore();
  }
}
