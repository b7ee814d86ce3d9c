import type { Kysely } from 'kysely';
import type { Database, IdempotencyRow, NewIdempotencyRecord } from '../schema.ts';
import type { StoredAnswer } from '../json-columns.ts';
import type { JsonText } from '../json-text.ts';

export class IdempotencyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts an in-progress record; returns the existing one instead when the key was used before. */
  async begin(row: NewIdempotencyRecord): Promise<IdempotencyRow | undefined> {
    const inserted = await this.db
      .insertInto('idempotency_keys')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'scope', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return undefined;
    return this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('account_id', '=', row.account_id)
      .where('scope', '=', row.scope)
      .where('key', '=', row.key)
      .executeTakeFirst();
  }

  /** Takes over an in-progress record whose lock ran out (its process died); true for exactly one caller. */
  async takeOver(
    accountId: string,
    scope: string,
    key: string,
    lockedUntil: number | null,
    newLock: number,
  ): Promise<boolean> {
    let query = this.db
      .updateTable('idempotency_keys')
      .set({ locked_until: newLock })
      .where('account_id', '=', accountId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('state', '=', 'in_progress');
    query =
      lockedUntil === null ? query.where('locked_until', 'is', null) : query.where('locked_until', '=', lockedUntil);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async complete(
    accountId: string,
    scope: string,
    key: string,
    statusCode: number,
    response: JsonText<StoredAnswer>,
  ): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', status_code: statusCode, response, locked_until: null })
      .where('account_id', '=', accountId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  }

  async remove(accountId: string, scope: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', accountId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  }

  async deleteOlderThan(cutoff: number): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).execute();
  }
}
