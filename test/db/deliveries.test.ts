// Webhook deliveries as a durable queue, on SQLite and PostgreSQL: concurrent claims never hand out the
// same attempt twice, one batch's deliveries go one at a time, leases run out, a lost lease cannot
// settle. And the PostgreSQL event bus: a signal in one process reaches the others.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import pgClient from 'pg';
import { createDatabase } from '../../src/db/database.ts';
import { Store } from '../../src/db/store.ts';
import { PgNotifyBus } from '../../src/adapters/pg-notify-bus.adapter.ts';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { dbTierServices } from '../helpers/services.ts';
import { jsonText } from '../../src/db/json-text.ts';
import type { JobEvent } from '../../src/domain/event.schemas.ts';

for (const { dialect, skip } of DIALECTS) {
  describe.skipIf(skip)(`webhook deliveries on ${dialect}`, () => {
    let tdb: TestDatabase;
    let store: Store;
    const now = 1_700_000_000_000;
    let jobs: string[] = [];

    beforeAll(async () => {
      tdb = await createTestDatabase(dialect);
      store = new Store(await createDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir }));
      const { accounts, batches } = dbTierServices(store, tdb.dataDir, () => now);
      const { accountId } = await accounts.createAccount({ email: `${Math.random()}@x.test`, plan: 10, pack: 0 });
      jobs = [];
      for (let i = 0; i < 10; i++)
        jobs.push((await batches.createJob(accountId, { webhookUrl: 'https://hooks.example.com/matte' }, null)).id);
    });
    afterAll(async () => {
      await store?.close();
      await tdb?.drop();
    });

    async function seed(prefix: string, perJob: number, due = now) {
      for (const [j, jobId] of jobs.entries()) {
        for (let k = 1; k <= perJob; k++) {
          const payload: JobEvent = {
            id: k,
            event: 'item.done',
            at: due,
            jobId,
            data: {
              itemId: `i${k}`,
              name: `p${k}.jpg`,
              status: 'done',
              review: 'none',
              score: 90,
              credits: 1,
              attempts: 1,
              error: null,
              outputUrl: null,
              thumbUrl: null,
              inputThumbUrl: 'https://x.test/t',
            },
          };
          await store.repos.deliveries.insert({
            id: `${prefix}_${j}_${k}`,
            job_id: jobId,
            event_seq: k,
            event: 'item.done',
            url: 'https://hooks.example.com/matte',
            payload: jsonText(payload),
            status: 'pending',
            attempts: 0,
            next_attempt_at: due,
            created_at: due,
          });
        }
      }
    }

    it('concurrent claimers never get the same delivery, and a batch has one attempt in flight at a time', async () => {
      await seed('race', 2);
      const claimed: string[] = [];
      // Round 1: eight claimers at once; each batch's first delivery only (its second waits for it).
      const round1 = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.repos.deliveries.claimDue(`owner-${i}`, now, now + 15_000)),
      );
      const more = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.repos.deliveries.claimDue(`owner-${i + 8}`, now, now + 15_000)),
      );
      for (const d of [...round1, ...more]) if (d) claimed.push(d.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed).toHaveLength(10);
      expect(claimed.every((id) => id.endsWith('_1'))).toBe(true);
      // Nothing more is claimable while they are in flight.
      expect(await store.repos.deliveries.claimDue('late', now, now + 15_000)).toBeUndefined();
      expect(await store.repos.deliveries.nextDueAt(now)).toBe(now);

      // Settled by their owners: the second deliveries come free, once each.
      for (const d of [...round1, ...more].filter(Boolean)) {
        expect(
          await store.repos.deliveries.settleAttempt(d!.id, d!.lease_owner!, {
            attempts: 1,
            lastStatus: 200,
            lastError: null,
            next: { status: 'delivered', at: now },
          }),
        ).toBe(true);
      }
      const second = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.repos.deliveries.claimDue(`again-${i}`, now, now + 15_000)),
      );
      const ids = second.filter(Boolean).map((d) => d!.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(jobs.map((_, j) => `race_${j}_2`).sort());
      for (const d of second.filter(Boolean))
        await store.repos.deliveries.settleAttempt(d!.id, d!.lease_owner!, {
          attempts: 1,
          lastStatus: 200,
          lastError: null,
          next: { status: 'delivered', at: now },
        });
      expect(await store.repos.deliveries.nextDueAt(now)).toBeNull();
    });

    it('a lease that ran out is claimed again, and its old holder can no longer settle the attempt', async () => {
      await seed('lease', 1, now + 1000);
      expect(await store.repos.deliveries.claimDue('a', now, now + 500)).toBeUndefined(); // not due yet (the race rows are all delivered)
      const first = await store.repos.deliveries.claimDue('a', now + 1000, now + 2000);
      expect(first).toBeDefined();
      // 'a' died mid-attempt; at now + 2000 its lease has run out.
      const again = await store.repos.deliveries.claimDue('b', now + 2000, now + 3000);
      expect(again?.id).toBe(first!.id);
      expect(
        await store.repos.deliveries.settleAttempt(first!.id, 'a', {
          attempts: 1,
          lastStatus: 200,
          lastError: null,
          next: { status: 'delivered', at: now },
        }),
      ).toBe(false);
      expect(
        await store.repos.deliveries.settleAttempt(first!.id, 'b', {
          attempts: 1,
          lastStatus: 500,
          lastError: 'x',
          next: { status: 'pending', at: now + 5000 },
        }),
      ).toBe(true);
      const row = (await store.repos.deliveries.listForJob(first!.job_id)).find((d) => d.id === first!.id)!;
      expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 500, lease_owner: null });
      expect(Number(row.next_attempt_at)).toBe(now + 5000);
    });

    it('deliveries go with their batch', async () => {
      const before = (await store.repos.deliveries.listForJob(jobs[0])).length;
      expect(before).toBeGreaterThan(0);
      await store.repos.jobs.delete(jobs[0]);
      expect(await store.repos.deliveries.listForJob(jobs[0])).toEqual([]);
    });
  });
}

