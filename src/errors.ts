// Typed error codes, as the spec's Errors section lists them. Services throw AppError; the
// problem+json error handler (http/plugins/problem.plugin.ts) is the one place that renders them.

export const ERROR_CODES = {
  VALIDATION: { status: 400, title: 'Invalid request' },
  UNAUTHENTICATED: { status: 401, title: 'Authentication required' },
  INVALID_KEY: { status: 401, title: 'Invalid API key' },
  INVALID_CREDENTIALS: { status: 401, title: 'Wrong e-mail address or password' },
  INVALID_SESSION: { status: 401, title: 'Studio session expired or signed out' },
  NO_CREDITS: { status: 402, title: 'Not enough credits' },
  SESSION_REQUIRED: { status: 403, title: 'Studio session required' },
  CSRF_FAILED: { status: 403, title: 'Missing or wrong CSRF token' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  NOT_DRAFT: { status: 409, title: 'Batch already started' },
  NOT_RUNNING: { status: 409, title: 'Batch not running' },
  TOO_MANY_ACTIVE: { status: 409, title: 'Too many running batches' },
  IN_PROGRESS: { status: 409, title: 'Request with this Idempotency-Key in progress' },
  CONFLICT: { status: 409, title: 'Conflict with current state' },
  KEY_LIMIT: { status: 409, title: 'Key limit reached' },
  TOO_LARGE: { status: 413, title: 'Upload too large' },
  URI_TOO_LONG: { status: 414, title: 'Request target too long' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  PROCESSING_FAILED: { status: 422, title: 'Processing failed' },
  RATE_LIMITED: { status: 429, title: 'Rate limit exceeded' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large' },
  UPLOAD_FAILED: { status: 500, title: 'Storing the upload failed' },
  INTERNAL: { status: 500, title: 'Internal error' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request timed out' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
  TIMEOUT: { status: 504, title: 'Timed out' },
  STORAGE_FULL: { status: 507, title: 'Storage full' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Code-dependent members of a problem body (spec, Errors). */
export interface ProblemExtras {
  errors?: Array<{ path: string; message: string }>;
  needed?: number;
  balance?: number;
  retryAfter?: number;
  jobId?: string;
  itemId?: string;
  reason?: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extras: ProblemExtras;

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
