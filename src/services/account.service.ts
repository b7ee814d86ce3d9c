// Accounts, API keys and what GET /v1/account tells. A key is shown once; only its SHA-256 and a
// display prefix are stored. A request is judged on its bearer alone (see http/plugins/auth.plugin.ts).
import { AppError, unlessFull } from '../errors.ts';
import { newId } from '../ids.ts';
import { formatMicros, parseMicros } from '../domain/instant.ts';
import type { Repos, Store } from '../db/store.ts';
import type { AccountRow, ApiKeyRow, LicenseRow } from '../db/schema.ts';
import type { CreditsService } from './credits.service.ts';
import { renewalDue, SPEND_ORDER } from './credits.service.ts';
import { daysUntil } from '../domain/calendar.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from './password.ts';
import { newSecret, sha256 } from './secrets.ts';
import type { Config } from '../config.ts';
import { MAX_ACTIVE_BATCHES, MAX_PHOTOS_PER_BATCH } from '../domain/batch-rules.ts';

const KEY_PATTERN = /^mk_[0-9A-Za-z]{40}$/;
/** `mk_` and 8 characters: enough to tell keys apart, far too few to guess the rest (40 base62 ≈ 238 bits). */
const DISPLAY_LENGTH = 11;
const MAX_ACTIVE_KEYS = 10;

export interface AuthContext {
  accountId: string;
  via: 'key' | 'session';
  /** The key's id, or the session's, for per-credential rate limits. */
  credentialId: string;
  keyPrefix: string | null;
}

export interface AccountLimits {
  photosPerBatch: number;
  activeBatches: number;
  requestsPerMinute: number;
  photosPerHour: number;
  resultsKeptForHours: number;
}

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  state: 'active' | 'revoked';
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export function keyView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    state: row.revoked_at === null ? 'active' : 'revoked',
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

export function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254)
    throw new AppError('VALIDATION', `"${raw}" is not an email address.`, {
      errors: [{ path: 'email', message: 'must be an email address' }],
    });
  return email;
}

function checkPasswordStrength(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024) {
    throw new AppError('VALIDATION', `A password has ${MIN_PASSWORD_LENGTH} to 1024 characters.`, {
      errors: [{ path: 'password', message: `must be ${MIN_PASSWORD_LENGTH}-1024 characters` }],
    });
  }
}

/**
 * What GET /v1/account answers from the server's configuration, the same in the server and in bin/matte: the
 * limits, and whether the heavy tier is a model of its own. That is read from the configuration, not from a
 * loaded model, so an API-only process answers for the workers beside it.
 */
export function accountTerms(config: Readonly<Config>): { limits: AccountLimits; heavyModel: boolean } {
  return {
    limits: {
      photosPerBatch: MAX_PHOTOS_PER_BATCH,
      activeBatches: MAX_ACTIVE_BATCHES,
      requestsPerMinute: config.requestsPerMinute,
      photosPerHour: config.photosPerHour,
      resultsKeptForHours: Math.max(1, Math.round(config.resultTtlMs / 3_600_000)),
    },
    heavyModel: Boolean(config.inferenceHeavyUrl || config.heavyModelPath),
  };
}

export class AccountService {
  constructor(
    private readonly deps: {
      store: Store;
      credits: CreditsService;
      clock: () => number;
      limits: AccountLimits;
      /** Whether the operator runs a heavy model of its own (segment.ts); without one, heavy runs the light model. */
      heavyModel: boolean;
    },
  ) {}

  /**
   * What GET /v1/account says in X-Matte-Heavy-Model: `stronger` when the heavy tier runs a model of its own,
   * `none` when a heavy re-run runs the light model again (the same cut-out). The Account object itself stays
   * as the specification closes it.
   */
  get heavyModel(): 'stronger' | 'none' {
    return this.deps.heavyModel ? 'stronger' : 'none';
  }

