// The SQLite statement cache under Kysely: one compiled statement per SQL text, the least recently used
// let go beyond the bound, right answers after the schema changes under a kept statement.
import SqliteDatabase from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { CachedStatements, ImmediateSqliteDialect } from '../../src/db/sqlite-dialect.ts';

describe('cached SQLite statements', () => {
  it('compiles each SQL text once, and lets the least recently used go beyond the bound', () => {
    const db = new SqliteDatabase(':memory:');
    const cache = new CachedStatements(db, 2);
    const a = cache.prepare('select 1 as v');
    expect(cache.prepare('select 1 as v')).toBe(a);
    const b = cache.prepare('select 2 as v');
    cache.prepare('select 1 as v'); // now the most recently used
    cache.prepare('select 3 as v'); // over the bound: 'select 2' goes
    expect(cache.size).toBe(2);
    expect(cache.prepare('select 1 as v')).toBe(a);
    expect(cache.prepare('select 2 as v')).not.toBe(b);
    cache.close();
    expect(db.open).toBe(false);
  });

  it('answers through Kysely as fresh statements do, in transactions, and after the schema changed', async () => {
    const raw = new SqliteDatabase(':memory:');
    const cache = new CachedStatements(raw);
    const db = new Kysely<{ t: { id: number; name: string; extra?: string | null } }>({
      dialect: new ImmediateSqliteDialect({ database: cache }),
    });
    try {
      await db.schema
        .createTable('t')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('name', 'text')
        .execute();
      for (let i = 1; i <= 3; i++)
        await db
          .insertInto('t')
          .values({ id: i, name: `n${i}` })
          .execute();
      const byId = (id: number) => db.selectFrom('t').selectAll().where('id', '=', id).executeTakeFirst();
      expect(await byId(2)).toEqual({ id: 2, name: 'n2' });
      expect(await byId(3)).toEqual({ id: 3, name: 'n3' });
      const kept = cache.size;
      await byId(1);
      expect(cache.size, 'the same query with other values is the same statement').toBe(kept);
      await db.transaction().execute(async (tx) => {
        await tx.updateTable('t').set({ name: 'x' }).where('id', '=', 1).execute();
      });
      await expect(
        db.transaction().execute(async (tx) => {
          await tx.updateTable('t').set({ name: 'y' }).where('id', '=', 1).execute();
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await byId(1)).toEqual({ id: 1, name: 'x' });
      // A column added under a kept `select *`: SQLite compiles it again, and the new column is there.
      await sql`alter table t add column extra text`.execute(db);
      expect(await byId(1)).toEqual({ id: 1, name: 'x', extra: null });
      // A stream holds the one connection: the same query asked meanwhile (the same statement) waits for
      // it instead of finding the statement busy, and both answer.
      const query = () => db.selectFrom('t').select('name').orderBy('id');
      const names: string[] = [];
      let meanwhile: Promise<{ name: string }[]> | undefined;
      for await (const row of query().stream()) {
        names.push(row.name);
        meanwhile ??= query().execute();
      }
      expect(names).toEqual(['x', 'n2', 'n3']);
      expect((await meanwhile!).map((r) => r.name)).toEqual(names);
    } finally {
      await db.destroy();
    }
  });
});
