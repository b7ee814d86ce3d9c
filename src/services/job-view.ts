// Rows → the API's Job, JobSummary and Item shapes. Pure: the same rows always give the same answer.
import type { ClaimRow, ItemRow, JobRow } from '../db/schema.ts';
import type {
  Claim,
  Counts,
  Estimate,
  Item,
  Job,
  JobSummary,
  ItemMeta,
  StoredItemMeta,
  Compliance,
  ImageFormat,
} from '../domain/batch.schemas.ts';
import { MAX_REPORTS_PER_RESULT } from '../domain/batch-rules.ts';
import { extensionOf } from '@matte/client/formats';

export const TIER_CREDITS = { light: 1, heavy: 2 } as const;

export function fileUrl(jobId: string, itemId: string, variant: string, rev?: number, extra = ''): string {
  return `/v1/jobs/${jobId}/items/${itemId}/file?variant=${variant}${extra}${rev !== undefined ? `&rev=${rev}` : ''}`;
}

/** The format of a finished photo's stored output. A photo with none has no result to read: a fault, not the seller's. */
export function storedFormat(item: ItemRow): ImageFormat {
  if (item.output_format === null) throw new Error(`photo ${item.id} has no stored output`);
  return item.output_format;
}

/** What the photo's result recorded of itself (sizes, timings, the marketplace report); empty before one. */
export function storedMeta(item: Pick<ItemRow, 'meta'>): StoredItemMeta {
  return item.meta ?? {};
}

export function outputName(name: string, format: string): string {
  const ext = extensionOf(format);
  const slash = name.lastIndexOf('/');
  const dot = name.lastIndexOf('.');
  return `${dot > slash ? name.slice(0, dot) : name}.${ext}`;
}

function claimView(row: ClaimRow): Claim {
  return {
    reason: row.reason,
    region: row.region,
    verdict: row.verdict,
    confidence: row.confidence,
    evidence: row.evidence,
    at: row.created_at,
  };
}

/** Reports left on the photo's current result. */
export function reportsLeft(row: Pick<ItemRow, 'attempts'>, claims: Pick<ClaimRow, 'attempt'>[]): number {
  return MAX_REPORTS_PER_RESULT - claims.filter((c) => c.attempt === row.attempts).length;
}

/** @param claims the photo's reports, oldest first (every result's; canReport counts the current one's) */
export function itemView(row: ItemRow, claims: ClaimRow[] = []): Item {
  const tier = row.tier;
  const finished = row.status === 'done';
  const hasOutput = finished && row.output_format !== null;
  const credits =
    row.status === 'failed' || row.refunded ? 0 : row.status === 'done' ? row.charged : TIER_CREDITS[tier];
  const item: Item = {
    id: row.id,
    name: row.name,
    status: row.status,
    inputUrl: fileUrl(row.job_id, row.id, 'input'),
    inputThumbUrl: fileUrl(row.job_id, row.id, 'input-thumb'),
    review: row.review,
    refunded: row.refunded === 1,
    claims: claims.map(claimView),
    canReport: hasOutput && row.refunded === 0 && reportsLeft(row, claims) > 0,
    canRerun: row.status === 'done' || row.status === 'failed',
    tier,
    credits,
    settings: row.settings,
    rev: row.rev,
    updatedAt: row.updated_at,
    attempts: row.attempts,
  };
  if (row.error_code) item.error = { code: row.error_code, message: row.error_message ?? '' };
  if (hasOutput) {
    item.outputName = outputName(row.name, row.output_format!);
    item.outputUrl = fileUrl(row.job_id, row.id, 'output', row.rev);
    item.pngUrl = fileUrl(row.job_id, row.id, 'output', row.rev, '&format=png');
    item.thumbUrl = fileUrl(row.job_id, row.id, 'thumb', row.rev);
    item.cutoutUrl = fileUrl(row.job_id, row.id, 'cutout', row.rev);
  }
  if (row.touch_up) item.touchUp = { strokes: row.touch_up.strokes, updatedAt: row.touch_up.updatedAt };
  if (row.quality) item.quality = row.quality;
  if (row.meta) item.meta = metaView(row.meta);
  else item.meta = { source: { width: row.source_width, height: row.source_height, format: row.source_format } };
  if (row.status === 'processing' && row.stage) {
    item.stage = row.stage;
    if (row.stage_started_at !== null) item.stageStartedAt = row.stage_started_at;
  }
  if (row.started_at !== null) item.startedAt = row.started_at;
  if (row.finished_at !== null) item.finishedAt = row.finished_at;
  return item;
}

/**
 * The answer's ItemMeta from the stored one: the marketplace report stays out (GET …/compliance serves it), and
 * each check it failed becomes a warning, so a seller reading the batch still sees why a photo does not meet
 * its preset.
 */
function metaView({ compliance, ...meta }: StoredItemMeta): ItemMeta {
  const failed = compliance ? complianceWarnings(compliance) : [];
  if (failed.length) meta.warnings = [...(meta.warnings ?? []), ...failed];
  return meta;
}

/** One line a failed check: `amazon-main: background: expected …, got …`. */
function complianceWarnings(compliance: Compliance): string[] {
  return compliance.checks
    .filter((c) => !c.ok)
    .map((c) => `${compliance.presetId}: ${c.check}: expected ${c.expected}, got ${c.actual}`);
}

export function countItems(byStatus: Record<string, number>, refunded: number): Counts {
  const n = (s: string) => byStatus[s] ?? 0;
  const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
  return {
    total,
    held: n('held'),
    pending: n('pending'),
    processing: n('processing'),
    done: n('done'),
    failed: n('failed'),
    refunded,
  };
}

function estimate(counts: Counts, perImageMs: number, now: number): Estimate {
  // The model runs one photo at a time per worker; a photo in flight is on average half done.
  return {
    perImageMs: Math.round(perImageMs),
    remainingMs: Math.round((counts.pending + counts.processing * 0.5) * perImageMs),
    heldMs: Math.round(counts.held * perImageMs),
    now,
  };
}

export function jobSummaryView(row: JobRow, counts: Counts, perImageMs: number, now: number): JobSummary {
  const options = row.options;
  const summary: JobSummary = {
    id: row.id,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    options,
    counts,
    downloadUrl: counts.done > 0 ? `/v1/jobs/${row.id}/download` : null,
    continueUrl: row.status === 'paused' && counts.held > 0 ? `/v1/jobs/${row.id}/continue` : null,
    estimate: estimate(counts, perImageMs, now),
  };
  if (row.finished_at !== null) summary.finishedAt = row.finished_at;
  if (row.cancel_requested_at !== null) summary.cancelRequestedAt = row.cancel_requested_at;
  return summary;
}

export function jobView(
  row: JobRow,
  items: ItemRow[],
  counts: Counts,
  perImageMs: number,
  now: number,
  delta: boolean,
  claims: ClaimRow[] = [],
): Job {
  const byItem = groupClaims(claims);
  const job: Job = {
    ...jobSummaryView(row, counts, perImageMs, now),
    items: items.map((item) => itemView(item, byItem.get(item.id))),
    rejected: row.rejected,
  };
  if (delta) job.delta = true;
  return job;
}

export function groupClaims(claims: ClaimRow[]): Map<string, ClaimRow[]> {
  const byItem = new Map<string, ClaimRow[]>();
  for (const c of claims) byItem.set(c.item_id, [...(byItem.get(c.item_id) ?? []), c]);
  return byItem;
}
