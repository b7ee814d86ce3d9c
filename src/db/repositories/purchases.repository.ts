import type { Kysely, Updateable } from 'kysely';
import type { Database, PurchaseRow, PurchaseTable } from '../schema.ts';
import type { PurchaseStatus } from '../../domain/account-states.ts';

export class PurchasesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: PurchaseRow): Promise<void> {
    await this.db.insertInto('purchases').values(row).execute();
  }

  async findById(id: string): Promise<PurchaseRow | undefined> {
    return this.db.selectFrom('purchases').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(opts: { accountId?: string; status?: PurchaseStatus; limit: number }): Promise<PurchaseRow[]> {
    let query = this.db.selectFrom('purchases').selectAll();
    if (opts.accountId) query = query.where('account_id', '=', opts.accountId);
    if (opts.status) query = query.where('status', '=', opts.status);
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit).execute();
  }

  /** Compare-and-set on status: true when this caller moved the purchase (a purchase completes once). */
  async transition(id: string, from: PurchaseStatus, patch: Updateable<PurchaseTable>): Promise<boolean> {
    const result = await this.db
      .updateTable('purchases')
      .set(patch)
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
