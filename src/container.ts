// Composition root: adapters and repositories first, then services with explicit dependencies.
import path from 'node:path';
import pretty from 'pino-pretty';
import pino, { type Logger } from 'pino';
import { modelRunOptions, type Config } from './config.ts';
import { createDatabase } from './db/database.ts';
import { Store } from './db/store.ts';
import { accountServices } from './account-services.ts';
import type { CreditsService } from './services/credits.service.ts';
import type { AccountService } from './services/account.service.ts';
import type { LicenseService } from './services/license.service.ts';
import type { PurchaseService } from './services/purchase.service.ts';
import { FsBlobStore, reportingErrors, type BlobStore } from './adapters/blob-store.ts';
import { Metrics, type ProcessRole } from './adapters/metrics.ts';
import { OipMaskModel } from './adapters/oip-mask-model.adapter.ts';
import { RecentBlobs } from './runtime/recent-blobs.ts';
import { setImageThreads } from './adapters/images/sharp.ts';
import { ImageDecoder } from './adapters/images/decoder.ts';
import { ImageRenderer } from './adapters/images/renderer.ts';
import { CheckRasters } from './adapters/images/rasters.ts';
import { OnnxMaskModel, type MaskModel } from './adapters/mask-model.adapter.ts';
import { HelperThreadPriority } from './runtime/thread-priority.ts';
import { LocalEventBus, type EventBus } from './adapters/event-bus.ts';
import { EventStreamService } from './services/event-stream.service.ts';
import { WebhookService } from './services/webhook.service.ts';
import { WebhookDispatcher } from './background/webhook-dispatcher.ts';
import { BatchService } from './services/batch.service.ts';
import { BatchQueries } from './services/batch-queries.service.ts';
import { BatchProgress } from './services/batch-progress.service.ts';
import { IntakeService, type PhotoInspector } from './services/intake.service.ts';
import { PhotoQueue } from './services/photo-queue.service.ts';
import { ReviewService } from './services/review.service.ts';
import { RerunService } from './services/rerun.service.ts';
import { ReportService } from './services/report.service.ts';
import { WorkerCutoutWriter } from './imaging/cutout-writer.ts';
import { nativeCutout } from './imaging/native.mjs';
import { PreparedInputs } from './pipeline/prepared-inputs.ts';
import { warmUpCheck } from './pipeline/photo-pipeline.ts';
import { InputThumbnails } from './services/input-thumbnails.service.ts';
import { OutputThumbnails } from './services/output-thumbnails.service.ts';
import { RenderService } from './services/render.service.ts';
import { TouchUpService } from './services/touch-up.service.ts';
import { DownloadService } from './services/download.service.ts';
import { FileService } from './services/files.service.ts';
import { IdempotencyService } from './services/idempotency.service.ts';
import { ImageService } from './services/image.service.ts';
import { PhotoWorker, ThroughputStats } from './background/photo-worker.ts';
import { AccountMaintenance } from './background/account-maintenance.ts';
import { RateLimitService, rateLimitRules } from './services/rate-limit.service.ts';
import { SessionService } from './services/session.service.ts';
import { AccountDeletionService } from './services/account-deletion.service.ts';

export interface Container {
  config: Readonly<Config>;
  /** The log is for a person at a terminal (LOG_FORMAT auto on a terminal, or pretty): the start is one plain line. */
  logForPerson: boolean;
  log: Logger;
  clock: () => number;
  store: Store;
  blobs: BlobStore;
  decoder: ImageDecoder;
  renderer: ImageRenderer;
  rasters: CheckRasters;
  bus: EventBus;
  credits: CreditsService;
  accounts: AccountService;
  batches: BatchService;
  queries: BatchQueries;
  intake: IntakeService;
  queue: PhotoQueue;
  review: ReviewService;
  reruns: RerunService;
  reports: ReportService;
  render: RenderService;
  touchUps: TouchUpService;
  downloads: DownloadService;
  files: FileService;
  inputThumbs: InputThumbnails;
  outputThumbs: OutputThumbnails;
  idempotency: IdempotencyService;
  images: ImageService;
  limits: RateLimitService;
  sessions: SessionService;
  licenses: LicenseService;
  purchases: PurchaseService;
  deletion: AccountDeletionService;
  maintenance: AccountMaintenance;
  stats: ThroughputStats;
  /** Present when this process runs photos (the embedded worker). */
  model: MaskModel | null;
  worker: PhotoWorker | null;
  events: EventStreamService;
  webhooks: WebhookService;
  /** Sends webhook deliveries; every process runs one (attempts are leased in the database). */
  dispatcher: WebhookDispatcher;
  /** Starts the photo worker's helper threads ahead of the first photo; a failure is logged, never thrown. */
  warmUp(): Promise<void>;
  metrics: Metrics;
  /** Whether the database, the blob store and (where this process runs photos) the model answer. */
  readiness(): Promise<Readiness>;
  close(): Promise<void>;
}

