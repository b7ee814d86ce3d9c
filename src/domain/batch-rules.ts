// Limits and statuses of the spec that several layers need.
import type { JobStatus } from './batch.schemas.ts';

/** Photos one batch may hold (spec, Limits). */
export const MAX_PHOTOS_PER_BATCH = 200;
/** Batches one account may have running at once (spec, Limits). */
export const MAX_ACTIVE_BATCHES = 2;
/** Batch statuses that hold a slot of the account's active-batch limit; `queued` counts as running. */
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['queued', 'running'];
/** Reports on one result of a photo (spec, Limits: at most two reports per photo; a re-run makes a new result). */
export const MAX_REPORTS_PER_RESULT = 2;
