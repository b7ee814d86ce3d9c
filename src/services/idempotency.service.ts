// Idempotency-Key for start and POST /v1/images: the same key replays the first successful answer
// instead of running (and charging) twice. Keys are per account and endpoint, remembered 24 h.
// A request that failed is forgotten, so a retry after fixing the cause (say, buying credits) runs.
import { createHash } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { Store } from '../db/store.ts';

export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export function fingerprint(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}

export class IdempotencyService {
  constructor(private readonly deps: { store: Store; clock: () => number }) {}

  checkKey(key: string | undefined): string | undefined {
    if (key === undefined) return undefined;
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new AppError('VALIDATION', 'Idempotency-Key must be 8-128 characters of A-Z a-z 0-9 . _ : -', { errors: [{ path: 'headers/idempotency-key', message: 'must match ^[A-Za-z0-9._:-]{8,128}$' }] });
    }
    return key;
  }

  async run(accountId: string, scope: string, key: string | undefined, print: string, fn: () => Promise<StoredResponse>): Promise<StoredResponse & { replayed: boolean }> {
    if (key === undefined) return { ...(await fn()), replayed: false };
    const repo = this.deps.store.repos.idempotency;
    const now = this.deps.clock();
    let existing = await repo.begin({ account_id: accountId, scope, key, fingerprint: print, state: 'in_progress', status_code: null, response: null, created_at: now });
    if (existing && existing.created_at < now - IDEMPOTENCY_TTL_MS) {
      await repo.remove(accountId, scope, key);
      existing = await repo.begin({ account_id: accountId, scope, key, fingerprint: print, state: 'in_progress', status_code: null, response: null, created_at: now });
    }
    if (existing) {
      if (existing.fingerprint !== print) {
        throw new AppError('CONFLICT', 'This Idempotency-Key was used with a different request.', { reason: 'IDEMPOTENCY_KEY_REUSED' });
      }
      if (existing.state !== 'done') throw new AppError('IN_PROGRESS', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      const stored = JSON.parse(existing.response!) as { headers: Record<string, string>; body: string };
      return { status: existing.status_code!, headers: stored.headers, body: Buffer.from(stored.body, 'base64'), replayed: true };
    }
    try {
      const response = await fn();
      await repo.complete(accountId, scope, key, response.status, JSON.stringify({ headers: response.headers, body: response.body.toString('base64') }));
      return { ...response, replayed: false };
    } catch (err) {
      await repo.remove(accountId, scope, key);
      throw err;
    }
  }
}
