import type { Kysely } from 'kysely';
import type { ClaimRow, Database, NewClaim } from '../schema.ts';

export class ClaimsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: NewClaim): Promise<void> {
    await this.db.insertInto('claims').values(row).execute();
  }

  /** Every report on a batch's photos, oldest first. */
  async listForJob(jobId: string): Promise<ClaimRow[]> {
    return this.db
      .selectFrom('claims')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async listForItem(itemId: string): Promise<ClaimRow[]> {
    return this.db
      .selectFrom('claims')
      .selectAll()
      .where('item_id', '=', itemId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
}
