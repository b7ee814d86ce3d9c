// What follows a photo's change, in the same transaction: the batch's status (a running batch with
// nothing queued or in flight is paused when photos are held, else done or failed) and the event log.
import type { Repos } from '../db/store.ts';
import type { EventName } from '../domain/batch.schemas.ts';
import { ACTIVE_JOB_STATUSES } from '../domain/batch-rules.ts';
import { countItems, itemView } from './job-view.ts';

export class BatchProgress {
  /** `resultTtlMs`: a finished batch is deleted this long after it finished. */
  constructor(private readonly resultTtlMs: number) {}

  /** After photos settle: a running batch with nothing queued or in flight is paused (photos held) or finished. */
  async settleJobStatus(r: Repos, jobId: string, now: number): Promise<void> {
    const job = await r.jobs.findById(jobId);
    if (!job || !ACTIVE_JOB_STATUSES.includes(job.status)) return;
    const { byStatus } = await r.items.statusCounts(jobId);
    const n = (s: string) => byStatus[s] ?? 0;
    if (n('pending') + n('processing') > 0) return;
    if (n('held') > 0) {
      await r.jobs.update(jobId, { status: 'paused', updated_at: now });
      await this.recordJobEvent(r, jobId, 'job.paused', now);
      return;
    }
    const status = n('done') === 0 && n('failed') > 0 ? 'failed' : 'done';
    await r.jobs.update(jobId, { status, finished_at: now, expires_at: now + this.resultTtlMs, updated_at: now });
    await this.recordJobEvent(r, jobId, 'job.done', now);
  }

  async recordJobEvent(r: Repos, jobId: string, event: EventName, now: number): Promise<void> {
    const job = (await r.jobs.findById(jobId))!;
    const { byStatus, refunded } = await r.items.statusCounts(jobId);
    const counts = countItems(byStatus, refunded);
    const seq = await r.jobs.nextEventSeq(jobId);
    await r.events.insert({
      id: seq,
      event,
      at: now,
      jobId,
      data: {
        status: job.status,
        counts,
        downloadUrl: counts.done > 0 ? `/v1/jobs/${jobId}/download` : null,
        reviewUrl: `/v1/jobs/${jobId}/review`,
        continueUrl: job.status === 'paused' && counts.held > 0 ? `/v1/jobs/${jobId}/continue` : null,
      },
    });
  }

  async recordItemEvent(r: Repos, itemId: string, event: EventName, now: number): Promise<void> {
    const row = (await r.items.findById(itemId))!;
    const item = itemView(row);
    const seq = await r.jobs.nextEventSeq(row.job_id);
    await r.events.insert({
      id: seq,
      event,
      at: now,
      jobId: row.job_id,
      data: {
        itemId: item.id,
        name: item.name,
        status: item.status,
        review: item.review,
        score: item.quality?.score ?? null,
        credits: item.credits,
        attempts: item.attempts,
        error: item.error ?? null,
        outputUrl: item.outputUrl ?? null,
        thumbUrl: item.thumbUrl ?? null,
        inputThumbUrl: item.inputThumbUrl ?? null,
      },
    });
  }
}