  /**
   * A page of the account's ledger, newest first: `limit` rows before the instant `before` (ISO 8601,
   * as a page's `nextBefore` gives it), and whether more are older; `jobId` keeps one batch's rows.
   */
  async ledgerPage(accountId: string, page: { limit: number; before?: string; jobId?: string }) {
    let beforeUs: number | undefined;
    if (page.before !== undefined) {
      beforeUs = parseMicros(page.before);
      if (beforeUs === undefined) {
        throw new AppError('VALIDATION', 'before must be an ISO 8601 date-time with a timezone, such as nextBefore.', {
          errors: [{ path: 'querystring/before', message: 'must be ISO 8601 with timezone' }],
        });
      }
    }
    const rows = await this.deps.store.repos.ledger.list(accountId, {
      limit: page.limit + 1,
      beforeUs,
      jobId: page.jobId,
    });
    const entries = rows.slice(0, page.limit);
    const hasMore = rows.length > page.limit;
    return {
      entries: entries.map((r) => ({
        id: Number(r.id),
        jobId: r.job_id,
        itemId: r.item_id,
        kind: r.kind,
        pool: r.pool,
        amount: r.amount,
        units: r.units,
        balanceAfter: r.balance_after,
        reason: r.reason,
        createdAt: formatMicros(r.at_us),
      })),
      hasMore,
      nextBefore: hasMore ? formatMicros(entries[entries.length - 1].at_us) : null,
    };
  }

  async createAccount(input: {
    email: string;
    plan: number;
    pack: number;
    password?: string;
  }): Promise<{ accountId: string; apiKey: string }> {
    const { store, credits, clock } = this.deps;
    const now = clock();
    const email = normaliseEmail(input.email);
    if (!Number.isInteger(input.plan) || input.plan < 0 || !Number.isInteger(input.pack) || input.pack < 0) {
      throw new AppError('VALIDATION', 'plan and pack must be whole numbers of credits, 0 or more.');
    }
    if (input.password !== undefined) checkPasswordStrength(input.password);
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    return store.transaction(async (r) => {
      if (await r.accounts.findByEmail(email))
        throw new AppError('CONFLICT', `An account with email ${email} exists already.`, { reason: 'EMAIL_TAKEN' });
      const accountId = newId('acc');
      await r.accounts.insert({
        id: accountId,
        email,
        plan_credits: 0,
        pack_credits: 0,
        created_at: now,
        password_hash: passwordHash,
        license_id: null,
        deleted_at: null,
        ledger_clock_us: 0,
      });
      await credits.grant(r, accountId, 'plan', input.plan, 'welcome', 'plan credits at account creation', now);
      await credits.grant(r, accountId, 'pack', input.pack, 'welcome', 'pack credits at account creation', now);
      const apiKey = await this.insertKey(r, accountId, 'default', now);
      return { accountId, apiKey };
    });
  }

  async setPassword(accountId: string, password: string): Promise<void> {
    checkPasswordStrength(password);
    const hash = await hashPassword(password);
    await this.deps.store.transaction(async (r) => {
      await this.requireAccount(r, accountId);
      await r.accounts.update(accountId, { password_hash: hash });
      // A new password signs every studio session out.
      await r.sessions.deleteForAccount(accountId);
    });
  }

  async requireAccount(r: Repos, accountId: string): Promise<AccountRow> {
    const account = await r.accounts.findById(accountId);
    if (!account || account.deleted_at !== null) throw new AppError('NOT_FOUND', `No account ${accountId}.`);
    return account;
  }

  // ---- keys ----------------------------------------------------------------------------------------

