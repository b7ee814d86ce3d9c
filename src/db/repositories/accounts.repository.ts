import type { Insertable, Kysely, QueryCreator, Updateable } from 'kysely';
import type { AccountRow, AccountTable, ApiKeyRow, Database, LedgerTable } from '../schema.ts';
import type { Dialect } from '../database.ts';

export class AccountsRepository {
  /**
   * The accounts this transaction has locked, as they are now (only in a transaction's repositories): the row
   * lock lasts until the transaction ends, so a second lock of one account, as every settlement takes (first
   * for the lock order, then to move its credits), reads nothing again.
   */
  private readonly locked = new Map<string, AccountRow>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly inTransaction = false,
  ) {}

  async insert(row: AccountRow): Promise<void> {
    await this.db.insertInto('accounts').values(row).execute();
  }

  async findById(id: string): Promise<AccountRow | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findByEmail(email: string): Promise<AccountRow | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
  }

  async list(opts: { limit: number; includeDeleted?: boolean }): Promise<AccountRow[]> {
    let query = this.db.selectFrom('accounts').selectAll();
    if (!opts.includeDeleted) query = query.where('deleted_at', 'is', null);
    return query.orderBy('created_at', 'desc').orderBy('id').limit(opts.limit).execute();
  }

  /**
   * Reads the account for a change. PostgreSQL: the row stays locked until the transaction ends, so
   * concurrent starts, settlements and grants of one account queue behind each other. SQLite: the
   * write lock of the transaction serialises them already.
   */
  async findForUpdate(id: string): Promise<AccountRow | undefined> {
    const held = this.locked.get(id);
    if (held) return { ...held };
    const query = this.db.selectFrom('accounts').selectAll().where('id', '=', id);
    const row = await (this.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
    if (row && this.inTransaction) this.locked.set(id, { ...row });
    return row;
  }

  /**
   * An account's credit movement: its new balances and the ledger rows that explain them, written together
   * (one statement on PostgreSQL, the balances' update a data-modifying WITH; two on SQLite).
   */
  async recordMovement(
    id: string,
    balances: { plan: number; pack: number; ledgerClockUs: number },
    rows: Insertable<LedgerTable>[],
  ): Promise<void> {
    const changes = {
      plan_credits: balances.plan,
      pack_credits: balances.pack,
      ledger_clock_us: balances.ledgerClockUs,
    };
    const update = (db: QueryCreator<Database>) => db.updateTable('accounts').set(changes).where('id', '=', id);
    if (this.dialect === 'postgres') await this.db.with('balances', update).insertInto('ledger').values(rows).execute();
    else {
      await update(this.db).execute();
      await this.db.insertInto('ledger').values(rows).execute();
    }
    this.keep(id, changes);
  }

  async setLicense(id: string, licenseId: string | null): Promise<void> {
    await this.db.updateTable('accounts').set({ license_id: licenseId }).where('id', '=', id).execute();
    this.keep(id, { license_id: licenseId });
  }

  async update(id: string, patch: Updateable<AccountTable>): Promise<void> {
    await this.db.updateTable('accounts').set(patch).where('id', '=', id).execute();
    // A patch may hold expressions: the next lock reads the row again (the lock is still held).
    this.locked.delete(id);
  }

  /** A locked row as this transaction changed it. */
  private keep(id: string, changes: Partial<AccountRow>): void {
    const held = this.locked.get(id);
    if (held) this.locked.set(id, { ...held, ...changes });
  }

  async insertKey(row: ApiKeyRow): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
  }

  async findKey(accountId: string, keyId: string): Promise<ApiKeyRow | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', keyId)
      .executeTakeFirst();
  }

  async listKeys(accountId: string): Promise<ApiKeyRow[]> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async countActiveKeys(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async revokeKey(accountId: string, keyId: string, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async revokeAllKeys(accountId: string, at: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async touchKey(keyId: string, at: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
  }
}
