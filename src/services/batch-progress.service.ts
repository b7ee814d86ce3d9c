// What follows a photo's change, in the same transaction: the batch's status (a running batch with
// nothing queued or in flight is paused when photos are held, else done or failed), the event log, and
// the webhook delivery of each event the batch's webhook selected. An event and its delivery commit
// with the change they announce, or not at all.
import type { Repos } from '../db/store.ts';
import type { ItemRow, JobRow } from '../db/schema.ts';
import type { EventName, WebhookEvents } from '../domain/batch.schemas.ts';
import type { ItemEventData, JobEvent, JobEventData } from '../domain/event.schemas.ts';
import { newId } from '../ids.ts';
import { ACTIVE_JOB_STATUSES } from '../domain/batch-rules.ts';
import { countItems, itemView } from './job-view.ts';
import { jsonText, readJson, type JsonText } from '../db/json-text.ts';

export class BatchProgress {
  /** `resultTtlMs`: a finished batch is deleted this long after it finished. */
  constructor(private readonly resultTtlMs: number) {}

  /**
   * After photos settle: a running batch with nothing queued or in flight is paused (photos held) or finished.
   * @param jobOrId the batch, or its row as this transaction last read or wrote it
   */
  async settleJobStatus(r: Repos, jobOrId: string | JobRow, now: number): Promise<void> {
    const job = typeof jobOrId === 'string' ? await r.jobs.findById(jobOrId) : jobOrId;
    const jobId = typeof jobOrId === 'string' ? jobOrId : jobOrId.id;
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

  /** A batch's event; the batch is marked changed at `now` in the statement that numbers the event. */
  async recordJobEvent(r: Repos, jobId: string, event: EventName, now: number): Promise<void> {
    const job = await r.jobs.nextEventSeq(jobId, now);
    const { byStatus, refunded } = await r.items.statusCounts(jobId);
    const counts = countItems(byStatus, refunded);
    const data: JobEventData = {
      status: job.status,
      counts,
      downloadUrl: counts.done > 0 ? `/v1/jobs/${jobId}/download` : null,
      reviewUrl: `/v1/jobs/${jobId}/review`,
      continueUrl: job.status === 'paused' && counts.held > 0 ? `/v1/jobs/${jobId}/continue` : null,
    };
    await this.write(r, job, event, now, data);
  }

  /**
   * A photo's event, from its row as the caller just wrote it; the batch is marked changed at `now` in the
   * statement that numbers the event. Returns the batch's row as it is afterwards.
   */
  async recordItemEvent(r: Repos, row: ItemRow, event: EventName, now: number): Promise<JobRow> {
    const job = await r.jobs.nextEventSeq(row.job_id, now);
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
    await this.write(r, job, event, now, data);
    return job;
  }

  /**
   * The event numbered `job.event_seq` (the batch's row as nextEventSeq returned it), and its webhook delivery
   * where the batch has a webhook for it.
   */
  private async write(
    r: Repos,
    job: JobRow,
    event: EventName,
    now: number,
    data: JobEventData | ItemEventData,
  ): Promise<void> {
    const payload: JobEvent = { id: job.event_seq, event, at: now, jobId: job.id, data };
    await r.events.insert(payload);
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
function selects(webhookEvents: JsonText<WebhookEvents> | null, event: EventName): boolean {
  if (!webhookEvents) return false;
  const selected = readJson(webhookEvents);
  return selected === 'all' || selected.includes(event);
}
