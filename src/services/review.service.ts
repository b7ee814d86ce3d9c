// GET /v1/jobs/{id}/review: what needs a look. Failures first (nothing came out), then finished photos
// the check flagged, lowest score first; each with the one line that says why.
import type { ClaimRow, ItemRow } from '../db/schema.ts';
import type { ReviewEntry, ReviewQueue } from '../domain/review.schemas.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import { groupClaims, itemView } from './job-view.ts';

function reviewEntry(row: ItemRow, claims: ClaimRow[] = []): ReviewEntry {
  const item = itemView(row, claims);
  const failed = item.status === 'failed';
  const flags = item.quality?.flags ?? [];
  const top = [...flags].sort((a, b) => b.severity - a.severity)[0];
  const entry: ReviewEntry = {
    id: item.id,
    name: item.name,
    kind: failed ? 'failed' : 'review',
    reason: failed
      ? (item.error?.message ?? 'The photo could not be processed.')
      : top
        ? top.label
        : 'Low overall score',
    code: failed ? (item.error?.code ?? 'PROCESSING_FAILED') : top ? top.code : 'low-score',
    severity: failed ? null : (top?.severity ?? null),
    score: item.quality?.score ?? null,
    bbox: failed ? null : (top?.bbox ?? null),
    flags,
    refunded: item.refunded,
    credits: item.credits,
    canReport: item.canReport,
    canRerun: item.canRerun,
    attempts: item.attempts,
  };
  for (const key of ['thumbUrl', 'outputUrl', 'cutoutUrl', 'inputThumbUrl'] as const)
    if (item[key]) entry[key] = item[key];
  return entry;
}

/** Failures first, then the lowest score; upload order breaks ties. */
function byUrgency(a: ItemRow, b: ItemRow): number {
  const rank = (r: ItemRow) => (r.status === 'failed' ? 0 : 1);
  const score = (r: ItemRow) => (r.quality ? r.quality.score : -1);
  return rank(a) - rank(b) || score(a) - score(b) || a.position - b.position;
}

export class ReviewService {
  constructor(private readonly deps: { queries: BatchQueries }) {}

  async queue(accountId: string, jobId: string): Promise<ReviewQueue> {
    const { job, items, counts, claims } = await this.deps.queries.getRows(accountId, jobId);
    const byItem = groupClaims(claims);
    const listed = items
      .filter((r) => r.status === 'failed' || (r.status === 'done' && r.review === 'red'))
      .sort(byUrgency);
    const failed = listed.filter((r) => r.status === 'failed').length;
    return {
      jobId,
      status: job.status,
      counts,
      total: listed.length,
      review: listed.length - failed,
      failed,
      items: listed.map((row) => reviewEntry(row, byItem.get(row.id))),
      updatedAt: job.updated_at,
    };
  }
}
