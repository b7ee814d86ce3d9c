import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

export interface StoredEvent {
  id: number;
  event: string;
  at: number;
  jobId: string;
  data: Record<string, unknown>;
}

export class EventsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(event: StoredEvent): Promise<void> {
    await this.db
      .insertInto('job_events')
      .values({ job_id: event.jobId, seq: event.id, event: event.event, at: event.at, data: JSON.stringify(event.data) })
      .execute();
  }

  async listForJob(jobId: string, afterSeq = 0): Promise<StoredEvent[]> {
    const rows = await this.db.selectFrom('job_events').selectAll().where('job_id', '=', jobId).where('seq', '>', afterSeq).orderBy('seq').execute();
    return rows.map((r) => ({ id: Number(r.seq), event: r.event, at: Number(r.at), jobId: r.job_id, data: JSON.parse(r.data) }));
  }
}
