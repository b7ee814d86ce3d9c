// Webhook deliveries: a durable queue in the database. A process claims one due delivery at a time with
// a lease (row lock skipped by others on PostgreSQL, the write lock on SQLite), sends it, and settles it
// only while it still holds the lease: two processes never send the same attempt of a delivery.
import { sql, type Kysely } from 'kysely';
import type { Database, DeliveryRow, NewDelivery } from '../schema.ts';
import type { Dialect } from '../database.ts';

export class DeliveriesRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(row: NewDelivery): Promise<void> {
    await this.db.insertInto('webhook_deliveries').values(row).execute();
  }

  async listForJob(jobId: string): Promise<DeliveryRow[]> {
    return this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('job_id', '=', jobId)
      .orderBy('event_seq')
      .orderBy('id')
      .execute();
  }

  /**
   * Leases the due delivery that comes first (by due time, then batch and event id) to `owner` until
   * `leaseUntil`. Only a batch's earliest due delivery can be claimed: while it is in flight the later
   * ones wait, so a batch's events go out one at a time and in id order; a failed one waits for its
   * retry and lets the later ones pass (out of order, as the spec allows). The rule reads committed
   * rows only, so it holds between processes too.
   */
  async claimDue(owner: string, now: number, leaseUntil: number): Promise<DeliveryRow | undefined> {
    const pick = sql`
      select d.id from webhook_deliveries d
      where d.status = 'pending' and d.next_attempt_at <= ${now}
        and (d.lease_expires_at is null or d.lease_expires_at <= ${now})
        and not exists (
          select 1 from webhook_deliveries o
          where o.job_id = d.job_id and o.status = 'pending' and o.next_attempt_at <= ${now} and o.event_seq < d.event_seq
        )
      order by d.next_attempt_at, d.job_id, d.event_seq
      limit 1`;
    const result = await sql<DeliveryRow>`
      update webhook_deliveries set lease_owner = ${owner}, lease_expires_at = ${leaseUntil}
      where id = (${this.dialect === 'postgres' ? sql`${pick} for update of d skip locked` : pick})
      returning *`.execute(this.db);
    return result.rows[0];
  }

  /** The earliest time a pending delivery that nobody is sending is due, or null when there is none. */
  async nextDueAt(now: number): Promise<number | null> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('due'))
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
      .executeTakeFirst();
    return row?.due === null || row?.due === undefined ? null : Number(row.due);
  }

  /**
   * Records the attempt the lease holder made. `next`: delivered, retry at a time, or given up.
   * False when the lease was lost (the attempt counts for whoever holds it now).
   */
  async settleAttempt(
    id: string,
    owner: string,
    outcome: {
      attempts: number;
      lastStatus: number | null;
      lastError: string | null;
      next:
        { status: 'delivered'; at: number } | { status: 'pending'; at: number } | { status: 'given_up'; at: number };
    },
  ): Promise<boolean> {
    const { next } = outcome;
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set({
        attempts: outcome.attempts,
        last_status: outcome.lastStatus,
        last_error: outcome.lastError,
        status: next.status,
        next_attempt_at: next.status === 'pending' ? next.at : null,
        delivered_at: next.status === 'delivered' ? next.at : null,
        given_up_at: next.status === 'given_up' ? next.at : null,
        lease_owner: null,
        lease_expires_at: null,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
