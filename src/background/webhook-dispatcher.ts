// The webhook dispatcher: sends due deliveries (webhook_deliveries rows, written with their events)
// to the batches' webhook URLs. Any number of processes may run one: each attempt is leased in the
// database first, so no attempt is sent twice, and a restart resumes the schedule where it stood.
// Sends run beside photo processing, never in its way: a slow receiver holds one of a few slots here
// for at most the answer limit, and the photo worker does not wait on webhooks at all.
import type { Metrics } from '../adapters/metrics.ts';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Store } from '../db/store.ts';
import type { DeliveryRow } from '../db/schema.ts';
import type { EventBus } from '../adapters/event-bus.ts';
import { signWebhook } from '../services/webhook-signature.ts';
import { OutboundError, postPublic } from '../adapters/outbound-http.adapter.ts';

const WEBHOOK_USER_AGENT = 'Matte-Webhooks/1.0';

export type WebhookSend = (url: string, body: Buffer, headers: Record<string, string>) => Promise<{ status: number }>;

export interface DispatcherOptions {
  /** Waits before attempts 2, 3, …; attempts = delays + 1 (spec: 30 s, 2 min, 10 min, 30 min: five). */
  retryDelaysMs: readonly number[];
  /** The receiver's answer limit (spec: 10 s). */
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  /** Attempts in flight at once, across batches. */
  concurrency?: number;
  /**
   * How often an idle dispatcher looks for deliveries it was not told of (a signal lost between processes);
   * default 5 s. A dispatcher waiting on another process's attempt for the same batch looks every second.
   */
  idlePollMs?: number;
}

const WEBHOOK_CACHE_SIZE = 10_000;

export class WebhookDispatcher {
  readonly id = `webhooks-${randomUUID()}`;
  private running = false;
  private pumping: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private wake: (() => void) | null = null;
  private woken = false;
  private unsubscribe: (() => void) | null = null;
  /**
   * Whether a batch has a webhook, by id: a batch's URL is set when it is created and never changes, so a change
   * to a batch without one (most of them, and every stage of every photo) costs no query. Bounded; the oldest
   * entries go first.
   */
  private readonly hasWebhook = new Map<string, boolean>();
  private readonly send: WebhookSend;

  constructor(
    private readonly deps: {
      store: Store;
      bus: EventBus;
      clock: () => number;
      log: Logger;
      send?: WebhookSend;
      metrics?: Metrics;
    },
    private readonly opts: DispatcherOptions,
  ) {
    this.send =
      deps.send ??
      ((url, body, headers) =>
        postPublic(url, body, { allowPrivate: opts.allowPrivateNetworks, timeoutMs: opts.timeoutMs, headers }));
  }

  get maxAttempts(): number {
    return this.opts.retryDelaysMs.length + 1;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // Events write their deliveries in the transaction of a batch change: a change to a batch with a webhook
    // may bring one.
    this.unsubscribe = this.deps.bus.onAnyJobChanged((jobId) => void this.changed(jobId));
    this.pumping = this.pump();
  }

