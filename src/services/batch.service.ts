// The batch lifecycle of the spec: draft → queued → running → paused | done | failed, and each photo's
// held → pending → processing → done | failed. Every transition that moves credits writes its ledger
// rows in the same transaction.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { AppError, PhotoError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Store, Repos } from '../db/store.ts';
import type { ItemRow, JobRow, NewItem } from '../db/schema.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { EventName, Item, Job, JobDefaults, JobSummary, Rejected, Settings } from '../domain/batch.schemas.ts';
import type { CreditsService } from './credits.service.ts';
import type { EventBus } from './event-bus.ts';
import { resolveSettings } from './settings.ts';
import { countItems, itemView, jobSummaryView, jobView, TIER_CREDITS } from './job-view.ts';

/** Photos checked at once while an upload is received (about one per core). */
const INTAKE_PARALLELISM = Math.max(2, Math.min(4, os.availableParallelism()));

export const MAX_PHOTOS_PER_BATCH = 200;
export const MAX_ACTIVE_BATCHES = 2;
const ACTIVE = ['queued', 'running'];

/** What intake needs from the image codec: a header check and a thumbnail (a full decode, which catches truncated files). */
export interface PhotoInspector {
  probe(data: Buffer): Promise<{ format: string; width: number; height: number }>;
  thumbnail(data: Buffer): Promise<Buffer>;
}

export type PhotoSource =
  | { name: string; data: Buffer }
  | { name: string; reason: string }
  | { name: string; entries: () => AsyncIterable<{ name: string; data: Buffer } | { name: string; reason: string }> };

export interface CreateJobInput {
  name?: string;
  defaults?: JobDefaults;
  webhookUrl?: string;
  webhookEvents?: EventName[];
}

/** The caller's hourly photo budget (see RateLimitService). */
export interface PhotoBudget {
  limit: number;
  /** Photos that may still be added: intake refuses the rest without decoding them. */
  remaining: number;
  /** Takes up to `n` photos inside the transaction that adds them; returns how many fit. */
  take(r: Repos, n: number): Promise<{ granted: number }>;
}

export interface AddPhotosOptions {
  /** Photos the batch may hold (the account licence's batch limit; default 200). */
  maxPhotos?: number;
  budget?: PhotoBudget;
}

const batchFull = (max: number) => `The batch already holds ${max} photos, the most a batch takes.`;
const OVER_BUDGET = 'Over the hourly photo budget';
const overBudget = (limit: number) => `${OVER_BUDGET} of this key (${limit} photos an hour); add it again later (see X-Matte-Photos-Reset).`;
/** True for the `rejected` reason of a photo refused because the hourly budget was spent. */
export const isOverBudget = (reason: string) => reason.startsWith(OVER_BUDGET);

export interface StartInput {
  sample?: number;
  trial?: number;
  defaults?: JobDefaults;
}

