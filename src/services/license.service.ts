// Licences: codes an operator creates (tier, monthly allowance, photos per batch) and a studio user
// redeems. States: purchased (created, not redeemed) → active (redeemed; the plan pool renews monthly on
// the activation date) → deactivated (operator; renewals stop, credits already given stay) → active
// again (operator), or refunded (operator, from any state: renewals stop and what is left of the plan
// pool expires at once).
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Store } from '../db/store.ts';
import type { LicenseRow } from '../db/schema.ts';
import type { CreditsService } from './credits.service.ts';
import { newSecret, sha256 } from './secrets.ts';
import { nextMonthlyRefresh } from '../domain/calendar.ts';
import type { LicenseStatus } from '../domain/account-states.ts';

const CODE_PATTERN = /^lic_[0-9A-Za-z]{24}$/;

export interface LicenseAdminView {
  id: string;
  codePrefix: string;
  tier: number;
  allowance: number;
  jobLimit: number;
  status: string;
  accountId: string | null;
  createdAt: string;
  activatedAt: string | null;
  nextRefreshAt: string | null;
}

function licenseAdminView(row: LicenseRow): LicenseAdminView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    codePrefix: row.code_prefix,
    tier: row.tier,
    allowance: row.allowance,
    jobLimit: row.job_limit,
    status: row.status,
    accountId: row.account_id,
    createdAt: iso(row.created_at)!,
    activatedAt: iso(row.activated_at),
    nextRefreshAt: row.status === 'active' ? iso(row.next_refresh_at) : null,
  };
}

export class LicenseService {
  constructor(
    private readonly deps: { store: Store; credits: CreditsService; clock: () => number; maxPhotosPerBatch: number },
  ) {}

  async create(input: {
    tier: number;
    allowance: number;
    jobLimit: number;
    count: number;
  }): Promise<{ code: string; license: LicenseAdminView }[]> {
    const whole = (v: number, name: string, min: number, max: number) => {
      if (!Number.isInteger(v) || v < min || v > max)
        throw new AppError('VALIDATION', `${name} must be a whole number from ${min} to ${max}.`);
    };
    whole(input.tier, 'tier', 1, 100);
    whole(input.allowance, 'allowance', 0, 10_000_000);
    whole(input.jobLimit, 'job limit', 1, this.deps.maxPhotosPerBatch);
    whole(input.count, 'count', 1, 1000);
    const out = [];
    for (let i = 0; i < input.count; i++) {
      const code = newSecret('lic_', 24);
      const row: LicenseRow = {
        id: newId('lic'),
        code_hash: sha256(code),
        code_prefix: code.slice(0, 8),
        tier: input.tier,
        allowance: input.allowance,
        job_limit: input.jobLimit,
        status: 'purchased',
        account_id: null,
        created_at: this.deps.clock(),
        activated_at: null,
        next_refresh_at: null,
      };
      await this.deps.store.repos.licenses.insert(row);
      out.push({ code, license: licenseAdminView(row) });
    }
    return out;
  }

  async list(status?: LicenseStatus): Promise<LicenseAdminView[]> {
    return (await this.deps.store.repos.licenses.list({ status })).map(licenseAdminView);
  }

  /** A studio user redeems a code: it becomes the account's licence, and the first allowance arrives at once. */
  async redeem(accountId: string, code: string): Promise<void> {
    const trimmed = code.trim();
    if (!CODE_PATTERN.test(trimmed))
      throw new AppError('VALIDATION', 'That is not a licence code (lic_ and 24 letters or digits).', {
        errors: [{ path: 'body/code', message: 'must be a licence code' }],
      });
    const now = this.deps.clock();
    await this.deps.store.transaction(async (r) => {
      const license = await r.licenses.findByCodeHash(sha256(trimmed));
      if (!license) throw new AppError('NOT_FOUND', 'No licence with that code.');
      if (license.status !== 'purchased')
        throw new AppError('CONFLICT', `This licence code was redeemed already (it is ${license.status}).`, {
          reason: 'ALREADY_REDEEMED',
        });
      const account = await r.accounts.findForUpdate(accountId);
      if (account?.license_id) {
        const current = await r.licenses.findById(account.license_id);
        if (current?.status === 'active')
          throw new AppError('CONFLICT', 'The account has an active licence already.', { reason: 'LICENSE_ACTIVE' });
      }
      // Compare-and-set: two redemptions of one code at once activate it once.
      if (!(await r.licenses.update(license.id, { status: 'active' }, 'purchased')))
        throw new AppError('CONFLICT', 'This licence code was redeemed already.', { reason: 'ALREADY_REDEEMED' });
      await this.deps.credits.activateLicense(r, accountId, license, now);
    });
  }

  /** Operator state changes; see the header comment for the transitions. */
  async setStatus(licenseId: string, status: 'active' | 'deactivated' | 'refunded'): Promise<LicenseAdminView> {
    const now = this.deps.clock();
    return this.deps.store.transaction(async (r) => {
      const license = await r.licenses.findById(licenseId);
      if (!license) throw new AppError('NOT_FOUND', `No licence ${licenseId}.`);
      const allowed: Record<string, string[]> = {
        active: ['deactivated'],
        deactivated: ['active'],
        refunded: ['purchased', 'active', 'deactivated'],
      };
      if (!allowed[status].includes(license.status))
        throw new AppError('CONFLICT', `A ${license.status} licence cannot become ${status}.`, {
          reason: 'BAD_TRANSITION',
        });
      if (status === 'refunded' && license.account_id) {
        const account = await r.accounts.findById(license.account_id);
        if (account && account.plan_credits > 0)
          await this.deps.credits.grant(
            r,
            account.id,
            'plan',
            -account.plan_credits,
            'adjust',
            `licence ${license.id} refunded: plan credits withdrawn`,
            now,
          );
      }
      const next =
        status === 'active' && license.activated_at !== null
          ? nextMonthlyRefresh(license.activated_at, now)
          : license.next_refresh_at;
      await r.licenses.update(licenseId, { status, next_refresh_at: next });
      return licenseAdminView({ ...license, status, next_refresh_at: next });
    });
  }

  /** The sweep renews due licences even for accounts nobody reads. */
  async renewDue(): Promise<number> {
    const now = this.deps.clock();
    const due = await this.deps.store.repos.licenses.listDue(now, 100);
    for (const license of due)
      if (license.account_id)
        await this.deps.store.transaction((r) => this.deps.credits.renew(r, license.account_id!, now));
    return due.length;
  }
}
