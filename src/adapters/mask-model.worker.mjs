// Worker thread owning the one onnxruntime session of a MaskModel. session.run blocks the thread that
// calls it for the whole inference (about 2 s here), so it runs here and the API's event loop stays free.
// Plain JavaScript on purpose: a worker thread starts without the TypeScript loader of its parent.
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { createSession, readModel } from './model-session.mjs';
import { MODEL_OUTPUT } from './model-outputs.mjs';
import { fillModelInput, maskFromOutput, stretchToSquare } from '../imaging/model-io.mjs';
import { currentThreadId, threadIds, threadName } from '../runtime/threads.mjs';

/** ISNet (imgly /models/medium) I/O contract, shared by any pluggable model: see mask-model.adapter.ts. */
const INPUT_NAME = 'input';
const OUTPUT_NAME = MODEL_OUTPUT;
const SIZE = 1024;
const PLANE = SIZE * SIZE;

// One reusable input buffer: a 1024x1024x3 float tensor is 12 MiB, allocated once per worker (a photo at its
// own aspect ratio uses its start).
const input = new Float32Array(3 * PLANE);

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const { threads, arena, optimization, float32, int8, cacheDir, freeSize } = workerData;
/** @type {import('onnxruntime-node').InferenceSession} */
let session;
try {
  const bytes = readModel(workerData);
  const before = new Set(threadIds());
  session = await createSession(ort, bytes, { threads, arena, optimization, float32, int8, cacheDir, freeSize });
  // The threads onnxruntime started for this session, and this one (it computes too): the caller may
  // give every other thread of the process a lower priority (thread-priority.ts).
  // Without this thread's own id none are reported, which leaves every priority as it is.
  // Other parts of the process start threads meanwhile (photos checked while the model loads start
  // libvips workers, named "libvips worker"); onnxruntime's threads inherit this thread's name, so only
  // new threads bearing it are the model's.
  const own = currentThreadId();
  const ownName = own === null ? null : threadName(own);
  const modelThreads =
    own === null ? [] : [own, ...threadIds().filter((t) => !before.has(t) && threadName(t) === ownName)];
  if (!session.inputNames.includes(INPUT_NAME) || !session.outputNames.includes(OUTPUT_NAME)) {
    throw new Error(
      `model must have an input "${INPUT_NAME}" and an output "${OUTPUT_NAME}" (has ${session.inputNames} / ${session.outputNames})`,
    );
  }
  port.postMessage({ type: 'ready', threads: modelThreads, freeSize: freeSize ? await runsAnySize() : false });
} catch (err) {
  port.postMessage({ type: 'fatal', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
}

/**
 * Whether the model runs at a size other than its square 1024 (model-shape.mjs freed it): tried on a small
 * 64 x 96 input, a few milliseconds. A model that refuses it is sent square inputs only.
 */
async function runsAnySize() {
  try {
    const tensor = new ort.Tensor('float32', new Float32Array(3 * 64 * 96), [1, 3, 64, 96]);
    const dims = (await session.run({ [INPUT_NAME]: tensor }, [OUTPUT_NAME]))[OUTPUT_NAME].dims;
    return dims[2] === 64 && dims[3] === 96;
  } catch {
    return false;
  }
}

/** @param {{ id: number, rgb: Uint8Array, width: number, height: number }} msg */
async function handle(msg) {
  try {
    const started = performance.now();
    const { width, height } = msg;
    const planes = input.subarray(0, 3 * width * height);
    fillModelInput(msg.rgb, planes);
    const tensor = new ort.Tensor('float32', planes, [1, 3, height, width]);
    // Fetch only `output`: ISNet has ten side outputs we never read.
    const result = await session.run({ [INPUT_NAME]: tensor }, [OUTPUT_NAME]);
    const runMs = performance.now() - started;
    // A photo run at its own aspect ratio: its mask stretched square, as the check and the cut-out read it.
    const out = stretchToSquare(/** @type {Float32Array} */ (result[OUTPUT_NAME].data), width, height, SIZE);
    const { mask, histogram, bbox } = maskFromOutput(out, SIZE);
    port.postMessage({ id: msg.id, ok: true, mask, histogram, bbox, runMs }, [mask.buffer, histogram.buffer]);
  } catch (err) {
    port.postMessage({ id: msg.id, ok: false, message: err instanceof Error ? err.message : String(err) });
  }
}

// One photo at a time: the input tensor buffer is shared, so runs must never overlap.
let chain = Promise.resolve();
port.on(
  'message',
  (/** @type {{ id: number, rgb: Uint8Array, width: number, height: number } | { type: 'close' }} */ msg) => {
    // Closing: after the photos already sent, the session is released and the thread leaves (see close()).
    if ('type' in msg && msg.type === 'close')
      chain = chain.then(async () => {
        await session.release();
        process.exit(0);
      });
    else
      chain = chain.then(() =>
        handle(/** @type {{ id: number, rgb: Uint8Array, width: number, height: number }} */ (msg)),
      );
  },
);
