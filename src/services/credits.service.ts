// Money is a ledger: every credit movement is a row written in the same transaction as the state
// change it pays for, under a lock on the account row. Balances live on the account row and always
// equal the ledger's sum per pool (tests check it after randomized histories on both databases).
//   reserve  (-n) a photo is queued: one row per photo and pool, plan pool first, then pack
//   commit   (0)  the photo finished clean: its reservation becomes a charge (units = credits charged)
//   release  (+n) the photo failed, was flagged, stopped or deleted before it ran: back to its pools
//   claim    (+n) a report the pixel check confirmed: the charge goes back to its pools
//   welcome, grant, purchase, adjust: credits given at sign-up, by an operator, bought, or corrected
//   refresh  (+n) the licence's monthly allowance; expire (-n) the plan credits left when it renews
// Each row is stamped with the account's ledger clock in microseconds, strictly increasing, so that
// the ledger has one order and pages by time never overlap.
import { AppError } from '../errors.ts';
import type { Repos } from '../db/store.ts';
import type { AccountRow, ItemRow, LicenseRow } from '../db/schema.ts';
import { nextMonthlyRefresh } from '../domain/calendar.ts';
import { CREDIT_POOLS, type CreditPool, type LedgerKind } from '../domain/account-states.ts';

export type Pool = CreditPool;
export const SPEND_ORDER: readonly Pool[] = CREDIT_POOLS;

export interface Allocation {
  plan: number;
  pack: number;
}

/** An active licence whose monthly renewal date has come. */
export function renewalDue(license: LicenseRow | undefined, now: number): boolean {
  return license?.status === 'active' && license.next_refresh_at !== null && license.next_refresh_at <= now;
}

type Reserved = Pick<ItemRow, 'id' | 'job_id' | 'account_id' | 'reserved_plan' | 'reserved_pack'>;

/** An account's balances opened for change: movements are collected, then saved with the rows. */
class Purse {
  private readonly rows: Parameters<Repos['accounts']['recordMovement']>[2] = [];
  private clockUs: number;
  plan: number;
  pack: number;

  constructor(
    readonly account: AccountRow,
    private readonly nowMs: number,
  ) {
    this.plan = account.plan_credits;
    this.pack = account.pack_credits;
    this.clockUs = account.ledger_clock_us;
  }

  get balance(): number {
    return this.plan + this.pack;
  }

  move(
    pool: Pool,
    amount: number,
    units: number,
    kind: LedgerKind,
    reason: string,
    ids: { jobId?: string | null; itemId?: string | null } = {},
  ): void {
    if (pool === 'plan') this.plan += amount;
    else this.pack += amount;
    if (this.plan < 0 || this.pack < 0) throw new AppError('VALIDATION', `The ${pool} pool cannot go below zero.`);
    this.clockUs = Math.max(this.nowMs * 1000, this.clockUs + 1);
    this.rows.push({
      account_id: this.account.id,
      job_id: ids.jobId ?? null,
      item_id: ids.itemId ?? null,
      kind,
      pool,
      amount,
      units,
      balance_after: pool === 'plan' ? this.plan : this.pack,
      reason,
      created_at: Math.floor(this.clockUs / 1000),
      at_us: this.clockUs,
    });
  }

  async save(r: Repos): Promise<void> {
    if (!this.rows.length) return;
    await r.accounts.recordMovement(
      this.account.id,
      { plan: this.plan, pack: this.pack, ledgerClockUs: this.clockUs },
      this.rows,
    );
  }
}

export class CreditsService {
  /**
   * Locks the account row (PostgreSQL: FOR UPDATE; SQLite: the transaction holds the write lock) and
   * applies a plan refresh that fell due, so every movement sees the balances as of `now`.
   */
  private async open(r: Repos, accountId: string, now: number): Promise<Purse> {
    const account = await r.accounts.findForUpdate(accountId);
    if (!account || account.deleted_at !== null)
      throw new AppError('INVALID_KEY', 'The account of this key no longer exists.');
    const purse = new Purse(account, now);
    if (account.license_id) {
      const license = await r.licenses.findById(account.license_id);
      if (license) await this.refreshIfDue(r, purse, license, now);
    }
    return purse;
  }

  /** The monthly renewal: what is left of the plan pool expires, the allowance comes in. Missed months do not pile up. */
  private async refreshIfDue(r: Repos, purse: Purse, license: LicenseRow, now: number): Promise<void> {
    if (!renewalDue(license, now)) return;
    const due = new Date(license.next_refresh_at!).toISOString().slice(0, 10);
    if (purse.plan > 0)
      purse.move('plan', -purse.plan, purse.plan, 'expire', `plan credits of the period ending ${due} expired`);
    purse.move(
      'plan',
      license.allowance,
      license.allowance,
      'refresh',
      `monthly allowance of licence tier ${license.tier}`,
    );
    await r.licenses.update(license.id, { next_refresh_at: nextMonthlyRefresh(license.activated_at!, now) });
  }

  /** Applies a plan refresh that fell due (the maintenance sweep and account reads call this). */
  async renew(r: Repos, accountId: string, now: number): Promise<void> {
    const purse = await this.open(r, accountId, now);
    await purse.save(r);
  }