export const blobKeys = {
  job: (jobId: string) => `jobs/${jobId}`,
  background: (jobId: string) => `jobs/${jobId}/background`,
  input: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/input`,
  inputThumb: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/input-thumb.webp`,
  cutout: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/cutout.png`,
  output: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/output`,
  thumb: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/thumb.webp`,
};

export interface BatchDeps {
  store: Store;
  blobs: BlobStore;
  credits: CreditsService;
  bus: EventBus;
  inspector: PhotoInspector;
  clock: () => number;
  resultTtlMs: number;
  /** Recent average time a photo takes, for estimates. */
  perImageMs: () => number;
  /** 'failed' when the model cannot be loaded: starting would only fail every photo. */
  modelState: () => 'loading' | 'ready' | 'failed';
  allowPrivateNetworks: boolean;
}

export class BatchService {
  constructor(private readonly deps: BatchDeps) {}

  private now(): number {
    return this.deps.clock();
  }

  // ---- reading ---------------------------------------------------------------------------------

  async requireJob(accountId: string, jobId: string, r: Repos = this.deps.store.repos): Promise<JobRow> {
    const job = await r.jobs.findForAccount(accountId, jobId);
    if (!job) throw notFound('batch');
    return job;
  }

  async getJob(accountId: string, jobId: string, opts: { since?: number } = {}): Promise<Job> {
    const r = this.deps.store.repos;
    const job = await this.requireJob(accountId, jobId);
    const items = await r.items.listForJob(jobId, opts.since);
    const { byStatus, refunded } = await r.items.statusCounts(jobId);
    return jobView(job, items, countItems(byStatus, refunded), this.deps.perImageMs(), this.now(), opts.since !== undefined);
  }

  async getSummary(accountId: string, jobId: string): Promise<JobSummary> {
    const job = await this.requireJob(accountId, jobId);
    return this.summarise(job);
  }

  private async summarise(job: JobRow): Promise<JobSummary> {
    const { byStatus, refunded } = await this.deps.store.repos.items.statusCounts(job.id);
    return jobSummaryView(job, countItems(byStatus, refunded), this.deps.perImageMs(), this.now());
  }

  async getItem(accountId: string, jobId: string, itemId: string): Promise<ItemRow> {
    await this.requireJob(accountId, jobId);
    const item = await this.deps.store.repos.items.findInJob(jobId, itemId);
    if (!item) throw notFound('photo');
    return item;
  }

  async itemView(accountId: string, jobId: string, itemId: string): Promise<Item> {
    return itemView(await this.getItem(accountId, jobId, itemId));
  }

  async listJobs(accountId: string, opts: { limit: number; status?: string; before?: number }) {
    const rows = await this.deps.store.repos.jobs.list(accountId, { ...opts, limit: opts.limit + 1 });
    const page = rows.slice(0, opts.limit);
    const jobs = await Promise.all(page.map((row) => this.summarise(row)));
    const hasMore = rows.length > opts.limit;
    return { jobs, hasMore, nextBefore: hasMore ? page[page.length - 1].created_at : null };
  }

  /**
   * Long-poll: resolves when the batch changed at or after `threshold`, when it is not running, or
   * after `timeoutMs`. Woken by the event bus, never by polling the database in a loop.
   */
  async waitForChange(accountId: string, jobId: string, threshold: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    let wake: () => void = () => undefined;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    // Subscribe before reading, so a change between the read and the subscription is not missed.
    const unsubscribe = this.deps.bus.onJobChanged(jobId, () => wake());
    const timer = setTimeout(() => wake(), timeoutMs);
    timer.unref();
    signal?.addEventListener('abort', () => wake(), { once: true });
    try {
      const job = await this.requireJob(accountId, jobId);
      if (!ACTIVE.includes(job.status) || job.updated_at >= threshold) return;
      await woken;
    } finally {
      clearTimeout(timer);
      unsubscribe();
    }
  }

  // ---- creating and filling a draft -------------------------------------------------------------

  async createJob(accountId: string, input: CreateJobInput, backgroundImage: Buffer | null) {
    const now = this.now();
    if (backgroundImage) await this.deps.inspector.probe(backgroundImage).catch((err: unknown) => rethrowAsValidation(err, '/background'));
    const settings = resolveSettings(input.defaults, { hasBackgroundImage: backgroundImage !== null, path: '/defaults' });
    if (input.webhookUrl) checkWebhookUrl(input.webhookUrl, this.deps.allowPrivateNetworks);
    const id = newId('job');
    const webhookSecret = input.webhookUrl ? `whsec_${randomBytes(24).toString('hex')}` : null;
    const webhookEvents = input.webhookUrl ? (input.webhookEvents ? [...new Set(input.webhookEvents)] : 'all') : null;
    const sample = input.defaults?.trial;
    if (backgroundImage) await this.deps.blobs.put(blobKeys.background(id), backgroundImage);
    await this.deps.store.repos.jobs.insert({
      id,
      account_id: accountId,
      name: input.name ?? null,
      status: 'draft',
      options: JSON.stringify({ ...(sample ? { sample } : {}), defaults: settings }),
      background_blob: backgroundImage ? blobKeys.background(id) : null,
      webhook_url: input.webhookUrl ?? null,
      webhook_secret: webhookSecret,
      webhook_events: webhookEvents ? JSON.stringify(webhookEvents) : null,
      rejected: '[]',
      event_seq: 0,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
      cancel_requested_at: null,
      expires_at: null,
    });
    const job = await this.getJob(accountId, id);
    return input.webhookUrl ? { ...job, webhookUrl: input.webhookUrl, webhookSecret: webhookSecret!, webhookEvents: webhookEvents! } : job;
  }

  /**
   * Adds photos to a draft. Each source is checked (format, pixel limit, a full decode for the input
   * thumbnail); what fails lands in `rejected` with a reason and the rest is added.
   */
  async addPhotos(accountId: string, jobId: string, sources: AsyncIterable<PhotoSource> | PhotoSource[], opts: AddPhotosOptions = {}): Promise<Job & { added: number }> {
    const { store, blobs, inspector } = this.deps;
    const maxPhotos = opts.maxPhotos ?? MAX_PHOTOS_PER_BATCH;
    const budget = opts.budget;
    let acceptedHere = 0;
    const job = await this.requireJob(accountId, jobId);
    if (job.status !== 'draft') throw new AppError('NOT_DRAFT', 'Photos can only be added before the batch is started.');
    const settings = (JSON.parse(job.options) as { defaults: Settings }).defaults;
    let count = await store.repos.items.countForJob(jobId);
    let position = await store.repos.items.maxPosition(jobId);
    const rejected: Rejected[] = [];
    const rows: NewItem[] = [];
    const overflow: NewItem[] = [];

    type Commit = () => Promise<unknown> | unknown;
    /**
     * Checking a photo (a full decode for its thumbnail) is the slow part of intake: photos are checked
     * INTAKE_PARALLELISM at a time while the upload goes on, and recorded one by one in upload order,
     * so positions, the batch limit and `rejected` come out as if checked in turn.
     */
    const pending: { candidate: boolean; result: Promise<Commit> }[] = [];
    const commitOldest = async () => {
      const commit = await pending.shift()!.result;
      await commit();
    };
    const enqueue = async (candidate: boolean, result: Promise<Commit>) => {
      pending.push({ candidate, result });
      while (pending.length >= INTAKE_PARALLELISM) await commitOldest();
    };
    const reject = (name: string, reason: string) => enqueue(false, Promise.resolve(() => rejected.push({ name, reason })));

    /** `shown` names the photo in `rejected`: a ZIP entry is shown as archive/path. */
    const accept = async (name: string, data: Buffer, shown = name) => {
      // Near a limit, finish the photos in flight first: one of them may yet be rejected.
      const inFlight = pending.filter((p) => p.candidate).length;
      if (count + inFlight >= maxPhotos || (budget && acceptedHere + inFlight >= budget.remaining)) while (pending.length) await commitOldest();
      if (count >= maxPhotos) return reject(shown, batchFull(maxPhotos));
      if (budget && acceptedHere >= budget.remaining) return reject(shown, overBudget(budget.limit));
      // The header check first: it refuses an oversized image before anything is decoded.
      const inspected = inspector.probe(data).then(async (info) => ({ info, thumb: await inspector.thumbnail(data) })).then(
        ({ info, thumb }): Commit => () => record(name, data, info, thumb),
        (err: unknown): Commit => () =>
          rejected.push({ name: shown, reason: err instanceof PhotoError ? err.message : 'The file is not a readable JPEG, PNG or WebP image.' }),
      );
      await enqueue(true, inspected);
    };

    const record = async (name: string, data: Buffer, info: { format: string; width: number; height: number }, thumb: Buffer) => {
      const itemId = newId('img');
      const now = this.now();
      try {
        await blobs.put(blobKeys.input(jobId, itemId), data);
        await blobs.put(blobKeys.inputThumb(jobId, itemId), thumb);
      } catch (err) {
        await blobs.deletePrefix(`${blobKeys.job(jobId)}/${itemId}`).catch(() => undefined);
        throw storageError(err);
      }
      count++;
      acceptedHere++;
      rows.push({
        id: itemId,
        job_id: jobId,
        account_id: accountId,
        position: ++position,
        name,
        status: 'held',
        sample: 0,
        tier: 'light',
        settings: JSON.stringify(settings),
        input_blob: blobKeys.input(jobId, itemId),
        input_bytes: data.length,
        source_width: info.width,
        source_height: info.height,
        source_format: info.format,
        error_code: null,
        error_message: null,
        error_input_fault: null,
        review: 'none',
        refunded: 0,
        reserved_plan: 0,
        reserved_pack: 0,
        charged: 0,
        rev: 0,
        attempts: 0,
        stage: null,
        quality: null,
        meta: null,
        output_format: null,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        started_at: null,
        stage_started_at: null,
        finished_at: null,
      });
    };

    try {
      for await (const source of sources) {
        if ('reason' in source) await reject(source.name, source.reason);
        else if ('data' in source) await accept(source.name, source.data);
        else {
          for await (const entry of source.entries()) {
            if ('reason' in entry) await reject(`${source.name}/${entry.name}`, entry.reason);
            else await accept(entry.name, entry.data, `${source.name}/${entry.name}`);
          }
        }
      }
      while (pending.length) await commitOldest();

      await store.transaction(async (r) => {
        await this.lockAccount(r, accountId);
        const current = await this.requireJob(accountId, jobId, r);
        if (current.status !== 'draft') throw new AppError('NOT_DRAFT', 'The batch was started while the photos were uploading.');
        // Another upload to this batch may have landed while these photos were checked: count again.
        const room = Math.max(0, maxPhotos - (await r.items.countForJob(jobId)));
        for (const row of rows.splice(room)) {
          overflow.push(row);
          rejected.push({ name: row.name, reason: batchFull(maxPhotos) });
        }
        // The hourly budget is spent in the transaction that adds the photos: two uploads at once can
        // never both take its last photos. What does not fit is refused like any other photo.
        const granted = budget ? (await budget.take(r, rows.length)).granted : rows.length;
        for (const row of rows.splice(granted)) {
          overflow.push(row);
          rejected.push({ name: row.name, reason: overBudget(budget!.limit) });
        }
        await r.items.insertMany(rows);
        await r.jobs.update(jobId, { rejected: JSON.stringify([...JSON.parse(current.rejected), ...rejected]), updated_at: this.now() });
      });
    } catch (err) {
      // Nothing half-written: the rows never landed, so their files go too.
      await Promise.all([...rows, ...overflow].map((row) => blobs.deletePrefix(`${blobKeys.job(jobId)}/${row.id}`)));
      throw err;
    }
    await Promise.all(overflow.map((row) => blobs.deletePrefix(`${blobKeys.job(jobId)}/${row.id}`)));
    this.deps.bus.jobChanged(jobId);
    const view = await this.getJob(accountId, jobId);
    return { ...view, added: rows.length };
  }

  // ---- removing photos and batches --------------------------------------------------------------

  async deleteItems(accountId: string, jobId: string, itemIds: string[]): Promise<Job & { removed: number }> {
    const removed = await this.deps.store.transaction(async (r) => {
      await this.lockAccount(r, accountId);
      await this.requireJob(accountId, jobId, r);
      const doomed: ItemRow[] = [];
      for (const id of new Set(itemIds)) {
        const item = await r.items.findInJob(jobId, id);
        // Photos in flight are skipped; unknown ids are ignored (deleting is idempotent).
        if (item && item.status !== 'processing') doomed.push(item);
      }
      return this.removeItems(r, jobId, doomed);
    });
    await this.afterRemoval(jobId, removed);
    return { ...(await this.getJob(accountId, jobId)), removed: removed.length };
  }

  async deleteItem(accountId: string, jobId: string, itemId: string): Promise<Job> {
    const removed = await this.deps.store.transaction(async (r) => {
      await this.lockAccount(r, accountId);
      await this.requireJob(accountId, jobId, r);
      const item = await r.items.findInJob(jobId, itemId);
      if (!item) throw notFound('photo');
      if (item.status === 'processing') throw new AppError('CONFLICT', 'The photo is at the model; delete it once it finished.', { reason: 'PROCESSING', itemId });
      return this.removeItems(r, jobId, [item]);
    });
    await this.afterRemoval(jobId, removed);
    return this.getJob(accountId, jobId);
  }

  private async removeItems(r: Repos, jobId: string, items: ItemRow[]): Promise<ItemRow[]> {
    const now = this.now();
    // A queued photo that never ran gives its reservation back; a finished one is not refunded.
    for (const item of items) if (item.status === 'pending') await this.deps.credits.release(r, item, now, 'photo deleted before it ran');
    await r.items.deleteIds(jobId, items.map((i) => i.id));
    if (items.length) {
      await r.jobs.update(jobId, { updated_at: now });
      await this.settleJobStatus(r, jobId, now);
    }
    return items;
  }

  private async afterRemoval(jobId: string, removed: ItemRow[]): Promise<void> {
    await Promise.all(removed.map((item) => this.deps.blobs.deletePrefix(`${blobKeys.job(jobId)}/${item.id}`)));
    if (removed.length) this.deps.bus.jobChanged(jobId);
  }

  async deleteJob(accountId: string, jobId: string): Promise<void> {
    await this.deps.store.transaction(async (r) => {
      await this.lockAccount(r, accountId);
      const job = await this.requireJob(accountId, jobId, r);
      if (ACTIVE.includes(job.status)) throw new AppError('CONFLICT', 'The batch is running; stop it first.', { reason: 'RUNNING', jobId });
      await this.releaseAll(r, jobId, 'batch deleted');
      await r.jobs.delete(jobId);
    });
    await this.deps.blobs.deletePrefix(blobKeys.job(jobId));
    this.deps.bus.jobChanged(jobId);
  }

  private async releaseAll(r: Repos, jobId: string, reason: string): Promise<void> {
    const now = this.now();
    for (const item of await r.items.listForJob(jobId)) {
      if ((item.reserved_plan || item.reserved_pack) && item.status !== 'done') await this.deps.credits.release(r, item, now, reason);
    }
  }

  // ---- starting, stopping, continuing -----------------------------------------------------------

  /**
   * Every transaction that moves credits or counts running batches takes the account's row lock first
   * (PostgreSQL; SQLite's write lock covers it). Two starts at once then run one after the other: the
   * second sees the first's batch as started (NOT_DRAFT), counted among the running ones
   * (TOO_MANY_ACTIVE) and its credits gone (NO_CREDITS). One lock order, account first, also rules
   * out deadlocks with the worker's settlements.
   */
  private async lockAccount(r: Repos, accountId: string): Promise<void> {
    await r.accounts.findForUpdate(accountId);
  }

  async start(accountId: string, jobId: string, input: StartInput): Promise<Job> {
    if (this.deps.modelState() === 'failed') throw new AppError('SERVICE_UNAVAILABLE', 'Photo processing is unavailable right now; nothing was charged. Try again later.');
    const now = this.now();
    await this.deps.store.transaction(async (r) => {
      await this.lockAccount(r, accountId);
      const job = await this.requireJob(accountId, jobId, r);
      if (job.status !== 'draft') throw new AppError('NOT_DRAFT', 'The batch was started already.');
      const items = await r.items.listForJob(jobId);
      if (items.length === 0) throw new AppError('CONFLICT', 'The batch has no photos to start.', { reason: 'EMPTY', jobId });
      if ((await r.jobs.countActive(accountId)) >= MAX_ACTIVE_BATCHES) {
        throw new AppError('TOO_MANY_ACTIVE', `The account has ${MAX_ACTIVE_BATCHES} batches running already; start this one when one finishes.`);
      }
      const options = JSON.parse(job.options) as { sample?: number; defaults: Settings };
      if (input.defaults) {
        const background = job.background_blob !== null;
        options.defaults = resolveSettings(input.defaults, { hasBackgroundImage: background, path: '/defaults' });
      }
      const sample = input.sample ?? input.trial ?? input.defaults?.trial ?? options.sample;
      if (sample !== undefined) options.sample = sample;
      const runIds = sample !== undefined && sample < items.length ? spreadSample(items, sample) : new Set(items.map((i) => i.id));
      const run = items.filter((i) => runIds.has(i.id));
      const allocations = await this.deps.credits.reserve(r, accountId, jobId, run.map((i) => ({ id: i.id, credits: TIER_CREDITS.light })), now);
      const settings = JSON.stringify(options.defaults);
      for (const item of items) {
        const alloc = allocations.get(item.id);
        await r.items.update(item.id, {
          settings,
          updated_at: now,
          ...(alloc ? { status: 'pending', sample: sample !== undefined ? 1 : 0, reserved_plan: alloc.plan, reserved_pack: alloc.pack } : {}),
        });
      }
      await r.jobs.update(jobId, { status: 'queued', options: JSON.stringify(options), started_at: now, updated_at: now });
      await this.recordJobEvent(r, jobId, 'job.started', now);
    });
    this.deps.bus.workQueued();
    this.deps.bus.jobChanged(jobId);
    return this.getJob(accountId, jobId);
  }

  async cancel(accountId: string, jobId: string): Promise<Job & { stopped: number; inFlight: number }> {
    const now = this.now();
    const result = await this.deps.store.transaction(async (r) => {
      await this.lockAccount(r, accountId);
      const job = await this.requireJob(accountId, jobId, r);
      if (!ACTIVE.includes(job.status)) throw new AppError('NOT_RUNNING', `The batch is ${job.status}, not running.`);
      const stopped = await r.items.transitionForJob(jobId, 'pending', { status: 'held', reserved_plan: 0, reserved_pack: 0, updated_at: now });
      for (const item of stopped) await this.deps.credits.release(r, item, now, 'batch stopped before the photo ran');
      const { byStatus } = await r.items.statusCounts(jobId);
      await r.jobs.update(jobId, { cancel_requested_at: now, updated_at: now });
      await this.settleJobStatus(r, jobId, now);
      return { stopped: stopped.length, inFlight: byStatus.processing ?? 0 };
    });
    this.deps.bus.jobChanged(jobId);
    return { ...(await this.getJob(accountId, jobId)), ...result };
  }

  async continue(accountId: string, jobId: string): Promise<Job> {
    const now = this.now();
    await this.deps.store.transaction(async (r) => {
      await this.lockAccount(r, accountId);
      const job = await this.requireJob(accountId, jobId, r);
      const held = (await r.items.listForJob(jobId)).filter((i) => i.status === 'held');
      if (job.status === 'draft') throw new AppError('NOT_DRAFT', 'The batch has not been started; start it instead.');
      if (held.length === 0) throw new AppError('CONFLICT', 'No photos are held in this batch.', { reason: 'NOTHING_HELD', jobId });
      if (!ACTIVE.includes(job.status) && (await r.jobs.countActive(accountId)) >= MAX_ACTIVE_BATCHES) {
        throw new AppError('TOO_MANY_ACTIVE', `The account has ${MAX_ACTIVE_BATCHES} batches running already.`);
      }
      const allocations = await this.deps.credits.reserve(r, accountId, jobId, held.map((i) => ({ id: i.id, credits: TIER_CREDITS[i.tier as 'light' | 'heavy'] })), now);
      for (const item of held) {
        const alloc = allocations.get(item.id)!;
        await r.items.update(item.id, { status: 'pending', reserved_plan: alloc.plan, reserved_pack: alloc.pack, updated_at: now });
      }
      await r.jobs.update(jobId, { status: ACTIVE.includes(job.status) ? job.status : 'queued', cancel_requested_at: null, finished_at: null, expires_at: null, updated_at: now });
      await this.recordJobEvent(r, jobId, 'job.started', now);
    });
    this.deps.bus.workQueued();
    this.deps.bus.jobChanged(jobId);
    return this.getJob(accountId, jobId);
  }

  // ---- the worker's side ------------------------------------------------------------------------

  async claimNext(owner: string, leaseMs: number): Promise<ItemRow | undefined> {
    const now = this.now();
    const item = await this.deps.store.repos.items.claimNext(owner, now, leaseMs);
    if (!item) return undefined;
    const moved = await this.deps.store.repos.jobs.transition(item.job_id, ['queued'], { status: 'running', updated_at: now });
    if (!moved) await this.deps.store.repos.jobs.update(item.job_id, { updated_at: now });
    this.deps.bus.jobChanged(item.job_id);
    return item;
  }

  async markStage(item: ItemRow, owner: string, stage: string): Promise<boolean> {
    const now = this.now();
    const ok = await this.deps.store.repos.items.updateLeased(item.id, owner, { stage, stage_started_at: now, updated_at: now });
    if (ok) {
      await this.deps.store.repos.jobs.update(item.job_id, { updated_at: now });
      this.deps.bus.jobChanged(item.job_id);
    }
    return ok;
  }

  async renewLease(item: ItemRow, owner: string, leaseMs: number): Promise<boolean> {
    return this.deps.store.repos.items.renewLease(item.id, owner, this.now() + leaseMs);
  }

  /**
   * Records a finished photo. Only the lease holder may settle: a worker whose lease expired (and
   * whose photo was queued again) settles nothing, so a photo is never charged twice.
   */
  async settleDone(item: ItemRow, owner: string, outcome: { red: boolean; quality: unknown; meta: unknown; outputFormat: string }): Promise<boolean> {
    const now = this.now();
    const settled = await this.deps.store.transaction(async (r) => {
      const current = await this.lockForSettling(r, item);
      if (!current || current.status !== 'processing' || current.lease_owner !== owner) return false;
      let charged = 0;
      if (outcome.red) await this.deps.credits.release(r, current, now, 'flagged by the automatic check');
      else charged = await this.deps.credits.commit(r, current, now);
      await r.items.update(item.id, {
        status: 'done',
        review: outcome.red ? 'red' : 'none',
        refunded: outcome.red ? 1 : 0,
        charged,
        reserved_plan: 0,
        reserved_pack: 0,
        quality: JSON.stringify(outcome.quality),
        meta: JSON.stringify(outcome.meta),
        output_format: outcome.outputFormat,
        rev: current.rev + 1,
        error_code: null,
        error_message: null,
        error_input_fault: null,
        stage: null,
        lease_owner: null,
        lease_expires_at: null,
        finished_at: now,
        updated_at: now,
      });
      await this.recordItemEvent(r, item.id, outcome.red ? 'item.needs_review' : 'item.done', now);
      await r.jobs.update(item.job_id, { updated_at: now });
      await this.settleJobStatus(r, item.job_id, now);
      return true;
    });
    this.deps.bus.jobChanged(item.job_id);
    return settled;
  }

  /**
   * A photo is settled once: the worker finishing it and the sweep failing it after its lease ran out
   * may meet. Both lock the account, then the photo row, and check its state under those locks.
   */
  private async lockForSettling(r: Repos, item: Pick<ItemRow, 'id' | 'account_id'>): Promise<ItemRow | undefined> {
    await this.lockAccount(r, item.account_id);
    return r.items.findForUpdate(item.id);
  }

  async settleFailed(item: ItemRow, owner: string | null, error: PhotoError): Promise<boolean> {
    const now = this.now();
    const settled = await this.deps.store.transaction(async (r) => {
      const current = await this.lockForSettling(r, item);
      if (!current || current.status !== 'processing' || (owner !== null && current.lease_owner !== owner)) return false;
      await this.deps.credits.release(r, current, now, `photo failed: ${error.code}`);
      await r.items.update(item.id, {
        status: 'failed',
        error_code: error.code,
        error_message: error.message,
        error_input_fault: error.inputFault ? 1 : 0,
        reserved_plan: 0,
        reserved_pack: 0,
        stage: null,
        lease_owner: null,
        lease_expires_at: null,
        finished_at: now,
        updated_at: now,
      });
      await this.recordItemEvent(r, item.id, 'item.failed', now);
      await r.jobs.update(item.job_id, { updated_at: now });
      await this.settleJobStatus(r, item.job_id, now);
      return true;
    });
    this.deps.bus.jobChanged(item.job_id);
    return settled;
  }

  /** Photos whose worker died: queued again, or failed once they used up their attempts. Never charged twice. */
  async requeueExpired(maxAttempts: number): Promise<number> {
    const now = this.now();
    const expired = await this.deps.store.repos.items.listExpiredLeases(now, 100);
    for (const item of expired) {
      if (item.attempts >= maxAttempts) {
        await this.settleFailed(item, item.lease_owner, new PhotoError('PROCESSING_FAILED', 'The photo could not be processed; retrying may help.', false));
        continue;
      }
      const owner = item.lease_owner ?? '';
      const requeued = await this.deps.store.repos.items.updateLeased(item.id, owner, { status: 'pending', lease_owner: null, lease_expires_at: null, stage: null, updated_at: now });
      if (requeued) this.deps.bus.jobChanged(item.job_id);
    }
    if (expired.length) this.deps.bus.workQueued();
    return expired.length;
  }

  /** Results live two hours: batches past their expiry are deleted, rows and files. */
  async deleteExpired(): Promise<number> {
    const expired = await this.deps.store.repos.jobs.listExpired(this.now(), 50);
    for (const job of expired) {
      await this.deps.store.repos.jobs.delete(job.id);
      await this.deps.blobs.deletePrefix(blobKeys.job(job.id));
      this.deps.bus.jobChanged(job.id);
    }
    return expired.length;
  }

  /**
   * POST /v1/images gave up waiting for a photo that never started: its reservation is released, the
   * photo fails as CANCELLED and the one-photo batch ends `cancelled`. False when the photo had started.
   */
  async abandonUnstarted(jobId: string, itemId: string): Promise<boolean> {
    const now = this.now();
    const abandoned = await this.deps.store.transaction(async (r) => {
      const [item] = await r.items.transitionForJob(jobId, 'pending', { status: 'failed', error_code: 'CANCELLED', error_message: 'The photo did not start in time and was cancelled; nothing was charged.', error_input_fault: 0, reserved_plan: 0, reserved_pack: 0, finished_at: now, updated_at: now }, [itemId]);
      if (!item) return false;
      await this.deps.credits.release(r, item, now, 'photo did not start before the timeout');
      await r.jobs.update(jobId, { status: 'cancelled', finished_at: now, expires_at: now + this.deps.resultTtlMs, updated_at: now });
      return true;
    });
    if (abandoned) this.deps.bus.jobChanged(jobId);
    return abandoned;
  }

  async getJobRowForWorker(jobId: string): Promise<JobRow | undefined> {
    return this.deps.store.repos.jobs.findById(jobId);
  }

  async loadBackground(job: Pick<JobRow, 'background_blob'>): Promise<Buffer | null> {
    return job.background_blob ? this.deps.blobs.get(job.background_blob) : null;
  }

  // ---- status and events ------------------------------------------------------------------------

  /** After photos settle: a running batch with nothing queued or in flight is paused (photos held) or finished. */
  private async settleJobStatus(r: Repos, jobId: string, now: number): Promise<void> {
    const job = await r.jobs.findById(jobId);
    if (!job || !ACTIVE.includes(job.status)) return;
    const { byStatus } = await r.items.statusCounts(jobId);
    const n = (s: string) => byStatus[s] ?? 0;
    if (n('pending') + n('processing') > 0) return;
    if (n('held') > 0) {
      await r.jobs.update(jobId, { status: 'paused', updated_at: now });
      await this.recordJobEvent(r, jobId, 'job.paused', now);
      return;
    }
    const status = n('done') === 0 && n('failed') > 0 ? 'failed' : 'done';
    await r.jobs.update(jobId, { status, finished_at: now, expires_at: now + this.deps.resultTtlMs, updated_at: now });
    await this.recordJobEvent(r, jobId, 'job.done', now);
  }

  private async recordJobEvent(r: Repos, jobId: string, event: EventName, now: number): Promise<void> {
    const job = (await r.jobs.findById(jobId))!;
    const { byStatus, refunded } = await r.items.statusCounts(jobId);
    const counts = countItems(byStatus, refunded);
    const seq = await r.jobs.nextEventSeq(jobId);
    await r.events.insert({
      id: seq,
      event,
      at: now,
      jobId,
      data: {
        status: job.status,
        counts,
        downloadUrl: counts.done > 0 ? `/v1/jobs/${jobId}/download` : null,
        reviewUrl: `/v1/jobs/${jobId}/review`,
        continueUrl: job.status === 'paused' && counts.held > 0 ? `/v1/jobs/${jobId}/continue` : null,
      },
    });
  }

  private async recordItemEvent(r: Repos, itemId: string, event: EventName, now: number): Promise<void> {
    const row = (await r.items.findById(itemId))!;
    const item = itemView(row);
    const seq = await r.jobs.nextEventSeq(row.job_id);
    await r.events.insert({
      id: seq,
      event,
      at: now,
      jobId: row.job_id,
      data: {
        itemId: item.id,
        name: item.name,
        status: item.status,
        review: item.review,
        score: item.quality?.score ?? null,
        credits: item.credits,
        attempts: item.attempts,
        error: item.error ?? null,
        outputUrl: item.outputUrl ?? null,
        thumbUrl: item.thumbUrl ?? null,
        inputThumbUrl: item.inputThumbUrl ?? null,
      },
    });
  }
}

/** N photos spread evenly over the batch: the first of each of N equal slices. */
export function spreadSample(items: ItemRow[], n: number): Set<string> {
  const picked = new Set<string>();
  for (let i = 0; i < n; i++) picked.add(items[Math.floor((i * items.length) / n)].id);
  return picked;
}

function checkWebhookUrl(raw: string, allowPrivate: boolean): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('VALIDATION', 'webhookUrl is not a valid URL.', { errors: [{ path: '/webhookUrl', message: 'must be an absolute https URL' }] });
  }
  const ok = url.protocol === 'https:' || (allowPrivate && url.protocol === 'http:');
  if (!ok) throw new AppError('VALIDATION', 'webhookUrl must use https.', { errors: [{ path: '/webhookUrl', message: 'must be an https URL' }] });
  if (!allowPrivate && /^(localhost|127\.|10\.|192\.168\.|169\.254\.|\[?::1\]?$)/i.test(url.hostname)) {
    throw new AppError('VALIDATION', 'webhookUrl must be a public host.', { errors: [{ path: '/webhookUrl', message: 'private and loopback hosts are refused' }] });
  }
}

function rethrowAsValidation(err: unknown, path: string): never {
  const message = err instanceof Error ? err.message : 'unreadable image';
  throw new AppError('VALIDATION', `The background image is not usable: ${message}`, { errors: [{ path, message }] });
}

function storageError(err: unknown): AppError {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new AppError('STORAGE_FULL', 'The data volume is full; nothing was added.');
  return new AppError('UPLOAD_FAILED', 'Storing the photos failed; nothing was added. Retry the same request.');
}
