// Frozen: never import today's schema types here. Each result of a photo gets files of its own
// (a fresh key per run and per re-render), named on the photo row in the transaction that makes the
// result current: a worker that lost its lease, or a re-render that lost a race, never overwrites the
// files of the result that won. Null = the fixed keys used before (jobs/{job}/{item}/cutout.png, …).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('items').addColumn('cutout_blob', 'text').execute();
  await db.schema.alterTable('items').addColumn('output_blob', 'text').execute();
  await db.schema.alterTable('items').addColumn('thumb_blob', 'text').execute();
}
