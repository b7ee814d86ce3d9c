import type { Kysely } from 'kysely';
import type { Database, LedgerRow } from '../schema.ts';

export class LedgerRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Newest first; `beforeUs` is exclusive. Ledger times are unique per account, so pages never overlap. */
  async list(accountId: string, opts: { limit: number; beforeUs?: number; jobId?: string }): Promise<LedgerRow[]> {
    let query = this.db.selectFrom('ledger').selectAll().where('account_id', '=', accountId);
    if (opts.beforeUs !== undefined) query = query.where('at_us', '<', opts.beforeUs);
    if (opts.jobId !== undefined) query = query.where('job_id', '=', opts.jobId);
    return query.orderBy('at_us', 'desc').orderBy('id', 'desc').limit(opts.limit).execute();
  }

  async listForAccount(accountId: string): Promise<LedgerRow[]> {
    return this.db
      .selectFrom('ledger')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('at_us')
      .orderBy('id')
      .execute();
  }

  /** Sum of signed movements per pool: must equal the account's balances. */
  async sums(accountId: string): Promise<{ plan: number; pack: number }> {
    const rows = await this.db
      .selectFrom('ledger')
      .select(['pool', (eb) => eb.fn.sum<number>('amount').as('total')])
      .where('account_id', '=', accountId)
      .groupBy('pool')
      .execute();
    const out = { plan: 0, pack: 0 };
    for (const row of rows) out[row.pool] = Number(row.total);
    return out;
  }
}
