// createDatabase(config): Kysely over better-sqlite3 (embedded default, WAL) or pg (DATABASE_URL=postgres://…),
// migrated to the latest dated migration before it is handed out.
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type pg from 'pg';
import { Kysely, Migrator, PostgresDialect, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './schema.ts';
import { CachedStatements, ImmediateSqliteDialect } from './sqlite-dialect.ts';
import * as initial from './migrations/2026-11-21T00-initial.ts';
import * as accounts from './migrations/2026-11-23T00-accounts.ts';
import * as claims from './migrations/2026-11-23T01-claims.ts';
import * as resultFiles from './migrations/2026-11-23T02-result-files.ts';
import * as webhookDeliveries from './migrations/2026-11-24T00-webhook-deliveries.ts';
import * as jobOrigin from './migrations/2026-11-28T00-job-origin.ts';
import * as touchUps from './migrations/2026-12-08T00-touch-ups.ts';
import { errorMessage } from '../errors.ts';
import { JsonColumnsPlugin } from './json-columns.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

type DatedMigration = { up(db: Kysely<unknown>, dialect: Dialect): Promise<void> };
const MIGRATIONS: Record<string, DatedMigration> = {
  '2026-11-21T00-initial': initial,
  '2026-11-23T00-accounts': accounts,
  '2026-11-23T01-claims': claims,
  '2026-11-23T02-result-files': resultFiles,
  '2026-11-24T00-webhook-deliveries': webhookDeliveries,
  '2026-11-28T00-job-origin': jobOrigin,
  '2026-12-08T00-touch-ups': touchUps,
};

class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, m] of Object.entries(MIGRATIONS)) out[name] = { up: (db) => m.up(db, this.dialect) };
    return out;
  }
}

export interface DatabaseOptions {
  databaseUrl: string;
  dataDir: string;
  /** Called once for every statement sent (metrics: matte_db_statements_total). */
  onStatement?: () => void;
}

export async function createDatabase(options: DatabaseOptions): Promise<Db> {
  const isPostgres = /^postgres(ql)?:\/\//.test(options.databaseUrl);
  let kysely: Kysely<Database>;
  // Kysely calls its log hook once for every statement it sends.
  const log = options.onStatement;
  // Every row read comes out with its JSON columns parsed and checked; a migration that rewrites stored JSON
  // reads the text through kysely.withoutPlugins().
  const plugins = [new JsonColumnsPlugin()];
  if (isPostgres) {
    // pg is loaded only for PostgreSQL, as the AWS SDK only for S3: every start and every bin/matte verb on SQLite saves it.
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: 10,
      // While the database is unreachable a request fails in seconds (503) rather than waiting on a connection.
      connectionTimeoutMillis: 3000,
      // bigint (OID 20) columns hold millisecond times and counters far below 2^53: read them as numbers.
      types: {
        getTypeParser: (oid: number, format?: string) =>
          oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text'),
      } as pg.CustomTypesConfig,
    });
    // An idle pooled connection can be closed by the server (restart, admin termination); pg then emits
    // 'error' on the pool, which would crash the process without a listener. The pool replaces it.
    pool.on('error', (err) => process.emitWarning(`PostgreSQL idle connection lost: ${err.message}`));
    // A connection lost while checked out but between queries (inside a transaction, say) emits 'error' on
    // its client, which the pool only listens to while the client is idle: without a listener of its own,
    // a database outage would end the process. The query in flight, if any, still fails with the error.
    pool.on('connect', (client) => client.on('error', () => undefined));
    kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log, plugins });
  } else {
    const file = options.databaseUrl.startsWith('sqlite:')
      ? options.databaseUrl.slice('sqlite:'.length)
      : path.join(options.dataDir, 'matte.sqlite');
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const sqlite = new SqliteDatabase(file);
    // WAL lets the CLI and readers work while the server writes; busy_timeout makes a second
    // process (bin/matte) wait for the writer instead of failing with SQLITE_BUSY.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    kysely = new Kysely<Database>({
      dialect: new ImmediateSqliteDialect({ database: new CachedStatements(sqlite) }),
      log,
      plugins,
    });
  }
  const dialect: Dialect = isPostgres ? 'postgres' : 'sqlite';
  const migrator = new Migrator({
    db: kysely,
    provider: new StaticProvider(dialect),
    migrationTableName: 'matte_migrations',
    migrationLockTableName: 'matte_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await kysely.destroy();
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${errorMessage(error)}`);
  }
  return { kysely, dialect, close: () => kysely.destroy() };
}
