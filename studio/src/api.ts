// The studio's one way to the API: @matte/client on the same origin. The session cookie (HttpOnly,
// SameSite=Strict) speaks for the user; changes carry the session's CSRF token, which lives only in
// this page's memory. Every refusal becomes a readable message with the field it points at.
import { MatteApiError, MatteClient, MatteConnectionError, errorFromResponse } from '@matte/client';

let csrfToken: string | undefined;

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const client = new MatteClient({
  baseUrl: location.origin,
  fetch: (request) => {
    if (csrfToken && CHANGES.has(request.method)) request.headers.set('x-csrf-token', csrfToken);
    return fetch(request, { credentials: 'same-origin' });
  },
  // The studio retries what is safe to retry and tells the user the rest; it never waits minutes unseen.
  retry: { retries: 2, maxRetryAfterMs: 10_000 },
  pace: { maxWaitMs: 10_000 },
});

export const api = client.api;

/** Listeners told when a request answers 401: the session ended, so the studio asks to sign in again. */
const signedOutListeners = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/** An error as the studio shows it: one sentence, and the field it is about when the API names one. */
export interface Shown {
  message: string;
  field?: string;
  code?: string;
}

export function describeError(error: unknown): Shown {
  if (error instanceof MatteApiError) {
    const ended = error.code === 'INVALID_SESSION' || error.code === 'UNAUTHENTICATED';
    if (ended) for (const listener of signedOutListeners) listener();
    const base = error.detail || error.problem.title || `The server answered ${error.status}.`;
    const wait = error.retryAfter ? ` Try again in ${error.retryAfter} s.` : '';
    const message =
      error.code === 'NO_CREDITS'
        ? `${base} Buy a pack or redeem a licence under Credits; nothing you entered is lost.`
        : ended
          ? `${base} What you entered stays here: sign in and send it again.`
          : `${base}${wait}`;
    return { message, field: error.field, code: error.code };
  }
  if (error instanceof MatteConnectionError)
    return { message: 'The server could not be reached. Check your connection and try again.' };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** Calls the API's typed operation and returns its data, or throws MatteApiError (like the client's helpers). */
export async function ok<T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await answer;
  if (!response.ok) throw await errorFromResponse(response, error);
  return data as T;
}
