// The ledger's invariants after a randomized history, on SQLite and PostgreSQL: starts (with samples),
// cancels, continues, photos that finish clean, are flagged (refunded), fail, or lose their worker and
// run again, deletions, purchases, grants, corrections and monthly plan renewals, several at a time.
// After it, for every account: the ledger sums to the balances, no balance was ever negative, and every
// reservation was settled exactly once (reserved = released + committed + still held).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.ts';
import { Store } from '../../src/db/store.ts';
import { LicenseService } from '../../src/services/license.service.ts';
import { PurchaseService } from '../../src/services/purchase.service.ts';
import { OperatorApprovalProvider } from '../../src/adapters/payments/operator-approval.adapter.ts';
import { AppError, PhotoError } from '../../src/errors.ts';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { dbTierServices } from '../helpers/services.ts';
import { productPhoto } from '../helpers/images.ts';

/** Refusals a random history may meet; anything else (a deadlock, a crash) fails the test. */
const EXPECTED = new Set([
  'NO_CREDITS',
  'TOO_MANY_ACTIVE',
  'NOT_RUNNING',
  'CONFLICT',
  'NOT_DRAFT',
  'VALIDATION',
  'NOT_FOUND',
]);

function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

for (const { dialect, skip } of DIALECTS) {
  describe.skipIf(skip)(`ledger invariants on ${dialect}`, () => {
    let tdb: TestDatabase;
    let store: Store;
    let now = Date.UTC(2027, 0, 31, 12);
    const clock = () => now;
    const LEASE = 10_000;

    beforeAll(async () => {
      tdb = await createTestDatabase(dialect);
      store = new Store(await createDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir }));
    });
    afterAll(async () => {
      await store?.close();
      await tdb?.drop();
    });

    it('holds after a randomized history of 400 operations, several at a time', async () => {
      const seed = Number(process.env.MATTE_INVARIANT_SEED ?? Date.now() % 100000);
      const random = prng(seed);
      const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(random() * xs.length)];
      const { credits, accounts, batches, queries, intake, queue } = dbTierServices(store, tdb.dataDir, clock);
      const licenses = new LicenseService({ store, credits, clock, maxPhotosPerBatch: 200 });
      const purchases = new PurchaseService({ store, credits, clock, provider: new OperatorApprovalProvider() });
      const photo = await productPhoto(48, 36);

      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push(
          (await accounts.createAccount({ email: `inv${i}-${seed}-${dialect}@x.test`, plan: 5 + i * 3, pack: i }))
            .accountId,
        );
      const [{ code }] = await licenses.create({ tier: 1, allowance: 12, jobLimit: 200, count: 1 });
      await licenses.redeem(ids[0], code);
      const jobsOf = new Map<string, string[]>(ids.map((id) => [id, []]));
      const counts: Record<string, number> = {};

      const ops: Record<string, () => Promise<unknown>> = {
        async start() {
          const accountId = pick(ids)!;
          const job = await batches.createJob(accountId, {}, null);
          jobsOf.get(accountId)!.push(job.id);
          const n = 1 + Math.floor(random() * 4);
          await intake.addPhotos(
            accountId,
            job.id,
            Array.from({ length: n }, (_, i) => ({ name: `${i}.jpg`, data: photo })),
          );
          const sample = random() < 0.3 && n > 1 ? { sample: 1 } : {};
          return batches.start(accountId, job.id, sample);
        },
        async cancel() {
          const accountId = pick(ids)!;
          const jobId = pick(jobsOf.get(accountId)!);
          return jobId && batches.cancel(accountId, jobId);
        },
        async continue() {
          const accountId = pick(ids)!;
          const jobId = pick(jobsOf.get(accountId)!);
          return jobId && batches.continue(accountId, jobId);
        },
        async work() {
          const owner = `w${Math.floor(random() * 3)}`;
          const item = await queue.claimNext(owner, LEASE);
          if (!item) return;
          const roll = random();
          if (roll < 0.5)
            return queue.settleDone(item, owner, {
              red: false,
              quality: { score: 90, flags: [] },
              meta: {},
              outputFormat: 'png',
              files: { cutout: 'c', output: 'o', thumb: 't' },
            });
          if (roll < 0.65)
            return queue.settleDone(item, owner, {
              red: true,
              quality: { score: 20, flags: [] },
              meta: {},
              outputFormat: 'png',
              files: { cutout: 'c', output: 'o', thumb: 't' },
            });
          if (roll < 0.8) return queue.settleFailed(item, owner, new PhotoError('INVALID_IMAGE', 'broken', true));
          // The worker dies: after the lease the photo is queued again (or fails after three attempts).
          now += LEASE + 1;
          return queue.requeueExpired(3);
        },
        async deleteJob() {
          const accountId = pick(ids)!;
          const list = jobsOf.get(accountId)!;
          const jobId = pick(list);
          if (!jobId) return;
          await batches.deleteJob(accountId, jobId);
          list.splice(list.indexOf(jobId), 1);
        },
        async deleteItem() {
          const accountId = pick(ids)!;
          const jobId = pick(jobsOf.get(accountId)!);
          if (!jobId) return;
          const job = await queries.getJob(accountId, jobId);
          const item = pick(job.items);
          return item && batches.deleteItems(accountId, jobId, [item.id]);
        },
        async purchase() {
          const bought = await purchases.buy(pick(ids)!, 'pack-100');
          return random() < 0.8 ? purchases.complete(bought.id) : purchases.cancel(bought.id);
        },
        async grant() {
          const pool = random() < 0.5 ? 'plan' : 'pack';
          const adjust = random() < 0.4;
          const amount = adjust ? Math.floor(random() * 9) - 6 : 1 + Math.floor(random() * 5);
          return store.transaction((r) =>
            credits.grant(r, pick(ids)!, pool, amount, adjust ? 'adjust' : 'grant', 'random', now),
          );
        },
        async renew() {
          now += Math.floor(random() * 12) * 86_400_000;
          return licenses.renewDue();
        },
      };
      const weights: [string, number][] = [
        ['start', 5],
        ['cancel', 2],
        ['continue', 2],
        ['work', 8],
        ['deleteJob', 1],
        ['deleteItem', 1],
        ['purchase', 1],
        ['grant', 2],
        ['renew', 1],
      ];
      const total = weights.reduce((s, [, w]) => s + w, 0);
      const choose = () => {
        let x = random() * total;
        for (const [name, w] of weights) if ((x -= w) < 0) return name;
        return 'work';
      };

      for (let done = 0; done < 400;) {
        const group = Array.from({ length: 1 + Math.floor(random() * 4) }, choose);
        done += group.length;
        const results = await Promise.allSettled(group.map((name) => ops[name]()));
        results.forEach((r, i) => {
          counts[group[i]] = (counts[group[i]] ?? 0) + 1;
          if (r.status === 'rejected') {
            const err = r.reason as unknown;
            if (!(err instanceof AppError && EXPECTED.has(err.code)))
              throw new Error(`seed ${seed}: ${group[i]} failed: ${(err as Error).stack ?? err}`);
          }
        });
      }
      // Drain: every queued photo runs to the end, so every reservation settles.
      for (;;) {
        const item = await queue.claimNext('drain', LEASE);
        if (!item) break;
        await queue.settleDone(item, 'drain', {
          red: false,
          quality: { score: 90, flags: [] },
          meta: {},
          outputFormat: 'png',
          files: { cutout: 'c', output: 'o', thumb: 't' },
        });
      }
      // A renewal with plan credits left, whatever the seed: some histories spend every plan credit
      // before each renewal, and the expiry path would go untested by them.
      await store.transaction((r) => credits.grant(r, ids[0], 'plan', 2, 'grant', 'left for the last renewal', now));
      now += 32 * 86_400_000;
      expect(await licenses.renewDue()).toBeGreaterThan(0);

      for (const accountId of ids) {
        const account = (await store.repos.accounts.findById(accountId))!;
        const rows = await store.repos.ledger.listForAccount(accountId);
        const sums = await store.repos.ledger.sums(accountId);
        expect(sums, `seed ${seed}`).toEqual({ plan: account.plan_credits, pack: account.pack_credits });
        expect(account.plan_credits).toBeGreaterThanOrEqual(0);
        expect(account.pack_credits).toBeGreaterThanOrEqual(0);
        // Replaying the rows in order reproduces every balanceAfter, none below zero, with unique increasing times.
        const running = { plan: 0, pack: 0 };
        let lastUs = 0;
        for (const row of rows) {
          running[row.pool as 'plan' | 'pack'] += row.amount;
          expect(row.balance_after, `seed ${seed} row ${row.id}`).toBe(running[row.pool as 'plan' | 'pack']);
          expect(row.balance_after).toBeGreaterThanOrEqual(0);
          expect(row.at_us).toBeGreaterThan(lastUs);
          lastUs = row.at_us;
        }
        // Every reservation settled exactly once, per photo and pool.
        const perItem = new Map<string, { reserved: number; released: number; committed: number }>();
        for (const row of rows) {
          if (!row.item_id) continue;
          const key = `${row.item_id}:${row.pool}`;
          const e = perItem.get(key) ?? { reserved: 0, released: 0, committed: 0 };
          if (row.kind === 'reserve') e.reserved += -row.amount;
          if (row.kind === 'release') e.released += row.amount;
          if (row.kind === 'commit') e.committed += row.units;
          perItem.set(key, e);
        }
        for (const [key, e] of perItem) {
          const [itemId, pool] = key.split(':');
          const item = await store.repos.items.findById(itemId);
          const open = item ? (pool === 'plan' ? item.reserved_plan : item.reserved_pack) : 0;
          const history = () =>
            rows
              .filter((r) => r.item_id === itemId)
              .map((r) => `${r.kind} ${r.pool} ${r.amount}/${r.units} (${r.reason})`)
              .join('; ');
          expect(e.reserved, `seed ${seed} ${key}: ${history()}`).toBe(e.released + e.committed + open);
          expect(open, `seed ${seed} ${key} still reserved after the drain`).toBe(0);
        }
        // What photos say they were charged is what the ledger committed.
        const charged = (
          await Promise.all(
            (await store.repos.jobs.listIdsForAccount(accountId)).map((j) => store.repos.items.listForJob(j)),
          )
        ).flat();
        for (const item of charged) {
          const committed = [...perItem]
            .filter(([k]) => k.startsWith(`${item.id}:`))
            .reduce((s, [, e]) => s + e.committed, 0);
          expect(item.charged, `seed ${seed} ${item.id}`).toBeLessThanOrEqual(committed);
        }
      }
      // The history was rich enough to mean something.
      const kinds = new Set(
        (await Promise.all(ids.map((id) => store.repos.ledger.listForAccount(id)))).flat().map((r) => r.kind),
      );
      for (const kind of ['reserve', 'commit', 'release', 'welcome', 'purchase', 'grant', 'refresh', 'expire'])
        expect(kinds, `seed ${seed}: no ${kind} row`).toContain(kind);
      expect(counts.work).toBeGreaterThan(50);
    });
  });
}
