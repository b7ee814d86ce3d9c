// The database tier: the queue's claim, leases, the ledger and idempotency, on SQLite and PostgreSQL alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { sql } from 'kysely';
import { createDatabase } from '../../src/db/database.ts';
import { Store } from '../../src/db/store.ts';
import { AccountService } from '../../src/services/account.service.ts';
import { BatchService } from '../../src/services/batch.service.ts';
import type { BatchQueries } from '../../src/services/batch-queries.service.ts';
import type { IntakeService } from '../../src/services/intake.service.ts';
import type { PhotoQueue } from '../../src/services/photo-queue.service.ts';
import { PhotoError } from '../../src/errors.ts';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { dbTierServices } from '../helpers/services.ts';
import { productPhoto } from '../helpers/images.ts';
import { RateLimitService, rateLimitRules } from '../../src/services/rate-limit.service.ts';

void pino;

for (const { dialect, skip } of DIALECTS) {
  describe.skipIf(skip)(`database tier on ${dialect}`, () => {
    let tdb: TestDatabase;
    let store: Store;
    let batches: BatchService;
    let queries: BatchQueries;
    let intake: IntakeService;
    let queue: PhotoQueue;
    let accounts: AccountService;
    let bus: ReturnType<typeof dbTierServices>['bus'];
    let now = 1_700_000_000_000;
    const clock = () => now;

    beforeAll(async () => {
      tdb = await createTestDatabase(dialect);
      store = new Store(await createDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir }));
      ({ accounts, batches, queries, intake, queue, bus } = dbTierServices(store, tdb.dataDir, clock));
    });
    afterAll(async () => {
      await store?.close();
      await tdb?.drop();
    });

    async function startedBatch(photos: number, plan = 10) {
      const { accountId } = await accounts.createAccount({ email: `${Math.random()}@x.test`, plan, pack: 0 });
      const job = await batches.createJob(accountId, {}, null);
      const photo = await productPhoto(120, 100);
      await intake.addPhotos(
        accountId,
        job.id,
        Array.from({ length: photos }, (_, i) => ({ name: `${i}.jpg`, data: photo })),
      );
      await batches.start(accountId, job.id, {});
      return { accountId, jobId: job.id };
    }

    /**
     * Resolves once the long-polls have read the batch `n` times (a photos' wait reads its row, a summary's its
     * row with the counts), each read answered: the test's next change comes after those looks.
     */
    function firstLooks(n: number): Promise<void> {
      const jobs = store.repos.jobs;
      const { findForAccount, findForAccountWithCounts } = jobs;
      let seen = 0;
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      const counted =
        <A extends unknown[], R>(read: (...args: A) => Promise<R>) =>
        async (...args: A): Promise<R> => {
          const found = await read.apply(jobs, args);
          if (++seen === n) {
            jobs.findForAccount = findForAccount;
            jobs.findForAccountWithCounts = findForAccountWithCounts;
            done();
          }
          return found;
        };
      jobs.findForAccount = counted(findForAccount);
      jobs.findForAccountWithCounts = counted(findForAccountWithCounts);
      return all;
    }

    it('a photo moving to its next stage ends a long-poll of the photos, not one of the summary', async () => {
      const { accountId, jobId } = await startedBatch(1);
      const item = (await queue.claimNext('stage-worker', 60_000))!;
      const ended: string[] = [];
      const threshold = now + 1;
      // Each wait ends by the change it is for: its timeout is far beyond the test's steps, even on a loaded machine.
      // Both waits past their first look before the move (a sleep was not enough on a loaded machine: a look
      // after the move finds the batch changed after the threshold, and a summary asked then answers at once).
      const looked = firstLooks(2);
      const photos = queries
        .waitForChange(accountId, jobId, threshold, 30_000, { stages: true })
        .then(() => ended.push('photos'));
      const summary = queries.waitForChange(accountId, jobId, threshold, 30_000).then(() => ended.push('summary'));
      await looked;
      now += 10;
      expect(await queue.markStage(item, 'stage-worker', 'decode')).toBe(true);
      // Ended by the move, not by its 30 s timeout.
      let late: NodeJS.Timeout | undefined;
      await Promise.race([
        photos,
        new Promise(
          (_, reject) => (late = setTimeout(() => reject(new Error('the photos wait missed the move')), 10_000)),
        ),
      ]);
      clearTimeout(late);
      // A notice that wakes the summary's wait after the move (on PostgreSQL, the start's heard late): the
      // batch's row changed, what the summary shows did not.
      bus.jobChanged(jobId);
      await new Promise((r) => setTimeout(r, 100));
      expect(ended).toEqual(['photos']);
      // A change the summary shows (the photo settled: counts move) ends it.
      now += 10;
      await queue.settleFailed(item, 'stage-worker', new PhotoError('PROCESSING_FAILED', 'test', false));
      await summary;
      expect(ended).toEqual(['photos', 'summary']);
    });

    it('a signal that finds nothing new keeps a long-poll waiting (a late or doubled notice)', async () => {
      const { accountId, jobId } = await startedBatch(1);
      const item = (await queue.claimNext('late-worker', 60_000))!;
      const threshold = now + 1;
      let ended = false;
      const waiting = queries.waitForChange(accountId, jobId, threshold, 30_000, { stages: true }).then(() => {
        ended = true;
      });
      await new Promise((r) => setTimeout(r, 50));
      // The notice of a change already read (the start's, heard late through PostgreSQL): the batch is as it was.
      bus.jobChanged(jobId);
      bus.photoMoved(jobId);
      await new Promise((r) => setTimeout(r, 100));
      expect(ended).toBe(false);
      now += 10;
      await queue.settleFailed(item, 'late-worker', new PhotoError('PROCESSING_FAILED', 'test', false));
      await waiting;
      expect(ended).toBe(true);
    });

    it('migrates idempotently (a second createDatabase finds nothing to do, and the data stays)', async () => {
      const { accountId } = await accounts.createAccount({ email: `migrate-${dialect}@example.com`, plan: 1, pack: 0 });
      const again = await createDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir });
      try {
        const applied = await sql<{ name: string }>`select name from matte_migrations order by name`.execute(
          again.kysely,
        );
        // Each dated migration once: a second run that applied one again would list it twice.
        const names = applied.rows.map((r) => r.name);
        expect(names.length).toBeGreaterThanOrEqual(5);
        expect(new Set(names).size).toBe(names.length);
        expect(names[0]).toBe('2026-11-21T00-initial');
        const account = await again.kysely
          .selectFrom('accounts')
          .select('id')
          .where('id', '=', accountId)
          .executeTakeFirst();
        expect(account?.id).toBe(accountId);
      } finally {
        await again.close();
      }
    });

    it('reads JSON columns parsed and checked, through a query or raw SQL; a stored value its schema refuses is an error naming the column', async () => {
      const { jobId } = await startedBatch(1);
      const db = await createDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir });
      try {
        const [item] = await store.repos.items.listForJob(jobId);
        expect(item!.settings).toMatchObject({ presetId: expect.any(String) });
        const raw = await sql<{ settings: unknown; name: string }>`select settings, name from items where id = ${
          item!.id
        }`.execute(db.kysely);
        expect(raw.rows[0]!.settings).toEqual(item!.settings);
        // Written past jsonText(): a setting the schema does not have, then text that is not JSON.
        const bad = JSON.stringify({ ...item!.settings, shadow: 'maybe' });
        await sql`update items set settings = ${bad} where id = ${item!.id}`.execute(db.kysely);
        await expect(store.repos.items.listForJob(jobId)).rejects.toThrow(
          /^stored settings does not hold its schema: /,
        );
        await sql`update items set settings = ${'{"presetId":'} where id = ${item!.id}`.execute(db.kysely);
        await expect(store.repos.items.listForJob(jobId)).rejects.toThrow(SyntaxError);
        // The text itself, for a migration that rewrites it, without the plugin.
        const text = await db.kysely
          .withoutPlugins()
          .selectFrom('items')
          .select('settings')
          .where('id', '=', item!.id)
          .executeTakeFirstOrThrow();
        expect(text.settings).toBe('{"presetId":');
      } finally {
        await sql`delete from items where job_id = ${jobId}`.execute(db.kysely);
        await db.close();
      }
    });

    it('claims each pending photo exactly once, even with concurrent claimers', async () => {
      const { jobId } = await startedBatch(6);
      const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => queue.claimNext(`w${i}`, 60_000)));
      const got = claims.filter(Boolean).map((c) => c!.id);
      expect(got).toHaveLength(6);
      expect(new Set(got).size).toBe(6);
      const job = await store.repos.jobs.findById(jobId);
      expect(job!.status).toBe('running');
      expect(await queue.claimNext('late', 60_000)).toBeUndefined();
    });

    it('requeues a photo whose lease expired and charges it once; the late worker settles nothing', async () => {
      const { accountId } = await startedBatch(1);
      const first = (await queue.claimNext('dead-worker', 1000))!;
      now += 5000; // the lease ran out: the worker died
      expect(await queue.requeueExpired(3)).toBe(1);
      const second = (await queue.claimNext('live-worker', 60_000))!;
      expect(second.id).toBe(first.id);
      expect(second.attempts).toBe(2);
      // The dead worker comes back and tries to settle: refused.
      expect(
        await queue.settleDone(first, 'dead-worker', {
          red: false,
          quality: { score: 1, flags: [] },
          meta: {},
          outputFormat: 'png',
          files: { cutout: 'c', output: 'o', thumb: 't' },
        }),
      ).toBeNull();
      expect(
        await queue.settleDone(second, 'live-worker', {
          red: false,
          quality: { score: 1, flags: [] },
          meta: {},
          outputFormat: 'png',
          files: { cutout: 'c', output: 'o', thumb: 't' },
        }),
      ).not.toBeNull();
      expect(
        await queue.settleDone(second, 'live-worker', {
          red: false,
          quality: { score: 1, flags: [] },
          meta: {},
          outputFormat: 'png',
          files: { cutout: 'c', output: 'o', thumb: 't' },
        }),
      ).toBeNull();
      const commits = (await store.repos.ledger.list(accountId, { limit: 50 })).filter((r) => r.kind === 'commit');
      expect(commits).toHaveLength(1);
      expect(await store.repos.ledger.sums(accountId)).toEqual({ plan: 9, pack: 0 });
    });

    it('fails a photo that used up its attempts, releasing its credit', async () => {
      const { accountId } = await startedBatch(1);
      for (let i = 0; i < 3; i++) {
        await queue.claimNext(`w${i}`, 1000);
        now += 5000;
        await queue.requeueExpired(3);
      }
      const [item] = await store.repos.items.listForJob((await store.repos.jobs.list(accountId, { limit: 1 }))[0].id);
      expect(item.status).toBe('failed');
      expect(item.error_code).toBe('PROCESSING_FAILED');
      expect((await store.repos.accounts.findById(accountId))!.plan_credits).toBe(10);
    });

    it('keeps balances equal to the ledger through reserve, commit, release and refund', async () => {
      const { accountId, jobId } = await startedBatch(3, 3);
      const a = (await queue.claimNext('w', 60_000))!;
      const b = (await queue.claimNext('w', 60_000))!;
      const c = (await queue.claimNext('w', 60_000))!;
      await queue.settleDone(a, 'w', {
        red: false,
        quality: { score: 1, flags: [] },
        meta: {},
        outputFormat: 'png',
        files: { cutout: 'c', output: 'o', thumb: 't' },
      });
      await queue.settleDone(b, 'w', {
        red: true,
        quality: { score: 1, flags: [] },
        meta: {},
        outputFormat: 'png',
        files: { cutout: 'c', output: 'o', thumb: 't' },
      });
      await queue.settleFailed(c, 'w', new PhotoError('INVALID_IMAGE', 'bad', true));
      const account = (await store.repos.accounts.findById(accountId))!;
      expect(account.plan_credits).toBe(2);
      expect(await store.repos.ledger.sums(accountId)).toEqual({
        plan: account.plan_credits,
        pack: account.pack_credits,
      });
      const job = (await store.repos.jobs.findById(jobId))!;
      expect(job.status).toBe('done');
      expect(job.expires_at).toBe(job.finished_at! + 7_200_000);
      const events = await store.repos.events.listForJob(jobId);
      expect(events.map((e) => e.event)).toEqual([
        'job.started',
        'item.done',
        'item.needs_review',
        'item.failed',
        'job.done',
      ]);
      expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    });

    it("a transaction locks an account's row once and reads it as it changed it; outside one, every read asks again", async () => {
      const { accountId } = await accounts.createAccount({ email: `${Math.random()}@x.test`, plan: 5, pack: 2 });
      await store.transaction(async (r) => {
        const first = (await r.accounts.findForUpdate(accountId))!;
        const at = first.ledger_clock_us + 1;
        await r.accounts.recordMovement(
          accountId,
          { plan: first.plan_credits - 1, pack: first.pack_credits, ledgerClockUs: at },
          [
            {
              account_id: accountId,
              job_id: null,
              item_id: null,
              kind: 'adjust',
              pool: 'plan',
              amount: -1,
              units: 1,
              balance_after: first.plan_credits - 1,
              reason: 'test',
              created_at: Math.floor(at / 1000),
              at_us: at,
            },
          ],
        );
        const second = (await r.accounts.findForUpdate(accountId))!;
        expect([second.plan_credits, second.ledger_clock_us]).toEqual([4, first.ledger_clock_us + 1]);
        second.plan_credits = 99; // a copy: the caller's changes are not the row's
        await r.accounts.update(accountId, { pack_credits: 7 });
        const third = (await r.accounts.findForUpdate(accountId))!;
        expect([third.plan_credits, third.pack_credits]).toEqual([4, 7]);
      });
      // Outside a transaction nothing is kept: a change made elsewhere is seen.
      await store.repos.accounts.findForUpdate(accountId);
      await store.transaction((r) => r.accounts.update(accountId, { plan_credits: 3 }));
      expect((await store.repos.accounts.findForUpdate(accountId))!.plan_credits).toBe(3);
    });

    it('counts requests at once to the limit and not one past it (compare-and-set, no lock)', async () => {
      const limits = new RateLimitService({ store, clock, rules: rateLimitRules(20, 100) });
      const subject = `key-${Math.random()}`;
      const outcomes = await Promise.allSettled(Array.from({ length: 30 }, () => limits.hit(subject)));
      const granted = outcomes.filter((o) => o.status === 'fulfilled');
      expect(granted).toHaveLength(20);
      expect(outcomes.filter((o) => o.status === 'rejected').map((o) => o.reason.code)).toEqual(
        Array(10).fill('RATE_LIMITED'),
      );
      const remaining = granted.map((o) => o.value.requests.remaining).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect((await store.repos.rateLimits.read(subject))!.requests).toEqual([[now - (now % 1000), 20]]);
    });

    it('two processes counting one key stay exact, and a refusal is never given on what a process remembers', async () => {
      const rules = rateLimitRules(20, 100);
      const [a, b] = [new RateLimitService({ store, clock, rules }), new RateLimitService({ store, clock, rules })];
      const subject = `key-${Math.random()}`;
      // Taking turns, each process's remembered windows are stale at every request: the row decides.
      const outcomes: PromiseSettledResult<unknown>[] = [];
      for (let i = 0; i < 30; i++) outcomes.push(...(await Promise.allSettled([(i % 2 ? a : b).hit(subject)])));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(20);
      expect((await store.repos.rateLimits.read(subject))!.requests).toEqual([[now - (now % 1000), 20]]);
      // The row goes (idle rows are swept): `a` remembers a full window, yet the next request is counted.
      await store.repos.rateLimits.deleteIdleSince(now + 1);
      const counted = await a.hit(subject);
      expect(counted.requests.remaining).toBe(19);
    });

    it('deletes batches two hours after they finish', async () => {
      const { accountId, jobId } = await startedBatch(1);
      const item = (await queue.claimNext('w', 60_000))!;
      await queue.settleDone(item, 'w', {
        red: false,
        quality: { score: 1, flags: [] },
        meta: {},
        outputFormat: 'png',
        files: { cutout: 'c', output: 'o', thumb: 't' },
      });
      expect(await queue.deleteExpired()).toBe(0);
      now += 7_200_001;
      expect(await queue.deleteExpired()).toBeGreaterThanOrEqual(1);
      await expect(queries.getJob(accountId, jobId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('remembers an idempotency key once per account and scope', async () => {
      const row = {
        account_id: 'acc',
        scope: 's',
        key: 'k1234567',
        fingerprint: 'f',
        state: 'in_progress' as const,
        status_code: null,
        response: null,
        created_at: now,
        locked_until: null,
      };
      expect(await store.repos.idempotency.begin(row)).toBeUndefined();
      expect((await store.repos.idempotency.begin(row))!.state).toBe('in_progress');
      expect(await store.repos.idempotency.begin({ ...row, scope: 'other' })).toBeUndefined();
    });
  });
}
