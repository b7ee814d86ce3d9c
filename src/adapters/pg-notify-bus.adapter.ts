// The event bus across processes on one PostgreSQL: every signal is delivered in this process at once
// and published with NOTIFY; a LISTEN connection (one per process, whatever the number of streams)
// delivers other processes' signals here. A signal carries its origin, so a process skips its own.
// When the LISTEN connection drops, it reconnects and wakes every listener, since signals sent
// meanwhile are lost (listeners then read the database, which is the authority).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { LocalEventBus, type EventBus } from './event-bus.ts';

const CHANNEL = 'matte_signals';

export class PgNotifyBus implements EventBus {
  private readonly local = new LocalEventBus();
  private readonly origin = randomUUID().slice(0, 8);
  private client: pg.Client | null = null;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** Signals published while the connection is down are dropped: listeners re-read on reconnect. */
  private connected = false;
  /** Signals waiting for the NOTIFY in flight to end (flush). */
  private readonly queued = new Set<string>();
  private sending = false;

  private constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  /** Resolves once LISTEN is in place, so no signal sent after startup is missed. */
  static async connect(connectionString: string, log: Logger): Promise<PgNotifyBus> {
    const bus = new PgNotifyBus(connectionString, log);
    await bus.open();
    return bus;
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (msg) => {
      if (msg.channel === CHANNEL && msg.payload) this.receive(msg.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    this.client = client;
    this.connected = true;
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.connected = false;
    this.log.warn({ err }, 'event bus: the LISTEN connection to PostgreSQL was lost; reconnecting');
    client.end().catch(() => undefined);
    this.scheduleReconnect(250);
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.open().then(
        () => this.local.wakeAll(),
        (err: unknown) => {
          this.log.warn({ err }, 'event bus: reconnecting to PostgreSQL failed; trying again');
          this.scheduleReconnect(Math.min(delayMs * 2, 5000));
        },
      );
    }, delayMs);
    this.reconnectTimer.unref();
  }

  /** Payload: `<origin> j <jobId>` (a batch changed), `<origin> m <jobId>` (a photo moved on) or `<origin> w`. */
  private receive(payload: string): void {
    const [origin, kind, jobId] = payload.split(' ');
    if (origin === this.origin) return;
    if (kind === 'j' && jobId) this.local.jobChanged(jobId);
    else if (kind === 'm' && jobId) this.local.photoMoved(jobId);
    else if (kind === 'w') this.local.workQueued();
  }

  private publish(payload: string): void {
    if (!this.connected || !this.client) return;
    this.queued.add(`${this.origin} ${payload}`);
    if (!this.sending) void this.flush();
  }

  /**
   * One NOTIFY statement at a time on the connection (pg is not to be handed a query while one runs), each
   * carrying up to 100 signals queued meanwhile, each once: a signal only says "read again", so two alike
   * say no more than one.
   */
  private async flush(): Promise<void> {
    this.sending = true;
    while (this.queued.size > 0 && this.connected && this.client) {
      const payloads = [...this.queued].slice(0, 100);
      for (const p of payloads) this.queued.delete(p);
      const calls = payloads.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ');
      await this.client
        .query(`select ${calls}`, [CHANNEL, ...payloads])
        .catch((err: unknown) => this.log.warn({ err }, 'event bus: NOTIFY failed'));
    }
    this.queued.clear(); // the connection went: dropped, as while it is down
    this.sending = false;
  }

  jobChanged(jobId: string): void {
    this.local.jobChanged(jobId);
    this.publish(`j ${jobId}`);
  }

  photoMoved(jobId: string): void {
    this.local.photoMoved(jobId);
    this.publish(`m ${jobId}`);
  }

  onJobChanged(jobId: string, listener: () => void, options?: { stages?: boolean }): () => void {
    return this.local.onJobChanged(jobId, listener, options);
  }

  onAnyJobChanged(listener: (jobId?: string) => void): () => void {
    return this.local.onAnyJobChanged(listener);
  }

  workQueued(): void {
    this.local.workQueued();
    this.publish('w');
  }

  onWorkQueued(listener: () => void): () => void {
    return this.local.onWorkQueued(listener);
  }

  listenerCount(): number {
    return this.local.listenerCount();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    this.connected = false;
    await client?.end().catch(() => undefined);
    await this.local.close();
  }
}
