// The batch lifecycle of the spec: draft → queued → running → paused | done | failed, and each photo's
// held → pending → processing → done | failed, as the API drives it (create, start, stop, continue,
// delete). Filling a draft is intake.service.ts; the worker's side is photo-queue.service.ts. Every
// transition that moves credits writes its ledger rows in the same transaction.
import net from 'node:net';
import { isPrivateAddress } from '../adapters/outbound-http.adapter.ts';
import { randomBytes } from 'node:crypto';
import { AppError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Store, Repos } from '../db/store.ts';
import type { ItemRow } from '../db/schema.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { EventName, Job, JobDefaults } from '../domain/batch.schemas.ts';
import { ACTIVE_JOB_STATUSES, MAX_ACTIVE_BATCHES } from '../domain/batch-rules.ts';
import type { CreditsService } from './credits.service.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import type { BatchProgress } from './batch-progress.service.ts';
import type { PhotoInspector } from './intake.service.ts';
import { resolveSettings } from './settings.ts';
import { TIER_CREDITS } from './job-view.ts';
import { blobKeys } from './blob-keys.ts';
import { lockAccount } from './locks.ts';
import { jsonText } from '../db/json-text.ts';

export interface CreateJobInput {
  name?: string;
  /** `image` for the one-photo call's batch; `batch` otherwise. */
  origin?: 'batch' | 'image';
  defaults?: JobDefaults;
  webhookUrl?: string;
  webhookEvents?: EventName[];
}

export interface StartInput {
  sample?: number;
  trial?: number;
  defaults?: JobDefaults;
}

export interface BatchDeps {
  store: Store;
  blobs: BlobStore;
  credits: CreditsService;
  bus: EventBus;
  /** Checks a background image given at creation. */
  inspector: PhotoInspector;
  clock: () => number;
  queries: BatchQueries;
  progress: BatchProgress;
  /** 'failed' when the model cannot be loaded: starting would only fail every photo. */
  /** The model's state now (an inference server that did not answer at start is asked again). */
  modelState: () => 'loading' | 'ready' | 'failed' | Promise<'loading' | 'ready' | 'failed'>;
  allowPrivateNetworks: boolean;
}

export class BatchService {
  constructor(private readonly deps: BatchDeps) {}

  // ---- creating a draft -------------------------------------------------------------------------

