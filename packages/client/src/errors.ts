// One error class for every answer the API refuses (problem+json), and one for the network.

/** An application/problem+json body as Matte sends it: `code` names the error, the rest depends on it. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
  retryAfter?: number;
  needed?: number;
  balance?: number;
  reason?: string;
  [member: string]: unknown;
}

/** The API refused a request: `status`, the spec's `code` (NO_CREDITS, RATE_LIMITED…), `detail`, and for a bad field its `field` path. */
export class MatteApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  /** The path of the first field at fault (`/defaults/presetId`), when the request had one. */
  readonly field: string | undefined;
  /** Seconds to wait, from `Retry-After` (429, 503), when the server said. */
  readonly retryAfter: number | undefined;
  /** The whole problem body. */
  readonly problem: Problem;

  constructor(status: number, problem: Problem, retryAfter?: number) {
    const code = typeof problem.code === 'string' ? problem.code : `HTTP_${status}`;
    const detail = typeof problem.detail === 'string' ? problem.detail : (problem.title ?? `HTTP ${status}`);
    super(`${code}: ${detail}`);
    this.name = 'MatteApiError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.field = problem.errors?.[0]?.path || undefined;
    this.retryAfter = retryAfter ?? (typeof problem.retryAfter === 'number' ? problem.retryAfter : undefined);
    this.problem = problem;
  }
}

/** The server could not be reached, or the connection broke (after the retries the request allowed). */
export class MatteConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MatteConnectionError';
  }
}

/** Reads a refused answer into a MatteApiError (a body that is not problem+json still gives status and text). */
export async function errorFromResponse(response: Response, body?: unknown): Promise<MatteApiError> {
  let problem: Problem;
  if (body !== undefined && typeof body === 'object' && body !== null) problem = body as Problem;
  else {
    const text = typeof body === 'string' ? body : await response.text().catch(() => '');
    try {
      problem = JSON.parse(text) as Problem;
    } catch {
      problem = { detail: text.slice(0, 200) || response.statusText };
    }
  }
  return new MatteApiError(response.status, problem, retryAfterSeconds(response.headers.get('retry-after')));
}

/** `Retry-After` as seconds: a number of seconds or an HTTP date. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
