// Idempotency-Key for start and POST /v1/images: the same key replays the first answer instead of
// running (and charging) twice. Keys are per account and endpoint, remembered 24 h.
//  - The first answer is what the operation decided: its success, or its refusal (402, 404, 409 …).
//    A refusal is replayed too, as the spec says; to try again after fixing the cause (credits
//    bought, a batch finished), send a new key.
//  - Server faults (5xx) and rate limiting (429) decided nothing: they are forgotten, so a retry runs.
//  - While the first request runs, the same key answers 409 IN_PROGRESS. Two identical requests at the
//    same instant: one inserts the record and runs, the other finds it (the primary key decides).
//  - A record whose process died mid-request (still in progress after LOCK_MS) is taken over.
import { createHash } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { Store } from '../db/store.ts';
import type { NewIdempotencyRecord } from '../db/schema.ts';
import { jsonText } from '../db/json-text.ts';
import type { StoredAnswer } from '../db/json-columns.ts';

const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Longer than any idempotent operation takes (POST /v1/images waits at most 60 s plus the upload). */
const LOCK_MS = 5 * 60 * 1000;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The rules above, for the OpenAPI descriptions of the endpoints that honour the header. */
export const IDEMPOTENCY_RULES =
  'Idempotency-Key (8-128 of A-Z a-z 0-9 . _ : -) replays the first answer to the same request for 24 h, a refusal (402, 404, 409) as well as a success, with the header Idempotent-Replayed: true; ' +
  '5xx and 429 answers are forgotten, so a retry with the key runs. While the first request runs, the key answers 409 IN_PROGRESS. ' +
  'A different request under a used key answers 409 CONFLICT reason IDEMPOTENCY_KEY_REUSED. To try again after fixing a refusal (credits bought, a batch finished), send a new key.';

export function fingerprint(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}

/** Refusals that are the operation's answer, replayed under the same key. */
function isDecided(err: unknown): err is AppError {
  return (
    err instanceof AppError &&
    err.status >= 400 &&
    err.status < 500 &&
    err.code !== 'RATE_LIMITED' &&
    err.code !== 'IN_PROGRESS'
  );
}

export class IdempotencyService {
  constructor(private readonly deps: { store: Store; clock: () => number }) {}

  checkKey(key: string | string[] | undefined): string | undefined {
    if (key === undefined) return undefined;
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new AppError('VALIDATION', 'Idempotency-Key must be 8-128 characters of A-Z a-z 0-9 . _ : -', {
        errors: [{ path: 'headers/idempotency-key', message: 'must match ^[A-Za-z0-9._:-]{8,128}$' }],
      });
    }
    return key;
  }

  async run(
    accountId: string,
    scope: string,
    key: string | undefined,
    print: string,
    fn: () => Promise<StoredResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    if (key === undefined) return { ...(await fn()), replayed: false };
    const repo = this.deps.store.repos.idempotency;
    const now = this.deps.clock();
    const fresh: NewIdempotencyRecord = {
      account_id: accountId,
      scope,
      key,
      fingerprint: print,
      state: 'in_progress',
      status_code: null,
      response: null,
      created_at: now,
      locked_until: now + LOCK_MS,
    };
    let existing = await repo.begin(fresh);
    if (existing && existing.created_at < now - IDEMPOTENCY_TTL_MS) {
      await repo.remove(accountId, scope, key);
      existing = await repo.begin(fresh);
    }
    if (existing) {
      if (existing.fingerprint !== print) {
        throw new AppError(
          'CONFLICT',
          'This Idempotency-Key was used with a different request; use a new key for a new request.',
          { reason: 'IDEMPOTENCY_KEY_REUSED' },
        );
      }
      if (existing.state !== 'done') {
        const abandoned =
          (existing.locked_until ?? 0) < now &&
          (await repo.takeOver(accountId, scope, key, existing.locked_until, now + LOCK_MS));
        if (!abandoned)
          throw new AppError(
            'IN_PROGRESS',
            'A request with this Idempotency-Key is still being processed; retry shortly.',
          );
      } else {
        const stored = existing.response!;
        if (stored.kind === 'error')
          throw Object.assign(new AppError(stored.code, stored.detail, stored.extras, stored.status), {
            replayed: true,
          });
        return {
          status: existing.status_code!,
          headers: stored.headers,
          body: Buffer.from(stored.body, 'base64'),
          replayed: true,
        };
      }
    }
    let response: StoredResponse;
    try {
      response = await fn();
    } catch (err) {
      if (isDecided(err)) {
        const stored: StoredAnswer = {
          kind: 'error',
          code: err.code,
          detail: err.message,
          extras: err.extras,
          status: err.status,
        };
        await repo.complete(accountId, scope, key, err.status, jsonText(stored));
      } else {
        await repo.remove(accountId, scope, key);
      }
      throw err;
    }
    const stored: StoredAnswer = {
      kind: 'response',
      headers: response.headers,
      body: response.body.toString('base64'),
    };
    await repo.complete(accountId, scope, key, response.status, jsonText(stored));
    return { ...response, replayed: false };
  }
}
