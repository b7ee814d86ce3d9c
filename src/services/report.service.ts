// Reports: a seller marks a region of a finished photo's cut-out and says what is wrong. The pixel
// check (pipeline/check/claim-check.ts) judges it against the cut-out and the photo's colours, with
// no model call; an accepted report gives the photo's charge back (ledger kind `claim`) and marks the
// photo refunded. Every report is kept on the photo with its verdict. Two reports per result: a re-run
// makes a new result that may be reported again.
//
// The check runs outside any transaction (it reads a file and does arithmetic); the verdict is then
// recorded under the account and photo locks, after the state is checked again, so two reports sent
// at once never refund twice and never make a third report.
import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../errors.ts';
import type { Store, Repos } from '../db/store.ts';
import type { ItemRow } from '../db/schema.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { CheckRasters } from '../adapters/images/rasters.ts';
import type { BBox, Job } from '../domain/batch.schemas.ts';
import type { ReportRequest } from '../domain/report.schemas.ts';
import { CLAIM_GRID_EDGE, judgeClaimAt, type ClaimVerdict } from '../pipeline/check/claim-check.ts';
import type { CreditsService } from './credits.service.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import { modelCutoutKey } from './blob-keys.ts';
import { reportsLeft, storedMeta } from './job-view.ts';
import { lockAccount } from './locks.ts';
import { jsonText } from '../db/json-text.ts';

export interface ReportVerdict {
  accepted: boolean;
  reason: ReportRequest['reason'];
  region: BBox;
  confidence: number;
  evidence: string;
  metrics: Record<string, number>;
}

export class ReportService {
  constructor(
    private readonly deps: {
      store: Store;
      blobs: BlobStore;
      rasters: Pick<CheckRasters, 'photoUnderCutout'>;
      credits: CreditsService;
      queries: BatchQueries;
      bus: EventBus;
      clock: () => number;
    },
  ) {}

  async report(
    accountId: string,
    jobId: string,
    itemId: string,
    request: ReportRequest,
  ): Promise<{ job: Job; verdict: ReportVerdict }> {
    const item = await this.deps.queries.getItem(accountId, jobId, itemId);
    await this.assertReportable(this.deps.store.repos, item);
    const cutoutSize = this.cutoutSize(item);
    const region = this.checkRegion(request.region, cutoutSize);

    const judged = await this.judge(item, request.reason, region, cutoutSize);
    const now = this.deps.clock();
    await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      const current = await r.items.findForUpdate(itemId);
      if (!current || current.job_id !== jobId) throw notFound('photo');
      if (current.attempts !== item.attempts) {
        throw new AppError('CONFLICT', 'The photo was run again while the report was judged; report the new result.', {
          reason: 'NOT_DONE',
          jobId,
          itemId,
        });
      }
      await this.assertReportable(r, current);
      const credits = judged.accepted ? await this.deps.credits.refundClaim(r, current, now) : 0;
      await r.claims.insert({
        id: randomUUID(),
        item_id: itemId,
        job_id: jobId,
        account_id: accountId,
        attempt: current.attempts,
        reason: request.reason,
        region: jsonText(region),
        note: request.note ?? null,
        verdict: judged.accepted ? 'accepted' : 'rejected',
        confidence: judged.confidence,
        evidence: judged.evidence,
        metrics: jsonText(judged.metrics),
        credits,
        created_at: now,
      });
      await r.items.update(itemId, judged.accepted ? { refunded: 1, updated_at: now } : { updated_at: now });
      await r.jobs.update(jobId, { updated_at: now });
    });
    this.deps.bus.jobChanged(jobId);
    return {
      job: await this.deps.queries.getJob(accountId, jobId),
      verdict: {
        accepted: judged.accepted,
        reason: request.reason,
        region,
        confidence: judged.confidence,
        evidence: judged.evidence,
        metrics: judged.metrics,
      },
    };
  }

  /** 409 CONFLICT with NOT_DONE, ALREADY_REFUNDED or NO_ATTEMPTS_LEFT when the photo cannot be reported now. */
  private async assertReportable(r: Repos, item: ItemRow): Promise<void> {
    const ids = { jobId: item.job_id, itemId: item.id };
    if (item.status !== 'done' || item.output_format === null) {
      throw new AppError('CONFLICT', `The photo is ${item.status}; only a finished result can be reported.`, {
        reason: 'NOT_DONE',
        ...ids,
      });
    }
    if (item.refunded)
      throw new AppError(
        'CONFLICT',
        'The photo was not charged (or was refunded already); there is nothing to refund.',
        { reason: 'ALREADY_REFUNDED', ...ids },
      );
    if (reportsLeft(item, await r.claims.listForItem(item.id)) <= 0) {
      throw new AppError(
        'CONFLICT',
        'This result was reported twice already; run the photo again to report its new result.',
        { reason: 'NO_ATTEMPTS_LEFT', ...ids },
      );
    }
  }

  private cutoutSize(item: ItemRow): { width: number; height: number } {
    const meta = storedMeta(item);
    return meta.cutout ?? { width: item.source_width, height: item.source_height };
  }

  /** The region must lie on the cut-out (cutout pixels, as `meta.cutout` and every flag's bbox). */
  private checkRegion(region: BBox, size: { width: number; height: number }): BBox {
    if (region.x + region.width > size.width || region.y + region.height > size.height) {
      throw new AppError('VALIDATION', `The region must lie inside the cut-out, ${size.width}x${size.height} pixels.`, {
        errors: [{ path: 'body/region', message: `outside the cut-out (${size.width}x${size.height})` }],
      });
    }
    return { x: region.x, y: region.y, width: region.width, height: region.height };
  }

  private async judge(
    item: ItemRow,
    reason: ReportRequest['reason'],
    region: BBox,
    size: { width: number; height: number },
  ): Promise<ClaimVerdict> {
    const [photo, cutout] = await Promise.all([
      this.deps.blobs.get(item.input_blob),
      // The model's cut-out, touched up or not: a touch-up never changes what was charged.
      this.deps.blobs.get(modelCutoutKey(item)),
    ]);
    const img = await this.deps.rasters.photoUnderCutout(photo, cutout, CLAIM_GRID_EDGE);
    return judgeClaimAt(img, size, reason, region);
  }
}
