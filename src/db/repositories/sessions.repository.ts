import type { Kysely } from 'kysely';
import type { Database, SessionRow } from '../schema.ts';

export class SessionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: SessionRow): Promise<void> {
    await this.db.insertInto('sessions').values(row).execute();
  }

  async find(id: string, now: number): Promise<SessionRow | undefined> {
    return this.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  async deleteForAccount(accountId: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('account_id', '=', accountId).execute();
  }

  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  }
}
