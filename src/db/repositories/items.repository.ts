import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { Database, ItemRow, ItemUpdate, JobRow, NewItem } from '../schema.ts';
import type { Dialect } from '../database.ts';
import type { ItemStatus, Stage } from '../../domain/batch.schemas.ts';

export type StatusCounts = Record<string, number>;

export class ItemsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insertMany(rows: NewItem[]): Promise<void> {
    // SQLite caps bound parameters per statement; 50 rows x ~40 columns stays well under it.
    for (let i = 0; i < rows.length; i += 50)
      await this.db
        .insertInto('items')
        .values(rows.slice(i, i + 50))
        .execute();
  }

  async listForJob(jobId: string, since?: number): Promise<ItemRow[]> {
    let query = this.db.selectFrom('items').selectAll().where('job_id', '=', jobId);
    if (since !== undefined) query = query.where('updated_at', '>=', since);
    return query.orderBy('position').execute();
  }

  async findInJob(jobId: string, itemId: string): Promise<ItemRow | undefined> {
    return this.db
      .selectFrom('items')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('id', '=', itemId)
      .executeTakeFirst();
  }

  async findById(id: string): Promise<ItemRow | undefined> {
    return this.db.selectFrom('items').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Reads a photo to settle it; on PostgreSQL the row stays locked until the transaction ends. */
  async findForUpdate(id: string): Promise<ItemRow | undefined> {
    const query = this.db.selectFrom('items').selectAll().where('id', '=', id);
    return (this.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  }

  async countForJob(jobId: string): Promise<number> {
    const row = await this.db
      .selectFrom('items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async maxPosition(jobId: string): Promise<number> {
    const row = await this.db
      .selectFrom('items')
      .select((eb) => eb.fn.max('position').as('p'))
      .where('job_id', '=', jobId)
      .executeTakeFirst();
    return row?.p == null ? 0 : Number(row.p);
  }

  async statusCounts(jobId: string): Promise<{ byStatus: StatusCounts; refunded: number }> {
    const rows = await this.db
      .selectFrom('items')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('refunded').as('r')])
      .where('job_id', '=', jobId)
      .groupBy('status')
      .execute();
    const byStatus: StatusCounts = {};
    let refunded = 0;
    for (const row of rows) {
      byStatus[row.status] = Number(row.n);
      refunded += Number(row.r ?? 0);
    }
    return { byStatus, refunded };
  }

  /** The same change to many photos, in one statement. */
  async updateMany(ids: string[], patch: ItemUpdate): Promise<void> {
    if (ids.length) await this.db.updateTable('items').set(patch).where('id', 'in', ids).execute();
  }

  async update(id: string, patch: ItemUpdate): Promise<void> {
    await this.db.updateTable('items').set(patch).where('id', '=', id).execute();
  }

  /**
   * Moves the photos of a batch from one status to another. Returns the rows as they were before the
   * move (the credits they held are what the caller releases), read in the same transaction.
   */
  async transitionForJob(jobId: string, from: ItemStatus, patch: ItemUpdate, onlyIds?: string[]): Promise<ItemRow[]> {
    let select = this.db.selectFrom('items').selectAll().where('job_id', '=', jobId).where('status', '=', from);
    if (onlyIds) select = select.where('id', 'in', onlyIds.length ? onlyIds : ['']);
    const before = await select.execute();
    if (before.length === 0) return [];
    // A worker may claim one of these between the read and the update (PostgreSQL, read committed):
    // the status guard leaves it alone, and only the rows really moved are returned.
    const moved = await this.db
      .updateTable('items')
      .set(patch)
      .where(
        'id',
        'in',
        before.map((r) => r.id),
      )
      .where('status', '=', from)
      .returning('id')
      .execute();
    const movedIds = new Set(moved.map((r) => r.id));
    return before.filter((r) => movedIds.has(r.id));
  }

  /** Updates a finished photo only while its result is still revision `rev`; false when it changed meanwhile. */
  async updateResult(id: string, rev: number, patch: ItemUpdate): Promise<boolean> {
    const result = await this.db
      .updateTable('items')
      .set(patch)
      .where('id', '=', id)
      .where('status', '=', 'done')
      .where('rev', '=', rev)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * A leased photo enters a stage, and its batch is marked changed at `now` (long-polls and streams answer
   * with the stage). PostgreSQL: one statement (the photo's update in a WITH, the batch's after it); SQLite,
   * whose WITH cannot change rows: two. False when the lease is no longer `owner`'s (nothing changes).
   */
  async markStage(id: string, owner: string, stage: Stage, now: number): Promise<boolean> {
    const photo = (db: QueryCreator<Database>) =>
      db
        .updateTable('items')
        .set({ stage, stage_started_at: now, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'processing')
        .where('lease_owner', '=', owner);
    if (this.dialect === 'postgres') {
      const result = await this.db
        .with('moved', (db) => photo(db).returning('job_id'))
        .updateTable('jobs')
        .set({ updated_at: now })
        .where('id', 'in', (eb) => eb.selectFrom('moved').select('job_id'))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    }
    const moved = await photo(this.db).returning('job_id').executeTakeFirst();
    if (moved) await this.db.updateTable('jobs').set({ updated_at: now }).where('id', '=', moved.job_id).execute();
    return !!moved;
  }

  /** Changes a photo and answers its row as it is afterwards (one statement: RETURNING on both dialects). */
  async updateReturning(id: string, patch: ItemUpdate): Promise<ItemRow> {
    return this.db.updateTable('items').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * Changes a photo only while it is as `as` shows it: processing under this worker's lease, with the same
   * reservation and result revision. Answers the row afterwards, or undefined when any of that changed.
   */
  async updateIfUnchanged(
    as: Pick<ItemRow, 'id' | 'reserved_plan' | 'reserved_pack' | 'rev'>,
    owner: string,
    patch: ItemUpdate,
  ): Promise<ItemRow | undefined> {
    return this.db
      .updateTable('items')
      .set(patch)
      .where('id', '=', as.id)
      .where('status', '=', 'processing')
      .where('lease_owner', '=', owner)
      .where('reserved_plan', '=', as.reserved_plan)
      .where('reserved_pack', '=', as.reserved_pack)
      .where('rev', '=', as.rev)
      .returningAll()
      .executeTakeFirst();
  }

  /** Updates a photo only while this worker still holds its lease; false when the lease was lost. */
  async updateLeased(id: string, owner: string, patch: ItemUpdate): Promise<boolean> {
    const result = await this.db
      .updateTable('items')
      .set(patch)
      .where('id', '=', id)
      .where('status', '=', 'processing')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async deleteIds(jobId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.db
      .deleteFrom('items')
      .where('job_id', '=', jobId)
      .where('id', 'in', ids)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * The queue's claim: leases the oldest pending photo to `owner`, then marks its batch changed (a queued
   * batch becomes running) and answers both rows. PostgreSQL: FOR UPDATE SKIP LOCKED in a CTE, so several
   * worker processes never block on or take the same row; SQLite: a single UPDATE … WHERE id IN (SELECT …
   * LIMIT 1) RETURNING, atomic because SQLite has one writer at a time. Two statements, each its own
   * transaction: the photo's row lock is gone before the batch's row is taken, so a claim never holds one
   * while waiting for the other (a batch's deletion takes them the other way round). No batch: it was
   * deleted between the two.
   */
  async claimNext(
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<{ item: ItemRow; job: JobRow | undefined } | undefined> {
    const lease = now + leaseMs;
    const claim = sql`status = 'processing', lease_owner = ${owner}, lease_expires_at = ${lease},
      attempts = attempts + 1, started_at = ${now}, updated_at = ${now}, stage = 'decode', stage_started_at = ${now}`;
    const result =
      this.dialect === 'postgres'
        ? await sql<ItemRow>`
            with next as (
              select id from items where status = 'pending'
              order by created_at, position limit 1
              for update skip locked
            )
            update items set ${claim} from next where items.id = next.id
            returning items.*`.execute(this.db)
        : await sql<ItemRow>`
            update items set ${claim}
            where id in (select id from items where status = 'pending' order by created_at, position limit 1)
            returning *`.execute(this.db);
    const item = result.rows[0];
    if (!item) return undefined;
    const job = await sql<JobRow>`update jobs set status = case when status = 'queued' then 'running' else status end,
        updated_at = ${now} where id = ${item.job_id} returning *`.execute(this.db);
    return { item, job: job.rows[0] };
  }

  async renewLease(id: string, owner: string, until: number): Promise<boolean> {
    return this.updateLeased(id, owner, { lease_expires_at: until });
  }

  /** Photos waiting for a worker, and when the oldest of them was queued (metrics). */
  async queueStats(): Promise<{ pending: number; oldestPendingAt: number | null }> {
    const row = await this.db
      .selectFrom('items')
      .select((eb) => [eb.fn.countAll<number>().as('pending'), eb.fn.min('updated_at').as('oldest')])
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return { pending: Number(row?.pending ?? 0), oldestPendingAt: row?.oldest == null ? null : Number(row.oldest) };
  }

  async listLeasedBy(owner: string): Promise<ItemRow[]> {
    return this.db
      .selectFrom('items')
      .selectAll()
      .where('status', '=', 'processing')
      .where('lease_owner', '=', owner)
      .execute();
  }

  async listExpiredLeases(now: number, limit: number): Promise<ItemRow[]> {
    return this.db
      .selectFrom('items')
      .selectAll()
      .where('status', '=', 'processing')
      .where('lease_expires_at', '<', now)
      .limit(limit)
      .execute();
  }
}
