// Limits and statuses of the spec that several layers need.
import type { JobStatus } from './batch.schemas.ts';

/** Photos one batch may hold (spec, Limits). */
export const MAX_PHOTOS_PER_BATCH = 200;
/** Batches one account may have running at once (spec, Limits). */
export const MAX_ACTIVE_BATCHES = 2;
/** Batch statuses that hold a slot of the account's active-batch limit; `queued` counts as running. */
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['queued', 'running'];
/**
 * The largest side a cut-out is made at (its working resolution): a photo larger is scaled down to fit, and the
 * photo says so (meta.warnings; X-Matte-Scaled-From on POST /v1/images). 4096 px: 67 MB of RGBA at the most.
 */
export const MAX_WORKING_EDGE = 4096;
/** Reports on one result of a photo (spec, Limits: at most two reports per photo; a re-run makes a new result). */
export const MAX_REPORTS_PER_RESULT = 2;
