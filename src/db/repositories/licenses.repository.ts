import type { Kysely, Updateable } from 'kysely';
import type { Database, LicenseRow, LicenseTable } from '../schema.ts';
import type { LicenseStatus } from '../../domain/account-states.ts';

export class LicensesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: LicenseRow): Promise<void> {
    await this.db.insertInto('licenses').values(row).execute();
  }

  async findById(id: string): Promise<LicenseRow | undefined> {
    return this.db.selectFrom('licenses').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findByCodeHash(hash: string): Promise<LicenseRow | undefined> {
    return this.db.selectFrom('licenses').selectAll().where('code_hash', '=', hash).executeTakeFirst();
  }

  async list(opts: { status?: LicenseStatus } = {}): Promise<LicenseRow[]> {
    let query = this.db.selectFrom('licenses').selectAll();
    if (opts.status) query = query.where('status', '=', opts.status);
    return query.orderBy('created_at', 'desc').execute();
  }

  /** Licences whose monthly renewal is due (the maintenance sweep renews them even when nobody signs in). */
  async listDue(now: number, limit: number): Promise<LicenseRow[]> {
    return this.db
      .selectFrom('licenses')
      .selectAll()
      .where('status', '=', 'active')
      .where('next_refresh_at', '<=', now)
      .limit(limit)
      .execute();
  }

  /** Compare-and-set on status when `from` is given: true when this caller moved the licence. */
  async update(id: string, patch: Updateable<LicenseTable>, from?: LicenseStatus): Promise<boolean> {
    let query = this.db.updateTable('licenses').set(patch).where('id', '=', id);
    if (from) query = query.where('status', '=', from);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
