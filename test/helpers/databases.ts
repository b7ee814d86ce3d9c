// Database tier helpers: every repository test runs on SQLite and on PostgreSQL. PostgreSQL tests get
// a throwaway database on the server named by MATTE_TEST_PG_URL (default: the local one, trust auth);
// where none answers, those suites skip and say why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.MATTE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const PG_AVAILABLE = await postgresAvailable();
if (!PG_AVAILABLE) {
  console.warn(
    `[matte tests] PostgreSQL not reachable at ${PG_ADMIN_URL}: PostgreSQL suites are SKIPPED. Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
  );
}

export interface TestDatabase {
  dialect: 'sqlite' | 'postgres';
  databaseUrl: string;
  dataDir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(dialect: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-db-'));
  if (dialect === 'sqlite') {
    return {
      dialect,
      databaseUrl: '',
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `matte_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    dialect,
    databaseUrl: url.toString(),
    dataDir,
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The dialects a suite runs on: both, or SQLite alone (with PostgreSQL listed as skipped). */
export const DIALECTS = [
  { dialect: 'sqlite' as const, skip: false },
  { dialect: 'postgres' as const, skip: !PG_AVAILABLE },
];