  /** Holds `credits` for each photo, plan pool first; all or nothing. Throws NO_CREDITS with `needed` and `balance`. */
  async reserve(
    r: Repos,
    accountId: string,
    jobId: string,
    wants: { id: string; credits: number }[],
    now: number,
    reason = 'photo queued',
  ): Promise<Map<string, Allocation>> {
    const purse = await this.open(r, accountId, now);
    const needed = wants.reduce((sum, w) => sum + w.credits, 0);
    if (needed > purse.balance) {
      await purse.save(r); // a refresh that fell due is kept even though the start is refused
      throw new AppError('NO_CREDITS', `This needs ${needed} credits; the account has ${purse.balance}.`, {
        needed,
        balance: purse.balance,
      });
    }
    const allocations = new Map<string, Allocation>();
    for (const want of wants) {
      const fromPlan = Math.min(purse.plan, want.credits);
      const fromPack = want.credits - fromPlan;
      if (fromPlan) purse.move('plan', -fromPlan, fromPlan, 'reserve', reason, { jobId, itemId: want.id });
      if (fromPack) purse.move('pack', -fromPack, fromPack, 'reserve', reason, { jobId, itemId: want.id });
      allocations.set(want.id, { plan: fromPlan, pack: fromPack });
    }
    await purse.save(r);
    return allocations;
  }

  /** Turns a photo's reservation into a charge (amount 0: the credits left the pool at reserve). Returns the credits charged. */
  async commit(r: Repos, item: Reserved, now: number): Promise<number> {
    const purse = await this.open(r, item.account_id, now);
    for (const pool of SPEND_ORDER) {
      const n = pool === 'plan' ? item.reserved_plan : item.reserved_pack;
      if (n) purse.move(pool, 0, n, 'commit', 'photo finished clean', { jobId: item.job_id, itemId: item.id });
    }
    await purse.save(r);
    return item.reserved_plan + item.reserved_pack;
  }

  /** Gives a photo's reservation back to the pools it came from. */
  async release(r: Repos, item: Reserved, now: number, reason: string): Promise<void> {
    if (!item.reserved_plan && !item.reserved_pack) return;
    const purse = await this.open(r, item.account_id, now).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'INVALID_KEY') return null; // the account is being deleted
      throw err;
    });
    if (!purse) return;
    if (item.reserved_plan)
      purse.move('plan', item.reserved_plan, item.reserved_plan, 'release', reason, {
        jobId: item.job_id,
        itemId: item.id,
      });
    if (item.reserved_pack)
      purse.move('pack', item.reserved_pack, item.reserved_pack, 'release', reason, {
        jobId: item.job_id,
        itemId: item.id,
      });
    await purse.save(r);
  }

  /** A report the pixel check confirmed: the photo's charge goes back to the pools it was taken from. Returns the credits. */
  async refundClaim(
    r: Repos,
    item: Pick<ItemRow, 'id' | 'job_id' | 'account_id' | 'charged_plan' | 'charged_pack'>,
    now: number,
  ): Promise<number> {
    const purse = await this.open(r, item.account_id, now);
    for (const pool of SPEND_ORDER) {
      const n = pool === 'plan' ? item.charged_plan : item.charged_pack;
      if (n)
        purse.move(pool, n, n, 'claim', 'report confirmed by the pixel check', { jobId: item.job_id, itemId: item.id });
    }
    await purse.save(r);
    return item.charged_plan + item.charged_pack;
  }

  /** Adds (or with `adjust`, also removes) credits: sign-up, operator grants and corrections, purchases. */
  async grant(
    r: Repos,
    accountId: string,
    pool: Pool,
    amount: number,
    kind: 'grant' | 'welcome' | 'purchase' | 'adjust',
    reason: string,
    now: number,
  ): Promise<AccountRow> {
    if (!Number.isInteger(amount) || (kind !== 'adjust' && amount < 0))
      throw new AppError('VALIDATION', `A ${kind} adds a whole number of credits, 0 or more.`);
    const purse = await this.open(r, accountId, now);
    if (amount) {
      if (pool === 'plan' ? purse.plan + amount < 0 : purse.pack + amount < 0) {
        throw new AppError(
          'VALIDATION',
          `The ${pool} pool holds ${pool === 'plan' ? purse.plan : purse.pack} credits; it cannot go below zero.`,
        );
      }
      purse.move(pool, amount, Math.abs(amount), kind, reason);
    }
    await purse.save(r);
    return { ...purse.account, plan_credits: purse.plan, pack_credits: purse.pack };
  }

  /** A licence code was redeemed: it becomes the account's licence and its first allowance arrives now. */
  async activateLicense(r: Repos, accountId: string, license: LicenseRow, now: number): Promise<void> {
    const purse = await this.open(r, accountId, now);
    purse.move(
      'plan',
      license.allowance,
      license.allowance,
      'refresh',
      `licence tier ${license.tier} activated: first monthly allowance`,
    );
    await r.licenses.update(license.id, {
      status: 'active',
      account_id: accountId,
      activated_at: now,
      next_refresh_at: nextMonthlyRefresh(now, now),
    });
    await r.accounts.setLicense(accountId, license.id);
    await purse.save(r);
  }
}