  async createJob(accountId: string, input: CreateJobInput, backgroundImage: Buffer | null) {
    const now = this.deps.clock();
    if (backgroundImage)
      await this.deps.inspector.probe(backgroundImage).catch((err: unknown) => rethrowAsValidation(err, '/background'));
    const settings = resolveSettings(input.defaults, {
      hasBackgroundImage: backgroundImage !== null,
      path: '/defaults',
    });
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
      origin: input.origin ?? 'batch',
      status: 'draft',
      options: jsonText({ ...(sample ? { sample } : {}), defaults: settings }),
      background_blob: backgroundImage ? blobKeys.background(id) : null,
      webhook_url: input.webhookUrl ?? null,
      webhook_secret: webhookSecret,
      webhook_events: webhookEvents ? jsonText(webhookEvents) : null,
      rejected: jsonText([]),
      event_seq: 0,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
      cancel_requested_at: null,
      expires_at: null,
    });
    const job = await this.deps.queries.getJob(accountId, id);
    return input.webhookUrl
      ? { ...job, webhookUrl: input.webhookUrl, webhookSecret: webhookSecret!, webhookEvents: webhookEvents! }
      : job;
  }

  // ---- removing photos and batches --------------------------------------------------------------

  async deleteItems(accountId: string, jobId: string, itemIds: string[]): Promise<Job & { removed: number }> {
    const removed = await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      await this.deps.queries.requireJob(accountId, jobId, r);
      const doomed: ItemRow[] = [];
      for (const id of new Set(itemIds)) {
        const item = await r.items.findInJob(jobId, id);
        // Photos in flight are skipped; unknown ids are ignored (deleting is idempotent).
        if (item && item.status !== 'processing') doomed.push(item);
      }
      return this.removeItems(r, jobId, doomed);
    });
    await this.afterRemoval(jobId, removed);
    return { ...(await this.deps.queries.getJob(accountId, jobId)), removed: removed.length };
  }

  async deleteItem(accountId: string, jobId: string, itemId: string): Promise<Job> {
    const removed = await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      await this.deps.queries.requireJob(accountId, jobId, r);
      const item = await r.items.findInJob(jobId, itemId);
      if (!item) throw notFound('photo');
      if (item.status === 'processing')
        throw new AppError('CONFLICT', 'The photo is at the model; delete it once it finished.', {
          reason: 'PROCESSING',
          itemId,
        });
      return this.removeItems(r, jobId, [item]);
    });
    await this.afterRemoval(jobId, removed);
    return this.deps.queries.getJob(accountId, jobId);
  }

  private async removeItems(r: Repos, jobId: string, items: ItemRow[]): Promise<ItemRow[]> {
    const now = this.deps.clock();
    // A queued photo that never ran gives its reservation back; a finished one is not refunded.
    for (const item of items)
      if (item.status === 'pending') await this.deps.credits.release(r, item, now, 'photo deleted before it ran');
    await r.items.deleteIds(
      jobId,
      items.map((i) => i.id),
    );
    if (items.length) {
      await r.jobs.update(jobId, { updated_at: now });
      await this.deps.progress.settleJobStatus(r, jobId, now);
    }
    return items;
  }

  private async afterRemoval(jobId: string, removed: ItemRow[]): Promise<void> {
    await Promise.all(removed.map((item) => this.deps.blobs.deletePrefix(`${blobKeys.job(jobId)}/${item.id}`)));
    if (removed.length) this.deps.bus.jobChanged(jobId);
  }

  async deleteJob(accountId: string, jobId: string): Promise<void> {
    await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      const job = await this.deps.queries.requireJob(accountId, jobId, r);
      if (ACTIVE_JOB_STATUSES.includes(job.status))
        throw new AppError('CONFLICT', 'The batch is running; stop it first.', { reason: 'RUNNING', jobId });
      await this.releaseAll(r, jobId, 'batch deleted');
      await r.jobs.delete(jobId);
    });
    await this.deps.blobs.deletePrefix(blobKeys.job(jobId));
    this.deps.bus.jobChanged(jobId);
  }

  private async releaseAll(r: Repos, jobId: string, reason: string): Promise<void> {
    const now = this.deps.clock();
    for (const item of await r.items.listForJob(jobId)) {
      if ((item.reserved_plan || item.reserved_pack) && item.status !== 'done')
        await this.deps.credits.release(r, item, now, reason);
    }
  }

  async start(accountId: string, jobId: string, input: StartInput): Promise<Job> {
    if ((await this.deps.modelState()) === 'failed')
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'Photo processing is unavailable right now; nothing was charged. Try again later.',
      );
    const now = this.deps.clock();
    await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      const job = await this.deps.queries.requireJob(accountId, jobId, r);
      if (job.status !== 'draft') throw new AppError('NOT_DRAFT', 'The batch was started already.');
      const items = await r.items.listForJob(jobId);
      if (items.length === 0)
        throw new AppError('CONFLICT', 'The batch has no photos to start.', { reason: 'EMPTY', jobId });
      if ((await r.jobs.countActive(accountId)) >= MAX_ACTIVE_BATCHES) {
        throw new AppError(
          'TOO_MANY_ACTIVE',
          `The account has ${MAX_ACTIVE_BATCHES} batches running already; start this one when one finishes.`,
        );
      }
      const options = job.options;
      if (input.defaults) {
        const background = job.background_blob !== null;
        options.defaults = resolveSettings(input.defaults, { hasBackgroundImage: background, path: '/defaults' });
      }
      const sample = input.sample ?? input.trial ?? input.defaults?.trial ?? options.sample;
      if (sample !== undefined) options.sample = sample;
      const runIds =
        sample !== undefined && sample < items.length ? spreadSample(items, sample) : new Set(items.map((i) => i.id));
      const run = items.filter((i) => runIds.has(i.id));
      const allocations = await this.deps.credits.reserve(
        r,
        accountId,
        jobId,
        run.map((i) => ({ id: i.id, credits: TIER_CREDITS.light })),
        now,
      );
      // One statement for each kind of change: photos left held, and those queued with the same reservation.
      const settings = jsonText(options.defaults);
      const groups = new Map<string, { ids: string[]; alloc: { plan: number; pack: number } | undefined }>();
      for (const item of items) {
        const alloc = allocations.get(item.id);
        const key = alloc ? `${alloc.plan}/${alloc.pack}` : 'held';
        const group = groups.get(key) ?? { ids: [], alloc };
        group.ids.push(item.id);
        groups.set(key, group);
      }
      for (const { ids, alloc } of groups.values()) {
        await r.items.updateMany(ids, {
          settings,
          updated_at: now,
          ...(alloc
            ? {
                status: 'pending',
                sample: sample !== undefined ? 1 : 0,
                reserved_plan: alloc.plan,
                reserved_pack: alloc.pack,
              }
            : {}),
        });
      }
      await this.deps.progress.recordJobEvent(r, jobId, 'job.started', now, {
        status: 'queued',
        options: jsonText(options),
        started_at: now,
      });
    });
    this.deps.bus.workQueued();
    this.deps.bus.jobChanged(jobId);
    return this.deps.queries.getJob(accountId, jobId);
  }

  async cancel(accountId: string, jobId: string): Promise<Job & { stopped: number; inFlight: number }> {
    const now = this.deps.clock();
    const result = await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      const job = await this.deps.queries.requireJob(accountId, jobId, r);
      if (!ACTIVE_JOB_STATUSES.includes(job.status))
        throw new AppError('NOT_RUNNING', `The batch is ${job.status}, not running.`);
      const stopped = await r.items.transitionForJob(jobId, 'pending', {
        status: 'held',
        reserved_plan: 0,
        reserved_pack: 0,
        updated_at: now,
      });
      for (const item of stopped) await this.deps.credits.release(r, item, now, 'batch stopped before the photo ran');
      const { byStatus } = await r.items.statusCounts(jobId);
      await r.jobs.update(jobId, { cancel_requested_at: now, updated_at: now });
      await this.deps.progress.settleJobStatus(r, jobId, now);
      return { stopped: stopped.length, inFlight: byStatus.processing ?? 0 };
    });
    this.deps.bus.jobChanged(jobId);
    return { ...(await this.deps.queries.getJob(accountId, jobId)), ...result };
  }

  async continue(accountId: string, jobId: string): Promise<Job> {
    const now = this.deps.clock();
    await this.deps.store.transaction(async (r) => {
      await lockAccount(r, accountId);
      const job = await this.deps.queries.requireJob(accountId, jobId, r);
      const held = (await r.items.listForJob(jobId)).filter((i) => i.status === 'held');
      if (job.status === 'draft') throw new AppError('NOT_DRAFT', 'The batch has not been started; start it instead.');
      if (held.length === 0)
        throw new AppError('CONFLICT', 'No photos are held in this batch.', { reason: 'NOTHING_HELD', jobId });
      if (!ACTIVE_JOB_STATUSES.includes(job.status) && (await r.jobs.countActive(accountId)) >= MAX_ACTIVE_BATCHES) {
        throw new AppError('TOO_MANY_ACTIVE', `The account has ${MAX_ACTIVE_BATCHES} batches running already.`);
      }
      const allocations = await this.deps.credits.reserve(
        r,
        accountId,
        jobId,
        held.map((i) => ({ id: i.id, credits: TIER_CREDITS[i.tier] })),
        now,
      );
      for (const item of held) {
        const alloc = allocations.get(item.id)!;
        await r.items.update(item.id, {
          status: 'pending',
          reserved_plan: alloc.plan,
          reserved_pack: alloc.pack,
          updated_at: now,
        });
      }
      await this.deps.progress.recordJobEvent(r, jobId, 'job.started', now, {
        status: ACTIVE_JOB_STATUSES.includes(job.status) ? job.status : 'queued',
        cancel_requested_at: null,
        finished_at: null,
        expires_at: null,
      });
    });
    this.deps.bus.workQueued();
    this.deps.bus.jobChanged(jobId);
    return this.deps.queries.getJob(accountId, jobId);
  }
}

