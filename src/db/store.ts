// The Store hands services their repositories, either plain or bound to one transaction.
// Services see only repository methods; Kysely stays inside src/db.
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { Db, Dialect } from './database.ts';
import { AccountsRepository } from './repositories/accounts.repository.ts';
import { JobsRepository } from './repositories/jobs.repository.ts';
import { ItemsRepository } from './repositories/items.repository.ts';
import { LedgerRepository } from './repositories/ledger.repository.ts';
import { EventsRepository } from './repositories/events.repository.ts';
import { IdempotencyRepository } from './repositories/idempotency.repository.ts';
import { LicensesRepository } from './repositories/licenses.repository.ts';
import { SessionsRepository } from './repositories/sessions.repository.ts';
import { PurchasesRepository } from './repositories/purchases.repository.ts';
import { RateLimitsRepository } from './repositories/rate-limits.repository.ts';
import { ClaimsRepository } from './repositories/claims.repository.ts';
import { DeliveriesRepository } from './repositories/deliveries.repository.ts';

export interface Repos {
  accounts: AccountsRepository;
  jobs: JobsRepository;
  items: ItemsRepository;
  ledger: LedgerRepository;
  events: EventsRepository;
  idempotency: IdempotencyRepository;
  licenses: LicensesRepository;
  sessions: SessionsRepository;
  purchases: PurchasesRepository;
  rateLimits: RateLimitsRepository;
  claims: ClaimsRepository;
  deliveries: DeliveriesRepository;
}

function reposFor(db: Kysely<Database>, dialect: Dialect, inTransaction = false): Repos {
  return {
    accounts: new AccountsRepository(db, dialect, inTransaction),
    jobs: new JobsRepository(db, dialect),
    items: new ItemsRepository(db, dialect),
    ledger: new LedgerRepository(db),
    events: new EventsRepository(db),
    idempotency: new IdempotencyRepository(db),
    licenses: new LicensesRepository(db),
    sessions: new SessionsRepository(db),
    purchases: new PurchasesRepository(db),
    rateLimits: new RateLimitsRepository(db, dialect),
    claims: new ClaimsRepository(db),
    deliveries: new DeliveriesRepository(db, dialect),
  };
}

export class Store {
  readonly repos: Repos;
  readonly dialect: Dialect;

  constructor(private readonly db: Db) {
    this.repos = reposFor(db.kysely, db.dialect);
    this.dialect = db.dialect;
  }

  /** Runs `fn` in one transaction: every state change and the ledger rows that pay for it commit together. */
  transaction<T>(fn: (repos: Repos) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute((trx) => fn(reposFor(trx, this.db.dialect, true)));
  }
  /** One round trip to the database (readiness). */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db.kysely);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