export interface ContainerOptions {
  /** A model to use instead of loading the ONNX one (unit and HTTP tests inject fakes). */
  model?: MaskModel;
  clock?: () => number;
  log?: Logger;
  /** Start the worker loop (default: config.embeddedWorker). */
  runWorker?: boolean;
  /** What this process is, for metrics (default: api+worker with a worker, api without). */
  role?: ProcessRole;
}

export interface Readiness {
  ready: boolean;
  /** Each part's state: `ok`, or what is wrong with it. */
  parts: { database: string; blobStore: string; model: string };
}

export async function createContainer(config: Readonly<Config>, opts: ContainerOptions = {}): Promise<Container> {
  // On a terminal the log is for a person: the start is one plain line (main/api.ts), then warnings and errors
  // (pino-pretty, written in this thread); elsewhere, or with LOG_FORMAT=json, one JSON object a line.
  const forPerson = config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
  const level = config.logLevel || (forPerson && config.logFormat === 'auto' ? 'warn' : 'info');
  const log =
    opts.log ??
    (forPerson ? pino({ level }, pretty({ colorize: true, sync: true, ignore: 'pid,hostname' })) : pino({ level }));
  const clock = opts.clock ?? Date.now;
  const runWorker = opts.runWorker ?? config.embeddedWorker;
  // Made before the database, so its statements are counted from the first (the migrations'); the queue's
  // figures are read from the store only when scraped.
  const metrics = new Metrics(
    opts.role ?? (runWorker ? 'api+worker' : 'api'),
    () => store.repos.items.queueStats(),
    clock,
  );
  const db = await createDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    onStatement: () => metrics.dbStatements.inc(),
  });
  const store = new Store(db);
  // Files on this machine's disk, or in an object store every process shares (MATTE_BLOB_STORE=s3://…); the
  // AWS SDK is loaded only then (about 220 ms of every start otherwise).
  const fileStore = config.blobStore
    ? await import('./adapters/s3-blob-store.ts').then(
        ({ parseS3Url, s3Client, S3BlobStore }) =>
          new S3BlobStore(
            s3Client({
              region: config.s3.region,
              endpoint: config.s3.endpoint,
              forcePathStyle: config.s3.forcePathStyle,
            }),
            parseS3Url(config.blobStore),
          ),
      )
    : new FsBlobStore(path.join(config.dataDir, 'blobs'));
  // What this process wrote in the last seconds is read back from memory (recent-blobs.ts): a result
  // by the request waiting for it, an upload by the worker that claims it.
  const blobs = new RecentBlobs(
    reportingErrors(fileStore, (operation) => metrics.blobErrors.inc({ operation })),
    { maxBytes: 32 * 1024 * 1024, ttlMs: 10_000 },
    clock,
  );
  setImageThreads(config.imageThreads);
  const decoder = new ImageDecoder(config.maxInputPixels);
  const renderer = new ImageRenderer(config.maxInputPixels);
  const rasters = new CheckRasters(config.maxInputPixels);
  // Intake's check of an upload: its header, and a thumbnail (a full decode, which catches truncated files).
  const inspector: PhotoInspector = {
    probe: (data) => decoder.probe(data),
    thumbnail: (data) => renderer.thumbnail(data),
  };
  // Between processes on PostgreSQL, within this one on SQLite (one process owns an embedded database's worker).
  const bus: EventBus =
    store.dialect === 'postgres'
      ? await import('./adapters/pg-notify-bus.adapter.ts').then(({ PgNotifyBus }) =>
          PgNotifyBus.connect(config.databaseUrl, log.child({ component: 'bus' })),
        )
      : new LocalEventBus();
  const { credits, accounts, licenses, purchases } = accountServices(config, store, clock);
  const stats = new ThroughputStats();

  // The model in this process (onnxruntime in a worker thread), or on an inference server (MATTE_INFERENCE_URL).
  const model: MaskModel | null =
    opts.model ??
    (!runWorker
      ? null
      : config.inferenceUrl
        ? new OipMaskModel({ url: config.inferenceUrl })
        : new OnnxMaskModel({
            modelPath: config.modelPath,
            ...modelRunOptions(config),
          }));
  // The heavy tier's own model, when the operator runs one (segment.ts); heavy photos use `model` otherwise.
  const heavyModel: MaskModel | null =
    model && !opts.model && config.inferenceHeavyUrl
      ? new OipMaskModel({ url: config.inferenceHeavyUrl })
      : model && !opts.model && config.heavyModelPath
        ? new OnnxMaskModel({
            modelPath: config.heavyModelPath,
            ...modelRunOptions(config),
          })
        : null;
  let modelState: 'loading' | 'ready' | 'failed' = model ? 'loading' : 'ready';
  const priority = new HelperThreadPriority(config.helperNice, () => model?.threadIds() ?? []);
  Promise.all([model?.ready(), heavyModel?.ready()]).then(
    () => {
      modelState = 'ready';
      if (!model) return;
      const wide = model.inputSize(3000, 2000);
      log.info(
        wide.height < wide.width
          ? `the model is ready: photos run at their own aspect ratio (a 3:2 photo at ${wide.width}x${wide.height})`
          : `the model is ready: photos run squeezed to ${wide.width}x${wide.height}`,
      );
    },
    (err: unknown) => {
      modelState = 'failed';
      log.error({ err }, 'the segmentation model could not be loaded; starts answer 503');
    },
  );

  /**
   * The model's state now. An inference server that was away at start, or slower than its readiness check's
   * limit (a loaded host), is asked again: it may be back, and batches need not be refused meanwhile.
   */
  const modelStateNow = async (): Promise<typeof modelState> => {
    if (runWorker && model instanceof OipMaskModel && modelState !== 'ready')
      await model.ready().then(
        () => (modelState = 'ready'),
        () => undefined,
      );
    return modelState;
  };

  const queries = new BatchQueries({ store, bus, clock, perImageMs: () => stats.perImageMs() });
  const progress = new BatchProgress(config.resultTtlMs);
  const batches = new BatchService({
    store,
    blobs,
    credits,
    bus,
    inspector,
    clock,
    queries,
    progress,
    modelState: modelStateNow,
    allowPrivateNetworks: config.allowPrivateNetworks,
  });
  const intake = new IntakeService({ store, blobs, inspector, bus, clock, queries });
  const queue = new PhotoQueue({ store, blobs, credits, bus, clock, progress, resultTtlMs: config.resultTtlMs });
  const review = new ReviewService({ queries });
  const reruns = new RerunService({ store, credits, bus, clock, queries, progress });
  const reports = new ReportService({ store, blobs, rasters, credits, queries, bus, clock });
  const render = new RenderService({ store, blobs, decoder, renderer, rasters, queries, bus, clock });
  // The cut-out writer's threads (spawned when first needed) write the worker's cut-outs and paint touch-ups.
  const cutouts = new WorkerCutoutWriter(config.cutoutThreads);
  const touchUps = new TouchUpService({
    store,
    blobs,
    decoder,
    renderer,
    rasters,
    painter: cutouts,
    queries,
    bus,
    clock,
  });
  const downloads = new DownloadService({ store, blobs, renderer, queries });
  const inputThumbs = new InputThumbnails({ blobs, inspector, queries });
  const outputThumbs = new OutputThumbnails({ blobs, renderer, queries });
  const files = new FileService({ blobs, renderer, queries, inputThumbs, outputThumbs });
  const idempotency = new IdempotencyService({ store, clock });
  const limits = new RateLimitService({
    store,
    clock,
    rules: rateLimitRules(config.requestsPerMinute, config.photosPerHour),
  });
  const sessions = new SessionService({ store, clock, limits });
  const deletion = new AccountDeletionService({ store, credits, blobs, bus, clock });
  const maintenance = new AccountMaintenance({
    store,
    licenses,
    limits,
    clock,
    log: log.child({ component: 'maintenance' }),
  });
  const prepared =
    runWorker && model
      ? new PreparedInputs(decoder, undefined, (width, height) => model.inputSize(width, height))
      : undefined;
  const images = new ImageService({ batches, intake, queries, queue, render, inspector, clock, prepared });
  if (runWorker && model && !nativeCutout)
    log.warn(
      'the pixel passes in C (native/) are not built, so JavaScript and sharp run them: the same cut-outs and ' +
        'model inputs at about three times their CPU; `npm install` builds them where a C compiler is installed',
    );
  let closed = false;
  const worker =
    runWorker && model
      ? new PhotoWorker(
          {
            queue,
            blobs,
            pipeline: { decoder, renderer, rasters, model, heavyModel, cutouts, prepared },
            bus,
            stats,
            priority,
            metrics,
            log: log.child({ component: 'worker' }),
          },
          { concurrency: config.workerConcurrency, leaseMs: config.leaseMs, maxAttempts: config.maxAttempts },
        )
      : null;

  const events = new EventStreamService({
    store,
    queries,
    bus,
    clock,
    keepAliveMs: config.sseKeepAliveMs,
    maxMs: config.sseMaxMs,
  });
  const dispatcher = new WebhookDispatcher(
    { store, bus, clock, metrics, log: log.child({ component: 'webhooks' }) },
    {
      retryDelaysMs: config.webhookRetryDelaysMs,
      timeoutMs: config.webhookTimeoutMs,
      allowPrivateNetworks: config.allowPrivateNetworks,
    },
  );
  const webhooks = new WebhookService({ store, queries, maxAttempts: dispatcher.maxAttempts });

  return {
    config,
    logForPerson: forPerson && !opts.log,
    log,
    clock,
    store,
    blobs,
    decoder,
    renderer,
    rasters,
    bus,
    credits,
    accounts,
    batches,
    queries,
    intake,
    queue,
    review,
    reruns,
    reports,
    render,
    touchUps,
    downloads,
    files,
    inputThumbs,
    outputThumbs,
    idempotency,
    images,
    limits,
    sessions,
    licenses,
    purchases,
    deletion,
    maintenance,
    stats,
    model,
    worker,
    events,
    webhooks,
    dispatcher,
    async warmUp() {
      if (!worker || !model) return;
      try {
        // After the model has loaded: its threads are told apart from the others by being the ones that
        // appeared while it loaded (mask-model.worker.mjs), and the writer's threads must not be among them.
        await model.ready();
        await cutouts.warmUp();
        await warmUpCheck(rasters);
      } catch (err) {
        if (!closed) log.warn({ err }, 'warming the cut-out writer failed');
      }
    },
    metrics,
    async readiness() {
      const parts = { database: 'ok', blobStore: 'ok', model: 'ok' };
      const failed = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 200) || 'failed';
      await Promise.all([
        store.ping().catch((err: unknown) => (parts.database = failed(err))),
        blobs.check().catch((err: unknown) => (parts.blobStore = failed(err))),
      ]);
      const state = await modelStateNow();
      if (runWorker && model) parts.model = state === 'ready' ? 'ok' : state;
      else parts.model = 'not run by this process';
      const ready = parts.database === 'ok' && parts.blobStore === 'ok' && (parts.model === 'ok' || !model);
      return { ready, parts };
    },
    async close() {
      closed = true;
      await maintenance.stop();
      await worker?.stop();
      await dispatcher.stop();
      await model?.close();
      await heavyModel?.close();
      await cutouts.close();
      await bus.close();
      await store.close();
    },
  };
}