/** N photos spread evenly over the batch: the first of each of N equal slices. */
function spreadSample(items: ItemRow[], n: number): Set<string> {
  const picked = new Set<string>();
  for (let i = 0; i < n; i++) picked.add(items[Math.floor((i * items.length) / n)].id);
  return picked;
}

function checkWebhookUrl(raw: string, allowPrivate: boolean): void {
  const refuse = (message: string, detail: string): never => {
    throw new AppError('VALIDATION', message, { errors: [{ path: '/webhookUrl', message: detail }] });
  };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('webhookUrl is not a valid URL.', 'must be an absolute https URL');
  }
  // Plain http only where private networks are allowed (tests and closed networks).
  if (!(url.protocol === 'https:' || (allowPrivate && url.protocol === 'http:')))
    refuse('webhookUrl must use https.', 'must be an https URL');
  if (url.username || url.password)
    refuse(
      'webhookUrl must not carry credentials.',
      'credentials in the URL are refused; verify deliveries by their signature',
    );
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // Names are checked again on every attempt, on the address they resolve to (outbound-http.adapter.ts).
  if (
    !allowPrivate &&
    (host === 'localhost' || host.endsWith('.localhost') || (net.isIP(host) !== 0 && isPrivateAddress(host)))
  ) {
    refuse('webhookUrl must be a public host.', 'private and loopback hosts are refused');
  }
}

function rethrowAsValidation(err: unknown, path: string): never {
  const message = err instanceof Error ? err.message : 'unreadable image';
  throw new AppError('VALIDATION', `The background image is not usable: ${message}`, { errors: [{ path, message }] });
}
