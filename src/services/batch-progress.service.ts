// What follows a photo's change, in the same transaction: the batch's status (a running batch with
// nothing queued or in flight is paused when photos are held, else done or failed), the event log, and
// the webhook delivery of each event the batch's webhook selected. An event and its delivery commit
// with the change they announce, or not at all.
import type { Repos } from '../db/store.ts';
import type { ItemRow, JobRow, JobUpdate } from '../db/schema.ts';
import type { StatusCounts } from '../db/repositories/items.repository.ts';
import type { EventName, JobStatus, WebhookEvents } from '../domain/batch.schemas.ts';
import type { ItemEventData, JobEvent, JobEventData } from '../domain/event.schemas.ts';
import { newId } from '../ids.ts';
import { ACTIVE_JOB_STATUSES } from '../domain/batch-rules.ts';
import { countItems, itemView } from './job-view.ts';
import { jsonText } from '../db/json-text.ts';

export class BatchProgress {
  /** `resultTtlMs`: a finished batch is deleted this long after it finished. */
  constructor(private readonly resultTtlMs: number) {}

  /**
   * After photos settle: a running batch with nothing queued or in flight is paused (photos held) or finished.
   * @param jobOrId the batch, or its row as this transaction last read or wrote it
   */
  async settleJobStatus(r: Repos, jobOrId: string | (JobRow & { unfinished?: number }), now: number): Promise<void> {
    const job = typeof jobOrId === 'string' ? await r.jobs.findById(jobOrId) : jobOrId;
    const jobId = typeof jobOrId === 'string' ? jobOrId : jobOrId.id;
    if (!job || !ACTIVE_JOB_STATUSES.includes(job.status)) return;
    // A row read with its event's number says already whether photos are still to run.
    if (typeof jobOrId !== 'string' && jobOrId.unfinished !== undefined && jobOrId.unfinished > 0) return;
    const counted = await r.items.statusCounts(jobId);
    const n = (s: string) => counted.byStatus[s] ?? 0;
    if (n('pending') + n('processing') > 0) return;
    if (n('held') > 0) {
      await this.recordJobEvent(r, jobId, 'job.paused', now, { status: 'paused' }, counted);
      return;
    }
    const status = n('done') === 0 && n('failed') > 0 ? 'failed' : 'done';
    await this.recordJobEvent(
      r,
      jobId,
      'job.done',
      now,
      { status, finished_at: now, expires_at: now + this.resultTtlMs },
      counted,
    );
  }

  /**
   * A batch's change of status and the event that announces it: the batch's update (`change`, marked changed
   * at `now`), the event's number and the event itself in one statement on PostgreSQL.
   * @param counted the batch's photos counted by status in this transaction, when the caller has them
   */
  async recordJobEvent(
    r: Repos,
    jobId: string,
    event: EventName,
    now: number,
    change: JobUpdate & { status: JobStatus },
    counted?: { byStatus: StatusCounts; refunded: number },
  ): Promise<void> {
    const { byStatus, refunded } = counted ?? (await r.items.statusCounts(jobId));
    const counts = countItems(byStatus, refunded);
    const data: JobEventData = {
      status: change.status,
      counts,
      downloadUrl: counts.done > 0 ? `/v1/jobs/${jobId}/download` : null,
      reviewUrl: `/v1/jobs/${jobId}/review`,
      continueUrl: change.status === 'paused' && counts.held > 0 ? `/v1/jobs/${jobId}/continue` : null,
    };
    const job = await r.jobs.numberEvent(jobId, now, { event, data }, change);
    await this.deliver(r, job, { id: job.event_seq, event, at: now, jobId, data });
  }

  /**
   * A photo's event, from its row as the caller just wrote it; the batch is marked changed at `now` in the
   * statement that numbers the event. Returns the batch's row as it is afterwards.
   */
  async recordItemEvent(
    r: Repos,
    row: ItemRow,
    event: EventName,
    now: number,
  ): Promise<JobRow & { unfinished: number }> {
    const item = itemView(row);
    const data: ItemEventData = {
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
    };
    // Numbered and written in one statement; its webhook delivery, where there is one, after.
    const job = await r.jobs.numberEvent(row.job_id, now, { event, data });
    await this.deliver(r, job, { id: job.event_seq, event, at: now, jobId: job.id, data });
    return job;
  }

  /** The event's webhook delivery, where the batch has a webhook for it. */
  private async deliver(r: Repos, job: JobRow, payload: JobEvent): Promise<void> {
    const { event, at: now } = payload;
    if (job.webhook_url && selects(job.webhook_events, event)) {
      await r.deliveries.insert({
        id: newId('dlv'),
        job_id: job.id,
        event_seq: payload.id,
        event,
        url: job.webhook_url,
        payload: jsonText(payload),
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
      });
    }
  }
}

/** webhook_events: "all" or an array of event names (null: no webhook). */
function selects(webhookEvents: WebhookEvents | null, event: EventName): boolean {
  return webhookEvents === 'all' || (webhookEvents?.includes(event) ?? false);
}
