// Accounts and API keys. A key is shown once; only its SHA-256 and a display prefix are stored.
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Store } from '../db/store.ts';
import type { CreditsService } from './credits.service.ts';
import { SPEND_ORDER } from './credits.service.ts';

const KEY_PREFIX = 'mk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PATTERN = /^mk_[0-9A-Za-z]{40}$/;
/** `mk_` and 8 characters: enough to tell keys apart, far too few to guess the rest (40 base62 ≈ 238 bits). */
const DISPLAY_LENGTH = 11;
export const MAX_ACTIVE_KEYS = 10;

export interface AuthContext {
  accountId: string;
  keyId: string;
  keyPrefix: string;
}

export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newSecret(): string {
  const bytes = randomBytes(40);
  let out = KEY_PREFIX;
  // 62 does not divide 256; the bias of byte % 62 (at most 1/256 per character) is harmless at 238 bits.
  for (const b of bytes) out += BASE62[b % 62];
  return out;
}

export interface AccountLimits {
  photosPerBatch: number;
  activeBatches: number;
  requestsPerMinute: number;
  photosPerHour: number;
  resultsKeptForHours: number;
}

export class AccountService {
  constructor(
    private readonly deps: { store: Store; credits: CreditsService; clock: () => number; limits: AccountLimits },
  ) {}

  async createAccount(input: { email: string; plan: number; pack: number }): Promise<{ accountId: string; apiKey: string }> {
    const { store, credits, clock } = this.deps;
    const now = clock();
    const email = input.email.trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new AppError('VALIDATION', `"${input.email}" is not an email address.`);
    if (!Number.isInteger(input.plan) || input.plan < 0 || !Number.isInteger(input.pack) || input.pack < 0) {
      throw new AppError('VALIDATION', 'plan and pack must be whole numbers of credits, 0 or more.');
    }
    return store.transaction(async (r) => {
      if (await r.accounts.findByEmail(email)) throw new AppError('CONFLICT', `An account with email ${email} exists already.`);
      const accountId = newId('acc');
      await r.accounts.insert({ id: accountId, email, plan_credits: 0, pack_credits: 0, created_at: now });
      await credits.grant(r, accountId, 'plan', input.plan, 'grant', 'plan credits at account creation', now);
      await credits.grant(r, accountId, 'pack', input.pack, 'purchase', 'pack credits at account creation', now);
      const apiKey = await this.insertKey(r, accountId, 'default', now);
      return { accountId, apiKey };
    });
  }

  async createKey(accountId: string, name: string): Promise<{ keyId: string; apiKey: string }> {
    return this.deps.store.transaction(async (r) => {
      const active = (await r.accounts.listKeys(accountId)).filter((k) => k.revoked_at === null);
      if (active.length >= MAX_ACTIVE_KEYS) throw new AppError('KEY_LIMIT', `The account has ${MAX_ACTIVE_KEYS} active keys already.`);
      const apiKey = await this.insertKey(r, accountId, name, this.deps.clock());
      const key = await r.accounts.findKeyByHash(hashKey(apiKey));
      return { keyId: key!.id, apiKey };
    });
  }

  private async insertKey(r: Parameters<Parameters<Store['transaction']>[0]>[0], accountId: string, name: string, now: number): Promise<string> {
    const secret = newSecret();
    await r.accounts.insertKey({ id: newId('key'), account_id: accountId, name, prefix: secret.slice(0, DISPLAY_LENGTH), hash: hashKey(secret), created_at: now, revoked_at: null });
    return secret;
  }

  /** Judges a bearer on itself alone: malformed, unknown and revoked keys are all INVALID_KEY. */
  async authenticate(bearer: string): Promise<AuthContext> {
    if (!KEY_PATTERN.test(bearer)) throw new AppError('INVALID_KEY', 'The API key is malformed.');
    const key = await this.deps.store.repos.accounts.findKeyByHash(hashKey(bearer));
    if (!key || key.revoked_at !== null) throw new AppError('INVALID_KEY', 'The API key is unknown or revoked.');
    return { accountId: key.account_id, keyId: key.id, keyPrefix: key.prefix };
  }

  async describe(auth: AuthContext) {
    const account = await this.deps.store.repos.accounts.findById(auth.accountId);
    if (!account) throw new AppError('INVALID_KEY', 'The account of this key no longer exists.');
    return {
      credits: {
        total: account.plan_credits + account.pack_credits,
        plan: account.plan_credits,
        pack: account.pack_credits,
        // Self-hosted accounts have no billing cycle: plan credits never reset or expire on their own.
        planResetsInDays: null,
        expiring: null,
      },
      license: null,
      spendOrder: [...SPEND_ORDER],
      limits: { ...this.deps.limits },
      auth: { via: 'key' as const, key: auth.keyPrefix },
    };
  }
}
