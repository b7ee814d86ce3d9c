// Frozen: never import today's schema types here. The account side: passwords and studio sessions,
// licences (the plan pool's monthly allowance), purchases of credit packs, shared rate-limit windows,
// a microsecond ledger clock (unique, increasing per account) so that ledger pages never overlap.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite adds one column per ALTER TABLE statement.
  await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('license_id', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('deleted_at', 'bigint').execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('ledger_clock_us', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();

  // Ledger time in microseconds, strictly increasing per account: the paging cursor. Rows written
  // before this migration share milliseconds; their id keeps them apart (ids count up in time).
  await db.schema
    .alterTable('ledger')
    .addColumn('at_us', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update ledger set at_us = created_at * 1000 + (id % 1000)`.execute(db);
  await db.schema.createIndex('ledger_account_at').on('ledger').columns(['account_id', 'at_us']).execute();

  // An in-progress idempotency record whose process died is taken over after this time.
  await db.schema.alterTable('idempotency_keys').addColumn('locked_until', 'bigint').execute();

  await db.schema
    .createTable('licenses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('code_prefix', 'text', (c) => c.notNull())
    .addColumn('tier', 'integer', (c) => c.notNull())
    .addColumn('allowance', 'integer', (c) => c.notNull())
    .addColumn('job_limit', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('activated_at', 'bigint')
    .addColumn('next_refresh_at', 'bigint')
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_account').on('sessions').column('account_id').execute();

  await db.schema
    .createTable('purchases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('pack_id', 'text', (c) => c.notNull())
    .addColumn('credits', 'integer', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  await db.schema.createIndex('purchases_account').on('purchases').columns(['account_id', 'created_at']).execute();

  // One row per rate-limited subject (an API key, a session, a sign-in e-mail): its sliding windows as
  // JSON lists of [bucketStartMs, count], updated under a row lock so that every process shares them.
  await db.schema
    .createTable('rate_limits')
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('windows', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
