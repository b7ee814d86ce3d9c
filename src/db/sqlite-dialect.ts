// How Kysely talks to the embedded SQLite database (better-sqlite3): transactions that take the write lock
// when they begin, and compiled statements kept for reuse.
import type SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase as KyselySqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import { errorMessage } from '../errors.ts';

/**
 * SQLite transactions take the write lock when they begin (BEGIN IMMEDIATE). A deferred transaction
 * that reads and then writes fails at once with SQLITE_BUSY when another process (bin/matte, a second
 * server) wrote in between; an immediate one waits for the lock (busy_timeout) and then sees fresh rows.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * SQLite rolls a transaction back by itself on some errors (SQLITE_FULL when the volume is full,
   * SQLITE_IOERR, SQLITE_NOMEM); Kysely's ROLLBACK then fails with "no transaction is active", which would
   * hide the error that matters (a full volume is 507 STORAGE_FULL, not 500).
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } catch (err) {
      if (!/no transaction is active/.test(errorMessage(err))) throw err;
    }
  }
}

/**
 * Kysely prepares every query's SQL again each time it runs. Compiling is most of a small query's cost
 * on the event loop (a photo's run makes some forty queries: a CPU profile showed better-sqlite3's
 * prepare as the largest part of the database's time), and the service's queries are a few dozen
 * shapes, so the compiled statements are kept by their SQL, the least recently used let go beyond
 * `max` (a list of values of varying length is a new shape each time). A statement is used by one
 * query at a time: Kysely runs SQLite queries one after another on its one connection, and a stream
 * (iterate) holds that connection until it ends.
 */
export class CachedStatements implements KyselySqliteDatabase {
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(
    private readonly db: SqliteDatabase.Database,
    private readonly max = 256,
  ) {}

  prepare(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (statement) {
      // Most recently used last.
      this.statements.delete(sql);
    } else {
      statement = this.db.prepare(sql) as unknown as SqliteStatement;
      if (this.statements.size >= this.max) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, statement);
    return statement;
  }

  /** Statements kept now. */
  get size(): number {
    return this.statements.size;
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly options: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(options);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.options);
  }
}