  /** Stops claiming; attempts in flight finish (each within the answer limit). */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.poke();
    await this.pumping;
    await Promise.all(this.inFlight);
  }

  private async changed(jobId: string | undefined): Promise<void> {
    if (jobId === undefined) return this.poke();
    let known = this.hasWebhook.get(jobId);
    if (known === undefined) {
      try {
        known = !!(await this.deps.store.repos.jobs.findById(jobId))?.webhook_url;
      } catch {
        return this.poke(); // the idle poll's query, then
      }
      if (this.hasWebhook.size >= WEBHOOK_CACHE_SIZE) this.hasWebhook.delete(this.hasWebhook.keys().next().value!);
      this.hasWebhook.set(jobId, known);
    }
    if (known) this.poke();
  }

  private poke(): void {
    this.woken = true;
    this.wake?.();
  }

  private async pump(): Promise<void> {
    const concurrency = this.opts.concurrency ?? 4;
    while (this.running) {
      this.woken = false;
      // Due deliveries that cannot be claimed now (their batch has an attempt in flight, in order):
      // the end of that attempt pokes the pump, or the idle poll comes first (another process's attempt).
      let blocked = false;
      // The next due time the loop read, handed to idle() so that it does not ask again (undefined: not read).
      let nextDue: number | null | undefined;
      try {
        while (this.running && this.inFlight.size < concurrency) {
          const now = this.deps.clock();
          const due = await this.deps.store.repos.deliveries.nextDueAt(now);
          if (due === null || due > now) {
            nextDue = due;
            break;
          }
          const delivery = await this.deps.store.repos.deliveries.claimDue(
            this.id,
            now,
            now + this.opts.timeoutMs + 5000,
          );
          if (!delivery) {
            blocked = true;
            break;
          }
          const attempt = this.attempt(delivery).finally(() => {
            this.inFlight.delete(attempt);
            this.poke();
          });
          this.inFlight.add(attempt);
        }
      } catch (err) {
        this.deps.log.error({ err }, 'webhook dispatcher: claiming a delivery failed');
      }
      if (this.running && !this.woken) await this.idle(blocked, nextDue);
    }
  }

  /**
   * Until poked, the next due time (unless `blocked`), or the idle poll, whichever comes first. `known` is the
   * next due time the pump has just read (one query a wake, not two); undefined when it has not.
   */
  private async idle(blocked: boolean, known: number | null | undefined): Promise<void> {
    let waitMs = blocked ? Math.min(this.opts.idlePollMs ?? 1000, 1000) : (this.opts.idlePollMs ?? 5000);
    try {
      const now = this.deps.clock();
      const due = blocked ? null : known !== undefined ? known : await this.deps.store.repos.deliveries.nextDueAt(now);
      if (due !== null) waitMs = Math.max(0, Math.min(waitMs, due - now));
    } catch {
      /* the poll interval then */
    }
    if (this.woken || !this.running) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, waitMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
    this.wake = null;
  }

  private async attempt(d: DeliveryRow): Promise<void> {
    const { store, clock, log } = this.deps;
    const job = await store.repos.jobs.findById(d.job_id);
    const attempt = d.attempts + 1;
    let lastStatus: number | null = null;
    let lastError: string | null = null;
    if (!job?.webhook_secret) {
      lastError = 'The batch no longer has a webhook.';
    } else {
      // The stored event written out again: JSON.stringify of what it parsed to is the text it stored, byte for byte.
      const body = Buffer.from(JSON.stringify(d.payload));
      const headers = {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'x-matte-event': d.event,
        'x-matte-delivery': d.id,
        'x-matte-attempt': String(attempt),
        'x-matte-signature': signWebhook(job.webhook_secret, body, Math.floor(clock() / 1000)),
      };
      try {
        const { status } = await this.send(d.url, body, headers);
        lastStatus = status;
        if (status >= 300 && status < 400)
          lastError = `The receiver answered ${status} (a redirect); redirects are not followed.`;
        else if (status < 200 || status >= 300) lastError = `The receiver answered ${status}.`;
      } catch (err) {
        lastError =
          err instanceof OutboundError
            ? err.message
            : `The request failed (${err instanceof Error ? err.message : String(err)}).`;
      }
    }
    const now = clock();
    const delivered = lastError === null;
    const next = delivered
      ? { status: 'delivered' as const, at: now }
      : attempt >= this.maxAttempts || !job?.webhook_secret
        ? { status: 'given_up' as const, at: now }
        : { status: 'pending' as const, at: now + this.opts.retryDelaysMs[attempt - 1] };
    try {
      const settled = await store.repos.deliveries.settleAttempt(d.id, this.id, {
        attempts: attempt,
        lastStatus,
        lastError,
        next,
      });
      if (!settled)
        log.warn(
          { deliveryId: d.id, attempt },
          'webhook dispatcher: the lease ran out before the attempt was recorded',
        );
      this.deps.metrics?.webhookAttempts.inc({ state: next.status === 'pending' ? 'retrying' : next.status });
      if (next.status === 'given_up')
        log.warn({ deliveryId: d.id, jobId: d.job_id, lastStatus, lastError }, 'webhook delivery given up');
    } catch (err) {
      log.error(
        { err, deliveryId: d.id },
        'webhook dispatcher: recording an attempt failed; the lease runs out and the attempt is made again',
      );
    }
  }
}
