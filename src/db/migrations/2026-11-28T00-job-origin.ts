// Frozen: never import today's schema types here. Where a batch came from: `batch` (POST /v1/jobs) or
// `image` (the one-photo call), so the studio can list sellers' batches apart from one-photo calls.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo('batch'))
    .execute();
}
