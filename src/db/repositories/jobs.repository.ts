import { sql, type Kysely, type QueryCreator } from 'kysely';
import type { Database, JobRow, JobUpdate, NewJob } from '../schema.ts';
import type { Dialect } from '../database.ts';
import { jsonText } from '../json-text.ts';
import type { JobEvent } from '../../domain/event.schemas.ts';
import { ACTIVE_JOB_STATUSES } from '../../domain/batch-rules.ts';
import type { EventName, JobStatus } from '../../domain/batch.schemas.ts';
import type { StatusCounts } from './items.repository.ts';

export class JobsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(row: NewJob): Promise<void> {
    await this.db.insertInto('jobs').values(row).execute();
  }

  /** Every read is scoped to the account: another account's batch does not exist. */
  async findForAccount(accountId: string, id: string): Promise<JobRow | undefined> {
    return this.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /**
   * The account's batch with its photos counted by status (and the refunded ones), in one statement: what a
   * summary needs. Undefined when the account has no such batch.
   */
  async findForAccountWithCounts(
    accountId: string,
    id: string,
  ): Promise<{ job: JobRow; byStatus: StatusCounts; refunded: number } | undefined> {
    const rows = await this.db
      .selectFrom('jobs')
      .leftJoin('items', 'items.job_id', 'jobs.id')
      .selectAll('jobs')
      .select([
        'items.status as item_status',
        (eb) => eb.fn.count<number>('items.id').as('item_count'),
        (eb) => eb.fn.sum<number>('items.refunded').as('item_refunded'),
      ])
      .where('jobs.id', '=', id)
      .where('jobs.account_id', '=', accountId)
      .groupBy(['jobs.id', 'items.status'])
      .execute();
    if (!rows.length) return undefined;
    const { item_status, item_count, item_refunded, ...job } = rows[0];
    const byStatus: StatusCounts = {};
    let refunded = 0;
    for (const row of rows) {
      if (row.item_status === null) continue; // a batch without photos: one row, no status
      byStatus[row.item_status] = Number(row.item_count);
      refunded += Number(row.item_refunded ?? 0);
    }
    return { job, byStatus, refunded };
  }

  /** Names and origins of the account's batches among `ids` (unknown ids and others' batches are left out). */
  async labels(accountId: string, ids: string[]): Promise<{ id: string; name: string | null; origin: string }[]> {
    if (!ids.length) return [];
    return this.db
      .selectFrom('jobs')
      .select(['id', 'name', 'origin'])
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
  }

  async findById(id: string): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(accountId: string, opts: { limit: number; status?: JobStatus; before?: number }): Promise<JobRow[]> {
    let query = this.db.selectFrom('jobs').selectAll().where('account_id', '=', accountId);
    if (opts.status) query = query.where('status', '=', opts.status);
    if (opts.before !== undefined) query = query.where('created_at', '<', opts.before);
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit).execute();
  }

  async listIdsForAccount(accountId: string): Promise<string[]> {
    return (await this.db.selectFrom('jobs').select('id').where('account_id', '=', accountId).execute()).map(
      (row) => row.id,
    );
  }

  async update(id: string, patch: JobUpdate): Promise<void> {
    await this.db.updateTable('jobs').set(patch).where('id', '=', id).execute();
  }

  /** Compare-and-set on status: true when this caller moved the batch. */
  async transition(id: string, from: readonly JobStatus[], patch: JobUpdate): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set(patch)
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('jobs').where('id', '=', id).execute();
  }

  async countActive(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('status', 'in', [...ACTIVE_JOB_STATUSES])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listExpired(now: number, limit: number): Promise<JobRow[]> {
    return this.db.selectFrom('jobs').selectAll().where('expires_at', '<=', now).limit(limit).execute();
  }

  /**
   * Hands out the batch's next event id (counting up from 1) and writes the event under it, with the batch's
   * own change (`patch`: say its new status) and marked changed at `now`: one statement on PostgreSQL (the
   * update and the event's insert are data-modifying WITHs), two on SQLite. Answers the batch's row as it is
   * afterwards (its `event_seq` is the event's id) with how many of its photos are still to run
   * (`unfinished`: pending or processing), so a photo's settlement knows without counting again whether the
   * batch may have finished.
   */
  async numberEvent(
    id: string,
    now: number,
    event: { event: EventName; data: JobEvent['data'] },
    patch: JobUpdate = {},
  ): Promise<JobRow & { unfinished: number }> {
    const numbered = (db: QueryCreator<Database>) =>
      db
        .updateTable('jobs')
        .set((eb) => ({ ...patch, event_seq: eb('event_seq', '+', 1), updated_at: now }))
        .where('id', '=', id)
        .returningAll()
        .returning((eb) =>
          eb
            .selectFrom('items')
            .select((count) => count.fn.countAll<number>().as('n'))
            .whereRef('items.job_id', '=', 'jobs.id')
            .where('items.status', 'in', ['pending', 'processing'])
            .as('unfinished'),
        );
    const data = jsonText(event.data);
    if (this.dialect !== 'postgres') {
      const job = await numbered(this.db).executeTakeFirstOrThrow();
      await this.db
        .insertInto('job_events')
        .values({ job_id: id, seq: job.event_seq, event: event.event, at: now, data })
        .execute();
      return { ...job, unfinished: Number(job.unfinished) };
    }
    const job = await this.db
      .with('numbered', numbered)
      .with('written', (db) =>
        db
          .insertInto('job_events')
          .columns(['job_id', 'seq', 'event', 'at', 'data'])
          .expression((eb) =>
            eb
              .selectFrom('numbered')
              .select([
                'id',
                'event_seq',
                sql.val(event.event).as('event'),
                sql.val(now).as('at'),
                sql.val(data).as('data'),
              ]),
          ),
      )
      .selectFrom('numbered')
      .selectAll()
      .executeTakeFirstOrThrow();
    return { ...job, unfinished: Number(job.unfinished) };
  }
}
