// Typed error codes, as the spec's Errors section lists them. Services throw AppError; the
// problem+json error handler (http/plugins/problem.plugin.ts) is the one place that renders them.
import type { ProblemExtras } from './domain/problem-extras.ts';
import { INPUT_FORMATS_TEXT } from '@matte/client/formats';

export const ERROR_CODES = {
  VALIDATION: {
    status: 400,
    title: 'Invalid request',
    when: 'A field is missing, of the wrong type or out of range, or a body or query cannot be parsed. Nothing happened.',
    fix: 'Read `errors`: each has the `path` of a field at fault (`body/defaults/presetId`) and a message. Correct it and send again.',
  },
  UNAUTHENTICATED: {
    status: 401,
    title: 'Authentication required',
    when: 'The request has no `Authorization: Bearer` header (and no studio session).',
    fix: 'Send `Authorization: Bearer <API key>`. Keys are created in the studio (Keys).',
  },
  INVALID_KEY: {
    status: 401,
    title: 'Invalid API key',
    when: 'The key is malformed, unknown or revoked.',
    fix: 'Check the key in your configuration; a revoked key stays listed in the studio. Create a new one if needed.',
  },
  INVALID_CREDENTIALS: {
    status: 401,
    title: 'Wrong e-mail address or password',
    when: 'Signing in to the studio with an address or password that does not match.',
    fix: 'Check both. Ten wrong tries in 15 minutes lock the address for a while (RATE_LIMITED).',
  },
  INVALID_SESSION: {
    status: 401,
    title: 'Studio session expired or signed out',
    when: 'A studio request carries a session cookie that has expired or was signed out.',
    fix: 'Sign in again; what you entered is kept in the page.',
  },
  NO_CREDITS: {
    status: 402,
    title: 'Not enough credits',
    when: 'Start, continue or a re-run needs more credits than the account has. The batch is untouched.',
    fix: '`needed` and `balance` say how many are missing. Buy a pack or redeem a licence in the studio, or start with a sample (`sample`).',
  },
  SESSION_REQUIRED: {
    status: 403,
    title: 'Studio session required',
    when: 'An API key called an operation only a signed-in studio session may call (keys, purchases, licences, deleting the account).',
    fix: 'Do it in the studio.',
  },
  CSRF_FAILED: {
    status: 403,
    title: 'Missing or wrong CSRF token',
    when: "A studio request that changes something came without the session's `X-CSRF-Token` header.",
    fix: 'Send the token the session answer gave (GET /v1/session).',
  },
  NOT_FOUND: {
    status: 404,
    title: 'Not found',
    when: 'No batch or photo with that id on this account, or no such endpoint. Batches are deleted some hours after they finish.',
    fix: "Check the id and the key (another account's batches are not found). Keep results you need: download them before they expire.",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    title: 'Method not allowed',
    when: 'The path exists, but not with this method.',
    fix: 'See the OpenAPI document (GET /v1/openapi.json) for the methods of the path.',
  },
  NOT_DRAFT: {
    status: 409,
    title: 'Batch already started',
    when: 'Adding photos to, or starting, a batch that is no longer a draft.',
    fix: 'Create a new batch for more photos; a started batch is followed, stopped or continued.',
  },
  NOT_RUNNING: {
    status: 409,
    title: 'Batch not running',
    when: 'Stopping a batch that is not running.',
    fix: 'Read the batch: it may have finished or been stopped already.',
  },
  TOO_MANY_ACTIVE: {
    status: 409,
    title: 'Too many running batches',
    when: 'The account already has the most batches running at once (two).',
    fix: 'Wait for one to finish (follow it), or stop one, then start again.',
  },
  IN_PROGRESS: {
    status: 409,
    title: 'Request with this Idempotency-Key in progress',
    when: 'A request with the same Idempotency-Key is still running.',
    fix: 'Wait a moment and send it again with the same key: it then replays the first answer.',
  },
  CONFLICT: {
    status: 409,
    title: 'Conflict with current state',
    when: 'The action does not fit the state: nothing to retry or continue, no finished photo to download, a photo still processing, a report on a refunded photo; `reason` says which (NOT_DONE, ALREADY_REFUNDED, NO_ATTEMPTS_LEFT, NOTHING_HELD, IDEMPOTENCY_KEY_REUSED…).',
    fix: 'Read the batch for its current state, and act on `reason`.',
  },
  KEY_LIMIT: {
    status: 409,
    title: 'Key limit reached',
    when: 'The account has ten active keys already.',
    fix: 'Revoke a key you no longer use, then create the new one.',
  },
  TOO_LARGE: {
    status: 413,
    title: 'Upload too large',
    when: 'The request body is larger than the server accepts.',
    fix: 'Send fewer or smaller files per request (each photo has its own size and pixel limits).',
  },
  URI_TOO_LONG: {
    status: 414,
    title: 'Request target too long',
    when: 'The URL or a path parameter is longer than any the API hands out.',
    fix: 'Check the id; for many photos, put them in a body rather than the query.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported media type',
    when: "The body's Content-Type is not one the endpoint reads.",
    fix: 'Send JSON (`application/json`) or a form (`multipart/form-data`), as the endpoint says.',
  },
  PROCESSING_FAILED: {
    status: 422,
    title: 'Processing failed',
    when: 'POST /v1/images only: the photo could not be cut out. 422 when the input is at fault (`reason` INVALID_IMAGE, TOO_LARGE, NO_SUBJECT, URL_REFUSED, URL_UNREACHABLE), 503 when our side failed. Nothing is charged.',
    fix: 'For 422, check the photo (`reason`); for 503, send it again later.',
  },
  RATE_LIMITED: {
    status: 429,
    title: 'Rate limit exceeded',
    when: 'More than 60 requests a minute, or 2,000 photos added an hour, with this key. Refused requests are not counted.',
    fix: 'Wait `Retry-After` seconds (also `retryAfter`), then send again. The RateLimit-* and X-Matte-Photos-* headers of every answer show what is left.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    title: 'Request header fields too large',
    when: 'The request headers are larger than the server reads.',
    fix: 'Send fewer or shorter headers (a cookie jar grown too large, say).',
  },
  UPLOAD_FAILED: {
    status: 500,
    title: 'Storing the upload failed',
    when: 'Photos could not be stored on the service side.',
    fix: 'Send the same request again.',
  },
  INTERNAL: {
    status: 500,
    title: 'Internal error',
    when: 'Something failed on the service side that has no better code.',
    fix: 'Try again; if it persists, tell the operator the time and the request.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    title: 'Request timed out',
    when: 'The request body did not arrive in time.',
    fix: 'Send it again, on a steadier connection or in smaller parts.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    title: 'Service unavailable',
    when: 'The model or the database cannot be reached just now. Nothing is charged.',
    fix: 'Wait `Retry-After` seconds where given, then send the same request again.',
  },
  TIMEOUT: {
    status: 504,
    title: 'Timed out',
    when: 'POST /v1/images only: the photo never started within `timeout`. Its reservation was released.',
    fix: 'Send it again later, or use a batch and follow it.',
  },
  STORAGE_FULL: {
    status: 507,
    title: 'Storage full',
    when: "The service's storage is full, so nothing new can be written. Reads keep working.",
    fix: 'Try again later; the operator has to free space.',
  },
} as const satisfies Record<string, { status: number; title: string; when: string; fix: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** Every error code, in the order of ERROR_CODES. */
export const ERROR_CODE_NAMES: readonly ErrorCode[] = Object.keys(ERROR_CODES).filter(isErrorCode);

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extras: ProblemExtras;
  /** Set on a refusal given again under its Idempotency-Key (services/idempotency.service.ts). */
  replayed?: true;

  constructor(code: ErrorCode, detail: string, extras: ProblemExtras = {}, status?: number) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.status = status ?? ERROR_CODES[code].status;
    this.extras = extras;
  }
}

