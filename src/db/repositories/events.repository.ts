// The event log: one row per batch event, numbered per batch and written with the number
// (JobsRepository.numberEvent) in the transaction of the change it announces; deleted with the batch.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import type { JobEvent } from '../../domain/event.schemas.ts';

export class EventsRepository {
  constructor(private readonly db: Kysely<Database>) {}

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
      data: r.data,
    }));
  }
}
