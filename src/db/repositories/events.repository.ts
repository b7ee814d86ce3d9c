// The event log: one row per batch event, numbered per batch (jobs.event_seq hands out the numbers),
// written in the transaction of the change it announces and deleted with the batch.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import type { JobEvent } from '../../domain/event.schemas.ts';
import { jsonText, readJson } from '../json-text.ts';

export class EventsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(event: JobEvent): Promise<void> {
    await this.db
      .insertInto('job_events')
      .values({
        job_id: event.jobId,
        seq: event.id,
        event: event.event,
        at: event.at,
        data: jsonText(event.data),
      })
      .execute();
  }

  /** Events after `afterSeq`, in order; at most `limit`. */
  async listForJob(jobId: string, afterSeq = 0, limit = 1000): Promise<JobEvent[]> {
    const rows = await this.db
      .selectFrom('job_events')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.seq),
      event: r.event,
      at: Number(r.at),
      jobId: r.job_id,
      data: readJson(r.data),
    }));
  }
}
