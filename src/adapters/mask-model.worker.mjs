// Worker thread owning the one onnxruntime session of a MaskModel. session.run blocks the thread that
// calls it for the whole inference (about 2 s here), so it runs here and the API's event loop stays free.
// Plain JavaScript on purpose: a worker thread starts without the TypeScript loader of its parent.
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { createSession, readModel } from './model-session.mjs';
import { fillModelInput, maskFromOutput } from '../imaging/model-io.mjs';
import { currentThreadId, threadIds, threadName } from '../runtime/threads.mjs';

/** ISNet (imgly /models/medium) I/O contract, shared by any pluggable model: see mask-model.adapter.ts. */
const INPUT_NAME = 'input';
const OUTPUT_NAME = 'output';
const SIZE = 1024;
const PLANE = SIZE * SIZE;

// One reusable input buffer: a 1024x1024x3 float tensor is 12 MiB, allocated once per worker.
const input = new Float32Array(3 * PLANE);

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const { threads, arena, optimization, float32, int8, cacheDir } = workerData;
/** @type {import('onnxruntime-node').InferenceSession} */
let session;
try {
  const bytes = readModel(workerData);
  const before = new Set(threadIds());
  session = await createSession(ort, bytes, { threads, arena, optimization, float32, int8, cacheDir });
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
  port.postMessage({ type: 'ready', threads: modelThreads });
} catch (err) {
  port.postMessage({ type: 'fatal', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
}

/** @param {{ id: number, rgb: Uint8Array }} msg */
async function handle(msg) {
  try {
    const started = performance.now();
    fillModelInput(msg.rgb, input);
    const tensor = new ort.Tensor('float32', input, [1, 3, SIZE, SIZE]);
    // Fetch only `output`: ISNet has ten side outputs we never read.
    const result = await session.run({ [INPUT_NAME]: tensor }, [OUTPUT_NAME]);
    const runMs = performance.now() - started;
    const out = /** @type {Float32Array} */ (result[OUTPUT_NAME].data);
    const { mask, histogram, bbox } = maskFromOutput(out, SIZE);
    port.postMessage({ id: msg.id, ok: true, mask, histogram, bbox, runMs }, [mask.buffer, histogram.buffer]);
  } catch (err) {
    port.postMessage({ id: msg.id, ok: false, message: err instanceof Error ? err.message : String(err) });
  }
}

// One photo at a time: the input tensor buffer is shared, so runs must never overlap.
let chain = Promise.resolve();
port.on('message', (/** @type {{ id: number, rgb: Uint8Array } | { type: 'close' }} */ msg) => {
  // Closing: after the photos already sent, the session is released and the thread leaves (see close()).
  if ('type' in msg && msg.type === 'close')
    chain = chain.then(async () => {
      await session.release();
      process.exit(0);
    });
  else chain = chain.then(() => handle(/** @type {{ id: number, rgb: Uint8Array }} */ (msg)));
});
