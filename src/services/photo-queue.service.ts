// The worker's side of a batch: the queue is the items table. A worker claims a pending photo with a
// lease, marks its stages, and settles it (done: charged or refunded; failed: released). Photos whose
// worker died are queued again; finished batches are deleted when their results expire.
import { PhotoError } from '../errors.ts';
import type { Store, Repos } from '../db/store.ts';
import type { ItemRow, JobRow } from '../db/schema.ts';
import type { ImageFormat, Quality, Stage, StoredItemMeta } from '../domain/batch.schemas.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { CreditsService } from './credits.service.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import type { BatchProgress } from './batch-progress.service.ts';
import { blobKeys, resultFiles, type ResultFiles } from './blob-keys.ts';
import { lockAccount } from './locks.ts';
import { jsonText } from '../db/json-text.ts';

/** A claimed photo and its batch's row as the claim left it (undefined: the batch was deleted meanwhile). */
export type Claimed = { item: ItemRow; job: JobRow | undefined };

export class PhotoQueue {
  constructor(
    private readonly deps: {
      store: Store;
      blobs: BlobStore;
      credits: CreditsService;
      bus: EventBus;
      clock: () => number;
      progress: BatchProgress;
      resultTtlMs: number;
    },
  ) {}

  async claimNext(owner: string, leaseMs: number): Promise<ItemRow | undefined> {
    return (await this.claim(owner, leaseMs))?.item;
  }

  /** The next photo for `owner`, with its batch's row as the claim left it (undefined: the batch is gone). */
  async claim(owner: string, leaseMs: number): Promise<Claimed | undefined> {
    const claimed = await this.deps.store.repos.items.claimNext(owner, this.deps.clock(), leaseMs);
    if (claimed) this.deps.bus.jobChanged(claimed.item.job_id);
    return claimed;
  }

  async markStage(item: ItemRow, owner: string, stage: Stage): Promise<boolean> {
    const now = this.deps.clock();
    const ok = await this.deps.store.repos.items.markStage(item.id, owner, stage, now);
    if (ok) this.deps.bus.photoMoved(item.job_id);
    return ok;
  }

  async renewLease(item: ItemRow, owner: string, leaseMs: number): Promise<boolean> {
    return this.deps.store.repos.items.renewLease(item.id, owner, this.deps.clock() + leaseMs);
  }

  /**
   * Records a finished photo. Only the lease holder may settle: a worker whose lease expired (and
   * whose photo was queued again) settles nothing, so a photo is never charged twice.
   */
  async settleDone(
    item: ItemRow,
    owner: string,
    outcome: { red: boolean; quality: Quality; meta: StoredItemMeta; outputFormat: ImageFormat; files: ResultFiles },
  ): Promise<{ previous: ResultFiles } | null> {
    const now = this.deps.clock();
    const settled = await this.deps.store.transaction(async (r) => {
      await lockAccount(r, item.account_id);
      // The photo as this worker claimed it is the photo as it is, while the worker holds its lease and its
      // reservation and revision are unchanged: one conditional update, under the account's lock, reads and
      // settles it (the charge below is taken from what the update matched).
      const row = await r.items.updateIfUnchanged(item, owner, {
        status: 'done',
        review: outcome.red ? 'red' : 'none',
        refunded: outcome.red ? 1 : 0,
        charged: outcome.red ? 0 : item.reserved_plan + item.reserved_pack,
        charged_plan: outcome.red ? 0 : item.reserved_plan,
        charged_pack: outcome.red ? 0 : item.reserved_pack,
        reserved_plan: 0,
        reserved_pack: 0,
        quality: jsonText(outcome.quality),
        meta: jsonText(outcome.meta),
        output_format: outcome.outputFormat,
        cutout_blob: outcome.files.cutout,
        output_blob: outcome.files.output,
        thumb_blob: outcome.files.thumb,
        // A new result of the model: a touch-up of the one before is gone with it (forgetFiles removes its files).
        model_cutout_blob: null,
        touch_up: null,
        rev: item.rev + 1,
        error_code: null,
        error_message: null,
        error_input_fault: null,
        stage: null,
        lease_owner: null,
        lease_expires_at: null,
        finished_at: now,
        updated_at: now,
      });
      if (!row) return null;
      const previous = resultFiles(item);
      if (outcome.red) await this.deps.credits.release(r, item, now, 'flagged by the automatic check');
      else await this.deps.credits.commit(r, item, now);
      // The event's statement marks the batch changed; its row then decides whether the batch is finished.
      const job = await this.deps.progress.recordItemEvent(
        r,
        row,
        outcome.red ? 'item.needs_review' : 'item.done',
        now,
      );
      await this.deps.progress.settleJobStatus(r, job, now);
      return { previous };
    });
    this.deps.bus.jobChanged(item.job_id);
    return settled;
  }

  /** Removes files no result points at any more (best effort: a file left behind goes with its batch). */
  async forgetFiles(files: ResultFiles, keep?: ResultFiles): Promise<void> {
    const kept = new Set(keep ? Object.values(keep) : []);
    await Promise.all(
      Object.values(files)
        .filter((key) => !kept.has(key))
        .map((key) => this.deps.blobs.delete(key).catch(() => undefined)),
    );
  }