const pg = DIALECTS.find((d) => d.dialect === 'postgres')!;
describe.skipIf(pg.skip)('the event bus between processes (PostgreSQL LISTEN/NOTIFY)', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase('postgres');
  });
  afterAll(async () => tdb?.drop());

  it('a signal published by one bus reaches the listeners of another, and its own listeners once; a photo moving on only those asking for stages', async () => {
    const log = pino({ level: 'silent' });
    const a = await PgNotifyBus.connect(tdb.databaseUrl, log);
    const b = await PgNotifyBus.connect(tdb.databaseUrl, log);
    try {
      const heardB: string[] = [];
      const heardA: string[] = [];
      const offB = b.onJobChanged('job_1', () => heardB.push('job_1'));
      const offAny = b.onAnyJobChanged(() => heardB.push('any'));
      const offWork = b.onWorkQueued(() => heardB.push('work'));
      const offA = a.onJobChanged('job_1', () => heardA.push('job_1'));
      // A photo moving on is heard only by a listener that asked for stages (a reader of the photos).
      const offStages = b.onJobChanged('job_1', () => heardB.push('stages'), { stages: true });
      a.jobChanged('job_1');
      a.jobChanged('job_2');
      a.workQueued();
      a.photoMoved('job_1');
      const deadline = Date.now() + 5000;
      while (heardB.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      expect(heardB.sort()).toEqual(['any', 'any', 'job_1', 'stages', 'stages', 'work']);
      expect(heardA).toEqual(['job_1']);
      for (const off of [offB, offAny, offWork, offA, offStages]) off();
      expect(b.listenerCount()).toBe(0);

      // A burst: one NOTIFY at a time on the connection (pg warns of, and will refuse, a query handed to a client
      // busy with one), the signals queued meanwhile sent together, each once.
      const warnings: string[] = [];
      const onWarning = (w: Error) => warnings.push(w.message);
      process.on('warning', onWarning);
      const burst: string[] = [];
      const offBurst = b.onAnyJobChanged((jobId) => burst.push(jobId ?? ''));
      for (let i = 0; i < 50; i++) a.jobChanged(`job_${i % 5}`);
      const until = Date.now() + 5000;
      while (new Set(burst).size < 5 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      process.off('warning', onWarning);
      offBurst();
      expect(new Set(burst)).toEqual(new Set(['job_0', 'job_1', 'job_2', 'job_3', 'job_4']));
      expect(burst.length).toBeLessThanOrEqual(6); // the first alone, then the other four names once each
      expect(warnings.filter((m) => m.includes('client.query()'))).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('reconnects when its LISTEN connection is killed, wakes every waiter, and hears signals again', async () => {
    const log = pino({ level: 'silent' });
    const a = await PgNotifyBus.connect(tdb.databaseUrl, log);
    const b = await PgNotifyBus.connect(tdb.databaseUrl, log);
    const admin = new pgClient.Client({ connectionString: tdb.databaseUrl });
    await admin.connect();
    try {
      const heard: string[] = [];
      const off = b.onJobChanged('job_9', () => heard.push('job_9'));
      const { rows } = await admin.query(
        "select pid from pg_stat_activity where datname = current_database() and query ilike 'listen%' and pid <> pg_backend_pid()",
      );
      expect(rows.length).toBe(2);
      // Kill both listeners: b must reconnect and wake its waiters (signals may have been lost meanwhile).
      for (const r of rows) await admin.query('select pg_terminate_backend($1)', [r.pid]);
      const deadline = Date.now() + 10_000;
      while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual(['job_9']);
      // Once both are back, a's signal reaches b again.
      let back = 0;
      while (back < 2 && Date.now() < deadline) {
        back = (
          await admin.query(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen%'",
          )
        ).rows[0].n;
        await new Promise((r) => setTimeout(r, 50));
      }
      a.jobChanged('job_9');
      while (heard.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual(['job_9', 'job_9']);
      off();
    } finally {
      await admin.end();
      await a.close();
      await b.close();
    }
  });
});
