// Frozen: never import today's schema types here. Reports: one row per report and its verdict, kept
// with the photo (deleted with it); and the pools a photo's charge came from, so an accepted report
// gives the credits back to the pools they left.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('items')
    .addColumn('charged_plan', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('items')
    .addColumn('charged_pack', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('claims')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('item_id', 'text', (c) => c.notNull().references('items.id').onDelete('cascade'))
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    // The model run whose result is reported (items.attempts then): each result may be reported twice.
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('confidence', 'real', (c) => c.notNull())
    .addColumn('evidence', 'text', (c) => c.notNull())
    .addColumn('metrics', 'text', (c) => c.notNull())
    .addColumn('credits', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('claims_job').on('claims').columns(['job_id', 'item_id']).execute();
}