  async createKey(accountId: string, name: string): Promise<{ key: ApiKeyView; apiKey: string }> {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 64)
      throw new AppError('VALIDATION', 'A key name has 1 to 64 characters.', {
        errors: [{ path: 'name', message: 'must be 1-64 characters' }],
      });
    return this.deps.store.transaction(async (r) => {
      // The account row lock makes the count and the insert one step: two creates at once cannot make an eleventh key.
      const account = await r.accounts.findForUpdate(accountId);
      if (!account || account.deleted_at !== null) throw new AppError('NOT_FOUND', `No account ${accountId}.`);
      if ((await r.accounts.countActiveKeys(accountId)) >= MAX_ACTIVE_KEYS) {
        throw new AppError('KEY_LIMIT', `The account has ${MAX_ACTIVE_KEYS} active keys already; revoke one first.`);
      }
      const apiKey = await this.insertKey(r, accountId, trimmed, this.deps.clock());
      const row = await r.accounts.findKeyByHash(sha256(apiKey));
      return { key: keyView(row!), apiKey };
    });
  }

  async listKeys(accountId: string): Promise<ApiKeyView[]> {
    return (await this.deps.store.repos.accounts.listKeys(accountId)).map(keyView);
  }

  /** Revoking is idempotent: a revoked key answers as it is. The key is refused from its next request on. */
  async revokeKey(accountId: string, keyId: string): Promise<ApiKeyView> {
    const repo = this.deps.store.repos.accounts;
    await repo.revokeKey(accountId, keyId, this.deps.clock());
    const row = await repo.findKey(accountId, keyId);
    if (!row) throw new AppError('NOT_FOUND', 'No key with that id on this account.');
    return keyView(row);
  }

  private async insertKey(r: Repos, accountId: string, name: string, now: number): Promise<string> {
    const secret = newSecret('mk_', 40);
    await r.accounts.insertKey({
      id: newId('key'),
      account_id: accountId,
      name,
      prefix: secret.slice(0, DISPLAY_LENGTH),
      hash: sha256(secret),
      created_at: now,
      revoked_at: null,
      last_used_at: null,
    });
    return secret;
  }

  /** Judges a bearer on itself alone: malformed, unknown and revoked keys are all INVALID_KEY. */
  async authenticate(bearer: string): Promise<AuthContext> {
    if (!KEY_PATTERN.test(bearer)) throw new AppError('INVALID_KEY', 'The API key is malformed.');
    const repo = this.deps.store.repos.accounts;
    const key = await repo.findKeyByHash(sha256(bearer));
    if (!key || key.revoked_at !== null) throw new AppError('INVALID_KEY', 'The API key is unknown or revoked.');
    const now = this.deps.clock();
    // "Last used" to the minute: one write a minute per key, not one per request. It is bookkeeping: on a
    // full volume the request goes on without it (a read answers; a write meets 507 at its own write).
    if (key.last_used_at === null || key.last_used_at < now - 60_000)
      await repo.touchKey(key.id, now).catch(unlessFull);
    return { accountId: key.account_id, via: 'key', credentialId: key.id, keyPrefix: key.prefix };
  }

  // ---- what the account looks like -----------------------------------------------------------------

  /** Photos one batch may hold: the licence's batch limit, never above the service-wide one. */
  async photosPerBatch(accountId: string): Promise<number> {
    return this.batchLimit((await this.withLicense(accountId)).license);
  }

  private batchLimit(license: LicenseRow | undefined): number {
    return license?.status === 'active'
      ? Math.min(license.job_limit, this.deps.limits.photosPerBatch)
      : this.deps.limits.photosPerBatch;
  }

  private async withLicense(
    accountId: string,
  ): Promise<{ account: AccountRow | undefined; license: LicenseRow | undefined }> {
    const account = await this.deps.store.repos.accounts.findById(accountId);
    const license = account?.license_id ? await this.deps.store.repos.licenses.findById(account.license_id) : undefined;
    return { account, license };
  }

  async describe(auth: AuthContext) {
    const { store, credits, clock } = this.deps;
    const now = clock();
    let { account, license } = await this.withLicense(auth.accountId);
    // A renewal that fell due is applied (under the account lock) before the balances are shown.
    // On a full volume the renewal waits for room, and the balances are shown as they stand.
    if (renewalDue(license, now)) {
      const renewed = await store
        .transaction((r) => credits.renew(r, auth.accountId, now))
        .then(() => true, unlessFull);
      if (renewed) ({ account, license } = await this.withLicense(auth.accountId));
    }
    if (!account || account.deleted_at !== null)
      throw new AppError('INVALID_KEY', 'The account of this key no longer exists.');
    const renewing = license?.status === 'active' && license.next_refresh_at !== null ? license.next_refresh_at : null;
    return {
      credits: {
        total: account.plan_credits + account.pack_credits,
        plan: account.plan_credits,
        pack: account.pack_credits,
        planResetsInDays: renewing === null ? null : daysUntil(renewing, now),
        // Plan credits left at the renewal expire then; pack credits never do.
        expiring:
          renewing === null || account.plan_credits === 0
            ? null
            : { credits: account.plan_credits, at: new Date(renewing).toISOString(), inDays: daysUntil(renewing, now) },
      },
      license: license ? licenseView(license) : null,
      spendOrder: [...SPEND_ORDER],
      limits: { ...this.deps.limits, photosPerBatch: this.batchLimit(license) },
      auth: { via: auth.via, key: auth.keyPrefix },
    };
  }
}

function licenseView(row: LicenseRow) {
  return {
    tier: row.tier,
    status: row.status,
    allowance: row.allowance,
    jobLimit: row.job_limit,
    nextRefreshAt:
      row.status === 'active' && row.next_refresh_at !== null ? new Date(row.next_refresh_at).toISOString() : null,
    activatedAt: row.activated_at === null ? null : new Date(row.activated_at).toISOString(),
  };
}