export const notFound = (what: 'batch' | 'photo'): AppError =>
  new AppError(
    'NOT_FOUND',
    what === 'batch' ? 'No batch with that id on this account.' : 'No photo with that id in this batch.',
  );

/** Errors that describe why one photo failed; stored on the item, never an HTTP status. */
export const ITEM_ERROR_CODES = [
  'INVALID_IMAGE',
  'TOO_LARGE',
  'REMOTE_NOT_CONFIGURED',
  'REMOTE_AUTH',
  'REMOTE_CREDIT',
  'REMOTE_RATE_LIMIT',
  'REMOTE_BAD_INPUT',
  'REMOTE_UNAVAILABLE',
  'PROCESSING_FAILED',
  'NO_SUBJECT',
  'CANCELLED',
] as const;
export type ItemErrorCode = (typeof ITEM_ERROR_CODES)[number];

/** What each photo failure means, for the error pages (`item.error.code`). */
export const ITEM_ERRORS = {
  INVALID_IMAGE: `The file is not a readable ${INPUT_FORMATS_TEXT} image (or is damaged). Not charged.`,
  TOO_LARGE: 'The photo is over the size or pixel limit. Not charged. Scale it down and add it again.',
  REMOTE_NOT_CONFIGURED: 'The tier asked for has no inference backend on this installation. Not charged.',
  REMOTE_AUTH: 'The inference backend refused our credentials. Not charged; the operator has to fix it.',
  REMOTE_CREDIT: 'The inference backend refused for lack of credit. Not charged; the operator has to fix it.',
  REMOTE_RATE_LIMIT: 'The inference backend asked us to slow down. Not charged; re-run the photo later.',
  REMOTE_BAD_INPUT: 'The inference backend refused the photo as input. Not charged.',
  REMOTE_UNAVAILABLE: 'The inference backend could not be reached. Not charged; re-run the photo later.',
  PROCESSING_FAILED: 'The photo could not be processed on our side. Not charged; re-run it.',
  NO_SUBJECT: 'No product was found in the photo. Not charged.',
  CANCELLED: 'The photo was stopped before it ran (its batch was stopped or deleted). Not charged.',
} as const satisfies Record<ItemErrorCode, string>;

