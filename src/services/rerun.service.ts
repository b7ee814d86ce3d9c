// Re-runs: finished or failed photos through the model again, charged like a first run (1 credit, 2 on
// the heavy tier), reserved at once, plan pool first. A photo that is queued, at the model or held for
// a sample run cannot be re-run (409 CONFLICT); a draft cannot either (start it). The batch runs again:
// it leaves its stopped state (`job.started`), counts against the two running batches, and its results
// are kept until two hours after it finishes again.
import { AppError, notFound } from '../errors.ts';
import type { Repos, Store } from '../db/store.ts';
import type { ItemRow } from '../db/schema.ts';
import type { Job, Tier } from '../domain/batch.schemas.ts';
import { ACTIVE_JOB_STATUSES, MAX_ACTIVE_BATCHES } from '../domain/batch-rules.ts';
import type { CreditsService } from './credits.service.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import type { BatchProgress } from './batch-progress.service.ts';
import { itemView, TIER_CREDITS } from './job-view.ts';
import { lockAccount } from './locks.ts';

/** Which photos a batch retry takes: these ids, or every failed photo. */
export type RetrySelection = { itemIds: string[] } | { failed: true };

export class RerunService {
  constructor(
    private readonly deps: {
      store: Store;
      credits: CreditsService;
      bus: EventBus;
      clock: () => number;
      queries: BatchQueries;
      progress: BatchProgress;
    },
  ) {}

  async retry(
    accountId: string,
    jobId: string,
    selection: RetrySelection,
    tier: Tier,
  ): Promise<Job & { retried: number; charged: number }> {
    const { retried, charged } = await this.run(
      accountId,
      jobId,
      async (r) => {
        const items = await r.items.listForJob(jobId);
        if ('failed' in selection) return items.filter((i) => i.status === 'failed');
        const byId = new Map(items.map((i) => [i.id, i]));
        return [...new Set(selection.itemIds)].map((id) => {
          const item = byId.get(id);
          if (!item) throw new AppError('NOT_FOUND', `No photo ${id} in this batch.`, { itemId: id });
          return item;
        });
      },
      tier,
    );
    return { ...(await this.deps.queries.getJob(accountId, jobId)), retried, charged };
  }

  async retryItem(
    accountId: string,
    jobId: string,
    itemId: string,
    tier: Tier,
  ): Promise<Job & { charged: number; tier: Tier }> {
    const { charged } = await this.run(
      accountId,
      jobId,
      async (r) => {
        const item = await r.items.findInJob(jobId, itemId);
        if (!item) throw notFound('photo');
        return [item];
      },
      tier,
    );
    return { ...(await this.deps.queries.getJob(accountId, jobId)), charged, tier };
  }

  private async run(
    accountId: string,
    jobId: string,
    select: (r: Repos) => Promise<ItemRow[]>,
    tier: Tier,
  ): Promise<{ retried: number; charged: number }> {
    const now = this.deps.clock();
    const outcome = await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      const job = await this.deps.queries.requireJob(accountId, jobId, r);
      if (job.status === 'draft')
        throw new AppError('CONFLICT', 'The batch has not been started; start it instead.', {
          reason: 'NOT_STARTED',
          jobId,
        });
      const items = await select(r);
      if (items.length === 0)
        throw new AppError('CONFLICT', 'Nothing to retry: no photo was selected, or no photo failed.', {
          reason: 'NOTHING_TO_RETRY',
          jobId,
        });
      const busy = items.find((i) => !itemView(i).canRerun);
      if (busy) {
        const what =
          busy.status === 'held'
            ? 'held for the rest of a sample run (continue the batch instead)'
            : busy.status === 'pending'
              ? 'waiting to run'
              : 'at the model';
        throw new AppError('CONFLICT', `Photo ${busy.name} is ${what}; only finished or failed photos run again.`, {
          reason: busy.status === 'held' ? 'HELD' : 'PHOTO_BUSY',
          jobId,
          itemId: busy.id,
        });
      }
      const stopped = !ACTIVE_JOB_STATUSES.includes(job.status);
      if (stopped && (await r.jobs.countActive(accountId)) >= MAX_ACTIVE_BATCHES) {
        throw new AppError('TOO_MANY_ACTIVE', `The account has ${MAX_ACTIVE_BATCHES} batches running already.`);
      }
      const credits = TIER_CREDITS[tier];
      const allocations = await this.deps.credits.reserve(
        r,
        accountId,
        jobId,
        items.map((i) => ({ id: i.id, credits })),
        now,
        `photo run again (${tier})`,
      );
      for (const item of items) {
        const alloc = allocations.get(item.id)!;
        await r.items.update(item.id, {
          status: 'pending',
          tier,
          sample: 0,
          reserved_plan: alloc.plan,
          reserved_pack: alloc.pack,
          review: 'none',
          refunded: 0,
          error_code: null,
          error_message: null,
          error_input_fault: null,
          stage: null,
          started_at: null,
          finished_at: null,
          updated_at: now,
        });
      }
      if (stopped) {
        await this.deps.progress.recordJobEvent(r, jobId, 'job.started', now, {
          status: 'queued',
          finished_at: null,
          expires_at: null,
          cancel_requested_at: null,
        });
      } else {
        await r.jobs.update(jobId, { updated_at: now });
      }
      return { retried: items.length, charged: items.length * credits };
    });
    this.deps.bus.workQueued();
    this.deps.bus.jobChanged(jobId);
    return outcome;
  }
}
