// Studio sessions: an e-mail and password sign in to an HTTP-only, SameSite=Strict cookie. Requests
// that change anything with a session must also carry its CSRF token in X-CSRF-Token (the token is
// handed out at sign-in and by GET /v1/session; a page on another site can read neither).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { Store } from '../db/store.ts';
import type { AuthContext } from './account.service.ts';
import { normaliseEmail } from './account.service.ts';
import { verifyPassword } from './password.ts';
import type { RateLimitService } from './rate-limit.service.ts';
import { sha256 } from './secrets.ts';

export const SESSION_COOKIE = 'matte_session';
/** A studio session lasts a working week; signing in again starts a new one. */
export const SESSION_TTL_MS = 7 * 24 * 3_600_000;

export interface SessionView {
  accountId: string;
  email: string;
  csrfToken: string;
  expiresAt: number;
}

export class SessionService {
  constructor(private readonly deps: { store: Store; clock: () => number; limits: RateLimitService }) {}

  /** Checks the password; a wrong password and an unknown address get the same answer in the same time. */
  async signIn(rawEmail: string, password: string): Promise<{ token: string; session: SessionView }> {
    const email = normaliseEmail(rawEmail);
    await this.deps.limits.signInAttempt(email);
    const account = await this.deps.store.repos.accounts.findByEmail(email);
    const ok = await verifyPassword(password, account && account.deleted_at === null ? account.password_hash : null);
    if (!account || !ok) throw new AppError('INVALID_CREDENTIALS', 'The e-mail address or the password is wrong.');
    const token = randomBytes(32).toString('base64url');
    const now = this.deps.clock();
    const row = {
      id: sha256(token),
      account_id: account.id,
      csrf_token: randomBytes(24).toString('base64url'),
      created_at: now,
      expires_at: now + SESSION_TTL_MS,
    };
    await this.deps.store.repos.sessions.insert(row);
    return {
      token,
      session: { accountId: account.id, email: account.email, csrfToken: row.csrf_token, expiresAt: row.expires_at },
    };
  }

  /** The session behind a cookie value, or INVALID_SESSION (expired, signed out, or never issued). */
  async authenticate(token: string): Promise<AuthContext & { csrfToken: string }> {
    const row = await this.deps.store.repos.sessions.find(sha256(token), this.deps.clock());
    if (!row) throw new AppError('INVALID_SESSION', 'The studio session has expired or was signed out; sign in again.');
    return {
      accountId: row.account_id,
      via: 'session',
      credentialId: row.id,
      keyPrefix: null,
      csrfToken: row.csrf_token,
    };
  }

  async describe(auth: AuthContext): Promise<SessionView> {
    const row = await this.deps.store.repos.sessions.find(auth.credentialId, this.deps.clock());
    const account = await this.deps.store.repos.accounts.findById(auth.accountId);
    if (!row || !account)
      throw new AppError('INVALID_SESSION', 'The studio session has expired or was signed out; sign in again.');
    return { accountId: account.id, email: account.email, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  async signOut(auth: AuthContext): Promise<void> {
    await this.deps.store.repos.sessions.delete(auth.credentialId);
  }
}

/** Constant-time comparison of the CSRF header with the session's token. */
export function csrfMatches(sent: string | string[] | undefined, expected: string): boolean {
  if (typeof sent !== 'string' || !sent) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