  /**
   * A photo is settled once: the worker finishing it and the sweep failing it after its lease ran out
   * may meet. Both lock the account, then the photo row, and check its state under those locks.
   */
  private async lockForSettling(r: Repos, item: Pick<ItemRow, 'id' | 'account_id'>): Promise<ItemRow | undefined> {
    await lockAccount(r, item.account_id);
    return r.items.findForUpdate(item.id);
  }

  async settleFailed(item: ItemRow, owner: string | null, error: PhotoError): Promise<boolean> {
    const now = this.deps.clock();
    const settled = await this.deps.store.transaction(async (r) => {
      const current = await this.lockForSettling(r, item);
      if (!current || current.status !== 'processing' || (owner !== null && current.lease_owner !== owner))
        return false;
      await this.deps.credits.release(r, current, now, `photo failed: ${error.code}`);
      const row = await r.items.updateReturning(item.id, {
        status: 'failed',
        error_code: error.code,
        error_message: error.message,
        error_input_fault: error.inputFault ? 1 : 0,
        reserved_plan: 0,
        reserved_pack: 0,
        stage: null,
        lease_owner: null,
        lease_expires_at: null,
        finished_at: now,
        updated_at: now,
      });
      const job = await this.deps.progress.recordItemEvent(r, row, 'item.failed', now);
      await this.deps.progress.settleJobStatus(r, job, now);
      return true;
    });
    this.deps.bus.jobChanged(item.job_id);
    return settled;
  }

  /** Photos whose worker died: queued again, or failed once they used up their attempts. Never charged twice. */
  async requeueExpired(maxAttempts: number): Promise<number> {
    const now = this.deps.clock();
    const expired = await this.deps.store.repos.items.listExpiredLeases(now, 100);
    for (const item of expired) {
      if (item.attempts >= maxAttempts) {
        await this.settleFailed(
          item,
          item.lease_owner,
          new PhotoError('PROCESSING_FAILED', 'The photo could not be processed; retrying may help.', false),
        );
        continue;
      }
      const owner = item.lease_owner ?? '';
      const requeued = await this.deps.store.repos.items.updateLeased(item.id, owner, {
        status: 'pending',
        lease_owner: null,
        lease_expires_at: null,
        stage: null,
        updated_at: now,
      });
      if (requeued) this.deps.bus.jobChanged(item.job_id);
    }
    if (expired.length) this.deps.bus.workQueued();
    return expired.length;
  }

  /**
   * A stopping worker's photos, queued again at once instead of when their leases run out. The attempt
   * it used is given back: the photo was not at fault.
   */
  async handBack(owner: string): Promise<number> {
    const now = this.deps.clock();
    const mine = await this.deps.store.repos.items.listLeasedBy(owner);
    let n = 0;
    for (const item of mine) {
      const requeued = await this.deps.store.repos.items.updateLeased(item.id, owner, {
        status: 'pending',
        lease_owner: null,
        lease_expires_at: null,
        stage: null,
        attempts: Math.max(0, item.attempts - 1),
        updated_at: now,
      });
      if (requeued) {
        n++;
        this.deps.bus.jobChanged(item.job_id);
      }
    }
    if (n) this.deps.bus.workQueued();
    return n;
  }

  /** Results live two hours: batches past their expiry are deleted, rows and files. */
  async deleteExpired(): Promise<number> {
    const expired = await this.deps.store.repos.jobs.listExpired(this.deps.clock(), 50);
    for (const job of expired) {
      await this.deps.store.repos.jobs.delete(job.id);
      await this.deps.blobs.deletePrefix(blobKeys.job(job.id));
      this.deps.bus.jobChanged(job.id);
    }
    return expired.length;
  }

  /**
   * POST /v1/images gave up waiting for a photo that never started: its reservation is released, the
   * photo fails as CANCELLED and the one-photo batch ends `cancelled`. False when the photo had started.
   */
  async abandonUnstarted(jobId: string, itemId: string): Promise<boolean> {
    const now = this.deps.clock();
    const abandoned = await this.deps.store.transaction(async (r) => {
      const [item] = await r.items.transitionForJob(
        jobId,
        'pending',
        {
          status: 'failed',
          error_code: 'CANCELLED',
          error_message: 'The photo did not start in time and was cancelled; nothing was charged.',
          error_input_fault: 0,
          reserved_plan: 0,
          reserved_pack: 0,
          finished_at: now,
          updated_at: now,
        },
        [itemId],
      );
      if (!item) return false;
      await this.deps.credits.release(r, item, now, 'photo did not start before the timeout');
      await r.jobs.update(jobId, {
        status: 'cancelled',
        finished_at: now,
        expires_at: now + this.deps.resultTtlMs,
        updated_at: now,
      });
      return true;
    });
    if (abandoned) this.deps.bus.jobChanged(jobId);
    return abandoned;
  }

  async getJobRowForWorker(jobId: string): Promise<JobRow | undefined> {
    return this.deps.store.repos.jobs.findById(jobId);
  }

  async loadBackground(job: Pick<JobRow, 'background_blob'>): Promise<Buffer | null> {
    return job.background_blob ? this.deps.blobs.get(job.background_blob) : null;
  }
}
