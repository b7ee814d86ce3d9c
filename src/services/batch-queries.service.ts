// Reading batches and photos, always scoped to the account: another account's batch does not exist.
// Long-polls wait on the event bus, never by polling the database in a loop.
import { notFound } from '../errors.ts';
import type { Store, Repos } from '../db/store.ts';
import type { ClaimRow, ItemRow, JobRow } from '../db/schema.ts';
import type { Counts, Item, Job, JobStatus, JobSummary } from '../domain/batch.schemas.ts';
import { ACTIVE_JOB_STATUSES } from '../domain/batch-rules.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import { countItems, itemView, jobSummaryView, jobView, storedMeta } from './job-view.ts';

export class BatchQueries {
  constructor(
    private readonly deps: {
      store: Store;
      bus: EventBus;
      clock: () => number;
      /** Recent average time a photo takes, for estimates. */
      perImageMs: () => number;
    },
  ) {}

  // ---- reading ---------------------------------------------------------------------------------

  async requireJob(accountId: string, jobId: string, r: Repos = this.deps.store.repos): Promise<JobRow> {
    const job = await r.jobs.findForAccount(accountId, jobId);
    if (!job) throw notFound('batch');
    return job;
  }

  /** The batch row and its photos' counts by status, in one statement. */
  private async requireJobWithCounts(accountId: string, jobId: string) {
    const found = await this.deps.store.repos.jobs.findForAccountWithCounts(accountId, jobId);
    if (!found) throw notFound('batch');
    return found;
  }

  /** The batch row, its photo rows (or those changed since `since`) and its counts. */
  async getRows(
    accountId: string,
    jobId: string,
    opts: { since?: number } = {},
  ): Promise<{ job: JobRow; items: ItemRow[]; counts: Counts; claims: ClaimRow[] }> {
    const r = this.deps.store.repos;
    const job = await this.requireJob(accountId, jobId);
    const items = await r.items.listForJob(jobId, opts.since);
    const { byStatus, refunded } = await r.items.statusCounts(jobId);
    const claims = await r.claims.listForJob(jobId);
    return { job, items, counts: countItems(byStatus, refunded), claims };
  }

  async getJob(accountId: string, jobId: string, opts: { since?: number } = {}): Promise<Job> {
    const { job, items, counts, claims } = await this.getRows(accountId, jobId, opts);
    return jobView(job, items, counts, this.deps.perImageMs(), this.deps.clock(), opts.since !== undefined, claims);
  }

  /** The batch without its photos: its row and counts read in one statement. */
  async getSummary(accountId: string, jobId: string): Promise<JobSummary> {
    const found = await this.requireJobWithCounts(accountId, jobId);
    return jobSummaryView(
      found.job,
      countItems(found.byStatus, found.refunded),
      this.deps.perImageMs(),
      this.deps.clock(),
    );
  }

  /** The summary of a batch row already read (its counts are read now). */
  async summarise(job: JobRow): Promise<JobSummary> {
    const { byStatus, refunded } = await this.deps.store.repos.items.statusCounts(job.id);
    return jobSummaryView(job, countItems(byStatus, refunded), this.deps.perImageMs(), this.deps.clock());
  }

  async getItem(accountId: string, jobId: string, itemId: string): Promise<ItemRow> {
    await this.requireJob(accountId, jobId);
    const item = await this.deps.store.repos.items.findInJob(jobId, itemId);
    if (!item) throw notFound('photo');
    return item;
  }

  /** The marketplace report of the photo's current output: null before it is rendered, or on no marketplace preset. */
  async compliance(accountId: string, jobId: string, itemId: string) {
    const row = await this.getItem(accountId, jobId, itemId);
    const meta = row.status === 'done' ? storedMeta(row) : {};
    return { itemId: row.id, rev: row.rev, compliance: meta.compliance ?? null };
  }

  async itemView(accountId: string, jobId: string, itemId: string): Promise<Item> {
    const row = await this.getItem(accountId, jobId, itemId);
    return itemView(row, await this.deps.store.repos.claims.listForItem(itemId));
  }

  /** The names sellers gave their batches, and which were one-photo calls, for those of `ids` the account owns. */
  labels(accountId: string, ids: string[]) {
    return this.deps.store.repos.jobs.labels(accountId, ids);
  }

  async listJobs(accountId: string, opts: { limit: number; status?: JobStatus; before?: number }) {
    const rows = await this.deps.store.repos.jobs.list(accountId, { ...opts, limit: opts.limit + 1 });
    const page = rows.slice(0, opts.limit);
    const jobs = await Promise.all(page.map((row) => this.summarise(row)));
    const hasMore = rows.length > opts.limit;
    return { jobs, hasMore, nextBefore: hasMore ? page[page.length - 1].created_at : null };
  }

  /**
   * Long-poll: resolves when the batch changed at or after `threshold` (for a summary's wait, once waiting:
   * when what the summary shows moved), when it is not running, or after `timeoutMs`. Woken by the event bus,
   * never by polling the database in a loop. A photo moving to its next stage wakes only a reader of the photos
   * (`stages`): a summary's counts and status stay as they were.
   * A signal only says "look again": one that finds nothing new (late, doubled, or another process's notice of
   * the change the caller already has) keeps the wait going.
   */
  async waitForChange(
    accountId: string,
    jobId: string,
    threshold: number,
    timeoutMs: number,
    { signal, stages = false }: { signal?: AbortSignal; stages?: boolean } = {},
  ): Promise<void> {
    let wake: () => void = () => undefined;
    let woken = new Promise<void>((resolve) => (wake = resolve));
    let over = false;
    const end = () => {
      over = true;
      wake();
    };
    // Subscribe before reading, so a change between the read and the subscription is not missed.
    const unsubscribe = this.deps.bus.onJobChanged(jobId, () => wake(), { stages });
    const timer = setTimeout(end, timeoutMs);
    timer.unref();
    signal?.addEventListener('abort', end, { once: true });
    try {
      // A summary's wait ends when what the summary shows moves: a stage move marks the batch changed (its
      // photos' long-poll answers with it) but leaves the summary as it was, and a late or doubled signal
      // must not end the wait on it.
      let shown: string | undefined;
      while (!over) {
        const { job, summary } = await this.newsOf(accountId, jobId, !stages);
        if (!ACTIVE_JOB_STATUSES.includes(job.status)) break;
        // The first look (and every look of a photos' wait) asks whether anything changed after `threshold`.
        if (stages || shown === undefined ? job.updated_at >= threshold : summary !== shown) break;
        shown = summary;
        await woken;
        // Armed again before the next read: a signal during that read ends the next wait at once.
        woken = new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', end);
    }
  }

  /**
   * The batch row and, for a summary's wait, what its summary shows apart from the time (the row but its
   * `updated_at`, and the photos' counts), as text to compare; a photos' wait reads the row alone.
   */
  private async newsOf(accountId: string, jobId: string, summary: boolean): Promise<{ job: JobRow; summary: string }> {
    if (!summary) return { job: await this.requireJob(accountId, jobId), summary: '' };
    const found = await this.requireJobWithCounts(accountId, jobId);
    const { updated_at: _time, ...shown } = found.job;
    return { job: found.job, summary: JSON.stringify([shown, found.byStatus, found.refunded]) };
  }
}
