// A fetch that keeps to the server's request rate: every answer says how many requests the key has left in its
// 60-second window and when the oldest counted one leaves it (RateLimit-Remaining, RateLimit-Reset). When none is
// left, the next request waits until one is, instead of being refused with 429. Requests sent meanwhile count
// against what the last answer said, so requests running side by side keep to it too. Another client on the same
// key can still spend the window first: the retries (retry.ts) then wait out the 429's Retry-After.
import { defaultSleep } from './retry.ts';

export interface PaceOptions {
  /** false: send every request at once (default true). */
  enabled?: boolean;
  /** How to wait (tests pass their own); default setTimeout. */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
  /** The clock the waits are measured on (tests pass their own); default Date.now. */
  now?: () => number;
  /**
   * Longest wait in ms (default 120 000): a request that would wait longer is sent at once, and a 429 it meets is
   * the caller's to show (the studio tells the person, rather than wait unseen).
   */
  maxWaitMs?: number;
  /** Called before each wait, with its length: for logs and progress lines. */
  onWait?: (info: { delayMs: number; limit: number | undefined }) => void;
}

/** Read a whole-number header, or undefined. */
function count(response: Response, name: string): number | undefined {
  const value = response.headers.get(name);
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

export function pacedFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  options: PaceOptions = {},
): (request: Request) => Promise<Response> {
  if (options.enabled === false) return fetchImpl;
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  /** Requests left as the last answer said, less those sent since; null before the first answer or after a wait. */
  let left: number | null = null;
  /** When (on `now`) the window frees a request, as the last answer said. */
  let freeAt = 0;
  let limit: number | undefined;
  return async (request: Request) => {
    while (left !== null && left <= 0) {
      const delayMs = Math.max(0, freeAt - now());
      // Nothing is known past the wait: the next answer says again.
      left = null;
      if (delayMs > 0 && delayMs <= (options.maxWaitMs ?? 120_000)) {
        options.onWait?.({ delayMs, limit });
        // A moment more than the server's whole seconds, so the request lands after the window has moved.
        await sleep(delayMs + 50, request.signal);
      }
    }
    if (left !== null) left--;
    const response = await fetchImpl(request);
    const remaining = count(response, 'ratelimit-remaining');
    const reset = count(response, 'ratelimit-reset');
    if (remaining !== undefined && reset !== undefined) {
      left = remaining;
      freeAt = now() + reset * 1000;
      limit = count(response, 'ratelimit-limit') ?? limit;
    }
    return response;
  };
}
