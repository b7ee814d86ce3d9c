import type { Kysely } from 'kysely';
import type { AccountRow, ApiKeyRow, Database } from '../schema.ts';
import type { Dialect } from '../database.ts';

export class AccountsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
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

  /** Reads the balances for a change; on PostgreSQL the row stays locked until the transaction ends. */
  async findForUpdate(id: string): Promise<AccountRow | undefined> {
    const query = this.db.selectFrom('accounts').selectAll().where('id', '=', id);
    return (this.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  }

  async setBalances(id: string, plan: number, pack: number): Promise<void> {
    await this.db.updateTable('accounts').set({ plan_credits: plan, pack_credits: pack }).where('id', '=', id).execute();
  }

  async insertKey(row: ApiKeyRow): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  async findKeyByHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
  }

  async listKeys(accountId: string): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').execute();
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
}