/** A photo-level failure raised inside the pipeline. `inputFault` separates 422 from 503 on POST /v1/images. */
export class PhotoError extends Error {
  constructor(
    readonly code: ItemErrorCode,
    message: string,
    readonly inputFault: boolean,
  ) {
    super(message);
    this.name = 'PhotoError';
  }
}

/** A thrown value's string `code`: Node's errno name (ENOENT), a library's (ERR_PARSE_ARGS_…), an SQLSTATE. */
export function errorCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** A thrown value's message, whatever was thrown. */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A thrown value as an Error, for APIs that take one (stream.destroy). */
export const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * Errors of the systems under the service, as a client should hear them: the database or the blob store
 * unreachable (503 SERVICE_UNAVAILABLE, retry shortly) or full (507 STORAGE_FULL). Read from the error's
 * code (Node's, SQLite's, PostgreSQL's SQLSTATE) and, for the pg driver's own connection errors, its message.
 */
function infrastructureFault(err: unknown): 'unavailable' | 'full' | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = errorCode(e) ?? '';
    if (['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100'].includes(code)) return 'full';
    if (
      ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code) ||
      /^(08|57P)/.test(code)
    )
      return 'unavailable';
    const message = e instanceof Error ? e.message : '';
    if (
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(
        message,
      )
    )
      return 'unavailable';
  }
  return null;
}

/**
 * For a write that is only bookkeeping beside a read (a key's "last used", a rate-limit count): swallows a
 * full volume, so the read still answers; rethrows anything else. Resolves to false when it swallowed.
 */
export function unlessFull(err: unknown): false {
  if (infrastructureFault(err) === 'full') return false;
  throw err;
}

/** The AppError a client gets for an infrastructure fault, or null when `err` is not one. */
export function infrastructureError(err: unknown): AppError | null {
  switch (infrastructureFault(err)) {
    case 'unavailable':
      return new AppError(
        'SERVICE_UNAVAILABLE',
        'The service cannot reach its database or storage just now; retry shortly. Nothing was charged.',
        {
          retryAfter: 5,
        },
      );
    case 'full':
      return new AppError('STORAGE_FULL', "The service's storage is full; nothing was written. Reads keep working.");
    case null:
      return null;
  }
}
