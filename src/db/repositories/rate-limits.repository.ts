import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import type { Dialect } from '../database.ts';
import type { RateWindows } from '../json-columns.ts';
import { jsonText } from '../json-text.ts';

export class RateLimitsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * The subject's windows, its row created if missing and locked until the transaction ends: one
   * statement when the row exists (every request after a subject's first, within the windows).
   */
  async lock(subject: string, now: number): Promise<RateWindows> {
    const query = this.db.selectFrom('rate_limits').select('windows').where('subject', '=', subject);
    const locked = () => (this.dialect === 'postgres' ? query.forUpdate() : query);
    const row = await locked().executeTakeFirst();
    if (row) return row.windows;
    // Two first requests at once: one inserts, the other's insert does nothing; both then lock the one row.
    await this.db
      .insertInto('rate_limits')
      .values({ subject, windows: jsonText({}), updated_at: now })
      .onConflict((oc) => oc.column('subject').doNothing())
      .execute();
    return (await locked().executeTakeFirstOrThrow()).windows;
  }

  async read(subject: string): Promise<RateWindows | undefined> {
    const row = await this.db
      .selectFrom('rate_limits')
      .select('windows')
      .where('subject', '=', subject)
      .executeTakeFirst();
    return row?.windows;
  }

  /**
   * Compare-and-set without a lock: writes `windows` only if the row still holds `before` (undefined: only if
   * there is no row yet), compared as the text jsonText() makes of it, which is the stored text of what was
   * read back. False when another request changed it first: read again and retry.
   */
  async replaceIf(
    subject: string,
    before: RateWindows | undefined,
    windows: RateWindows,
    now: number,
  ): Promise<boolean> {
    if (before === undefined) {
      const inserted = await this.db
        .insertInto('rate_limits')
        .values({ subject, windows: jsonText(windows), updated_at: now })
        .onConflict((oc) => oc.column('subject').doNothing())
        .returning('subject')
        .executeTakeFirst();
      return inserted !== undefined;
    }
    const result = await this.db
      .updateTable('rate_limits')
      .set({ windows: jsonText(windows), updated_at: now })
      .where('subject', '=', subject)
      .where(sql<boolean>`windows = ${jsonText(before)}`)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async save(subject: string, windows: RateWindows, now: number): Promise<void> {
    await this.db
      .updateTable('rate_limits')
      .set({ windows: jsonText(windows), updated_at: now })
      .where('subject', '=', subject)
      .execute();
  }

  /** Rows untouched for longer than the longest window hold nothing that still counts. */
  async deleteIdleSince(cutoff: number): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('updated_at', '<', cutoff).execute();
  }
}
