// Prometheus metrics of one process (prom-client): what an operator watches across API and worker
// processes. Every series carries `process` (api, worker) and the default Node.js metrics (memory, event
// loop lag, GC). Served on MATTE_METRICS_PORT at /metrics, never on the public port.
import client from 'prom-client';

export type ProcessRole = 'api' | 'worker' | 'api+worker' | 'inference';

export interface QueueStats {
  pending: number;
  /** Server-clock ms of the oldest pending photo, or null when none waits. */
  oldestPendingAt: number | null;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class Metrics {
  readonly registry = new client.Registry();
  readonly photos: client.Counter<'outcome' | 'tier'>;
  readonly stageSeconds: client.Histogram<'stage'>;
  readonly inferenceSeconds: client.Histogram<'tier'>;
  readonly remoteErrors: client.Counter<'code'>;
  readonly httpSeconds: client.Histogram<'method' | 'route' | 'status'>;
  readonly webhookAttempts: client.Counter<'state'>;
  readonly blobErrors: client.Counter<'operation'>;
  readonly dbStatements: client.Counter;

  constructor(role: ProcessRole, queueStats?: () => Promise<QueueStats>, clock: () => number = Date.now) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ process: role });
    client.collectDefaultMetrics({ register: this.registry, prefix: 'matte_' });
    this.dbStatements = new client.Counter({
      name: 'matte_db_statements_total',
      help: 'SQL statements this process sent to its database (queries, changes, transaction control).',
      registers,
    });
    this.photos = new client.Counter({
      name: 'matte_photos_total',
      help: 'Photos settled by this process, by outcome (done, flagged, failed) and tier.',
      labelNames: ['outcome', 'tier'],
      registers,
    });
    this.stageSeconds = new client.Histogram({
      name: 'matte_photo_stage_seconds',
      help: 'Time of each stage of a photo (decode, inference, diagnose, compose, encode, total).',
      labelNames: ['stage'],
      buckets: SECONDS,
      registers,
    });
    this.inferenceSeconds = new client.Histogram({
      name: 'matte_inference_seconds',
      help: 'Time the model took for one photo, by tier.',
      labelNames: ['tier'],
      buckets: SECONDS,
      registers,
    });
    this.remoteErrors = new client.Counter({
      name: 'matte_remote_errors_total',
      help: 'Photos failed for a reason of the model or inference server, by photo error code.',
      labelNames: ['code'],
      registers,
    });
    this.httpSeconds = new client.Histogram({
      name: 'matte_http_request_seconds',
      help: 'HTTP answer time by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: SECONDS,
      registers,
    });
    this.webhookAttempts = new client.Counter({
      name: 'matte_webhook_attempts_total',
      help: 'Webhook delivery attempts by what became of the delivery: delivered, retrying, given_up.',
      labelNames: ['state'],
      registers,
    });
    this.blobErrors = new client.Counter({
      name: 'matte_blob_store_errors_total',
      help: 'Blob store operations that failed (missing keys excepted), by operation.',
      labelNames: ['operation'],
      registers,
    });
    if (queueStats) {
      // Read from the database when scraped: the queue is shared by every process.
      let last: Promise<QueueStats> | null = null;
      const read = () => (last ??= queueStats().finally(() => setTimeout(() => (last = null), 1000).unref()));
      new client.Gauge({
        name: 'matte_queue_depth',
        help: 'Photos waiting for a worker (pending), across every process.',
        registers,
        async collect() {
          this.set((await read()).pending);
        },
      });
      new client.Gauge({
        name: 'matte_queue_oldest_pending_seconds',
        help: 'Age of the oldest photo waiting for a worker (0 when none waits).',
        registers,
        async collect() {
          const { oldestPendingAt } = await read();
          this.set(oldestPendingAt === null ? 0 : Math.max(0, (clock() - oldestPendingAt) / 1000));
        },
      });
    }
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
