// Money is a ledger: every credit movement is a row written in the same transaction as the state
// change it pays for. Balances live on the account row and always equal the ledger's sum per pool.
//   reserve  (-n) when photos are queued: plan pool first, then pack
//   commit   (0)  when a photo finishes clean: the reservation becomes a charge
//   release  (+n) when a photo fails, is flagged, is stopped or deleted before it ran
import { AppError } from '../errors.ts';
import type { Repos } from '../db/store.ts';
import type { ItemRow } from '../db/schema.ts';

export type Pool = 'plan' | 'pack';
export const SPEND_ORDER: readonly Pool[] = ['plan', 'pack'];

export interface Allocation {
  plan: number;
  pack: number;
}

export class CreditsService {
  /** Holds `credits` for each photo; all or nothing. Throws NO_CREDITS with `needed` and `balance`. */
  async reserve(r: Repos, accountId: string, jobId: string, wants: { id: string; credits: number }[], now: number): Promise<Map<string, Allocation>> {
    const account = await r.accounts.findForUpdate(accountId);
    if (!account) throw new AppError('INVALID_KEY', 'The account of this key no longer exists.');
    const needed = wants.reduce((sum, w) => sum + w.credits, 0);
    const balance = account.plan_credits + account.pack_credits;
    if (needed > balance) {
      throw new AppError('NO_CREDITS', `Starting needs ${needed} credits; the account has ${balance}.`, { needed, balance });
    }
    let plan = account.plan_credits;
    let pack = account.pack_credits;
    const allocations = new Map<string, Allocation>();
    for (const want of wants) {
      const fromPlan = Math.min(plan, want.credits);
      plan -= fromPlan;
      pack -= want.credits - fromPlan;
      allocations.set(want.id, { plan: fromPlan, pack: want.credits - fromPlan });
    }
    const rows = [];
    const usedPlan = account.plan_credits - plan;
    const usedPack = account.pack_credits - pack;
    if (usedPlan) rows.push({ pool: 'plan', amount: -usedPlan, units: usedPlan, balance_after: plan });
    if (usedPack) rows.push({ pool: 'pack', amount: -usedPack, units: usedPack, balance_after: pack });
    await r.accounts.setBalances(accountId, plan, pack);
    await r.ledger.insert(rows.map((row) => ({ ...row, account_id: accountId, job_id: jobId, item_id: null, kind: 'reserve', reason: `${wants.length} photo(s) queued`, created_at: now })));
    return allocations;
  }

  /** Turns a photo's reservation into a charge. Returns the credits charged. */
  async commit(r: Repos, item: ItemRow, now: number): Promise<number> {
    const account = await r.accounts.findForUpdate(item.account_id);
    const rows = [];
    for (const pool of SPEND_ORDER) {
      const n = pool === 'plan' ? item.reserved_plan : item.reserved_pack;
      if (n) rows.push({ pool, amount: 0, units: n, balance_after: pool === 'plan' ? account!.plan_credits : account!.pack_credits });
    }
    await r.ledger.insert(rows.map((row) => ({ ...row, account_id: item.account_id, job_id: item.job_id, item_id: item.id, kind: 'commit', reason: 'photo finished clean', created_at: now })));
    return item.reserved_plan + item.reserved_pack;
  }

  /** Gives a photo's reservation back to the pools it came from. */
  async release(r: Repos, item: Pick<ItemRow, 'id' | 'job_id' | 'account_id' | 'reserved_plan' | 'reserved_pack'>, now: number, reason: string): Promise<void> {
    if (!item.reserved_plan && !item.reserved_pack) return;
    const account = await r.accounts.findForUpdate(item.account_id);
    if (!account) return;
    const plan = account.plan_credits + item.reserved_plan;
    const pack = account.pack_credits + item.reserved_pack;
    await r.accounts.setBalances(item.account_id, plan, pack);
    const rows = [];
    if (item.reserved_plan) rows.push({ pool: 'plan', amount: item.reserved_plan, units: item.reserved_plan, balance_after: plan });
    if (item.reserved_pack) rows.push({ pool: 'pack', amount: item.reserved_pack, units: item.reserved_pack, balance_after: pack });
    await r.ledger.insert(rows.map((row) => ({ ...row, account_id: item.account_id, job_id: item.job_id, item_id: item.id, kind: 'release', reason, created_at: now })));
  }

  /** Adds credits to a pool (account creation, admin grants). */
  async grant(r: Repos, accountId: string, pool: Pool, amount: number, kind: 'grant' | 'welcome' | 'purchase' | 'adjust', reason: string, now: number): Promise<void> {
    if (!amount) return;
    const account = await r.accounts.findForUpdate(accountId);
    if (!account) throw new AppError('NOT_FOUND', 'No such account.');
    const plan = account.plan_credits + (pool === 'plan' ? amount : 0);
    const pack = account.pack_credits + (pool === 'pack' ? amount : 0);
    if (plan < 0 || pack < 0) throw new AppError('VALIDATION', 'A pool cannot go below zero.');
    await r.accounts.setBalances(accountId, plan, pack);
    await r.ledger.insert([{ account_id: accountId, job_id: null, item_id: null, kind, pool, amount, units: Math.abs(amount), balance_after: pool === 'plan' ? plan : pack, reason, created_at: now }]);
  }
}
