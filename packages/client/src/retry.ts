// A fetch that retries what is safe to repeat: GET and HEAD, and POSTs that carry an Idempotency-Key (the
// server replays their first answer). It retries 429 (after Retry-After), 503 and broken connections,
// with exponential backoff and full jitter; anything else is answered as it came.
import { MatteConnectionError, retryAfterSeconds } from './errors.ts';

export interface RetryOptions {
  /** Retries after the first attempt (default 4). 0 turns retrying off. */
  retries?: number;
  /** First backoff in ms (default 500); doubles each attempt, capped by maxDelayMs. */
  baseDelayMs?: number;
  /** Longest backoff between attempts in ms (default 20 000). */
  maxDelayMs?: number;
  /**
   * Longest Retry-After the client waits out, in ms (default 120 000). A server asking for longer gets its
   * answer passed on (a MatteApiError with `retryAfter`) rather than a retry that comes too early.
   */
  maxRetryAfterMs?: number;
  /** How to wait (tests pass their own); default setTimeout. */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
  /** Called before each retry, with what is waited for: for logs and progress lines. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string; method: string; url: string }) => void;
  random?: () => number;
}

/** Whether repeating `request` cannot do anything twice. */
export function safeToRepeat(request: Request): boolean {
  const method = request.method.toUpperCase();
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return true;
  return request.headers.has('idempotency-key');
}

/** Connection failures worth another try: refused, reset, or closed before an answer. */
function transient(error: unknown): boolean {
  if (error instanceof DOMException && error.name === 'AbortError') return false;
  const codes = ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'];
  let e: unknown = error;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && codes.includes(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  // Browsers say only "Failed to fetch": a network error of some kind.
  return error instanceof TypeError;
}

export const defaultSleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });

export function retryingFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const retries = options.retries ?? 4;
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 20_000;
  const patience = options.maxRetryAfterMs ?? 120_000;
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  return async (request: Request) => {
    const repeatable = retries > 0 && safeToRepeat(request);
    for (let attempt = 0; ; attempt++) {
      const last = !repeatable || attempt >= retries;
      // A body can be read once: every attempt but the last sends a copy.
      const sent = last ? request : request.clone();
      const backoff = Math.min(cap, random() * base * 2 ** attempt);
      let reason: string;
      let delayMs: number;
      try {
        const response = await fetchImpl(sent);
        if (last || (response.status !== 429 && response.status !== 503)) return response;
        const after = retryAfterSeconds(response.headers.get('retry-after'));
        if (after !== undefined && after * 1000 > patience) return response;
        // Retry-After is the least wait, never shortened; a little jitter on top so clients do not return together.
        delayMs = after !== undefined ? after * 1000 + random() * base : backoff;
        reason = `HTTP ${response.status}`;
        await response.body?.cancel().catch(() => undefined);
      } catch (error) {
        if (!transient(error)) throw error;
        if (last)
          throw new MatteConnectionError(
            `${request.method} ${new URL(request.url).pathname}: ${(error as Error).message}`,
            { cause: error },
          );
        delayMs = backoff;
        reason = (error as Error).message;
      }
      options.onRetry?.({ attempt: attempt + 1, delayMs, reason, method: request.method, url: request.url });
      await sleep(delayMs, request.signal);
    }
  };
}
