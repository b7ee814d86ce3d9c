// Worker thread owning the one onnxruntime session of a MaskModel. session.run blocks the thread that
// calls it for the whole inference (about 2 s here), so it runs here and the API's event loop stays free.
// Plain JavaScript on purpose: a worker thread starts without the TypeScript loader of its parent.
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { fillModelInput, readModel, sessionOptions } from './model-session.mjs';
import { currentThreadId, threadIds, threadName } from './threads.mjs';

/** ISNet (imgly /models/medium) I/O contract, shared by any pluggable model: see mask-model.adapter.ts. */
const INPUT_NAME = 'input';
const OUTPUT_NAME = 'output';
const SIZE = 1024;
const PLANE = SIZE * SIZE;

// One reusable input buffer: a 1024x1024x3 float tensor is 12 MiB, allocated once per worker.
const input = new Float32Array(3 * PLANE);

/**
 * Float mask 0..1 → uint8 mask, with the figures the quality check needs, in one pass.
 * @param {Float32Array} out
 */
function toMask(out) {
  const mask = new Uint8Array(PLANE);
  const histogram = new Uint32Array(256);
  let minX = SIZE, minY = SIZE, maxX = -1, maxY = -1;
  for (let y = 0, i = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++, i++) {
      const v = out[i];
      const b = v <= 0 ? 0 : v >= 1 ? 255 : (v * 255 + 0.5) | 0;
      mask[i] = b;
      histogram[b]++;
      if (b >= 128) {
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
    }
  }
  const bbox = maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
  return { mask, histogram, bbox };
}

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const { threads } = workerData;
/** @type {import('onnxruntime-node').InferenceSession} */
let session;
try {
  const bytes = readModel(workerData);
  const before = new Set(threadIds());
  session = await ort.InferenceSession.create(bytes, sessionOptions(threads));
  // The threads onnxruntime started for this session, and this one (it computes too): the caller may
  // give every other thread of the process a lower priority (thread-priority.ts).
  // Without this thread's own id none are reported, which leaves every priority as it is.
  // Other parts of the process start threads meanwhile (photos checked while the model loads start
  // libvips workers, named "libvips worker"); onnxruntime's threads inherit this thread's name, so only
  // new threads bearing it are the model's.
  const own = currentThreadId();
  const ownName = own === null ? null : threadName(own);
  const modelThreads = own === null ? [] : [own, ...threadIds().filter((t) => !before.has(t) && threadName(t) === ownName)];
  if (!session.inputNames.includes(INPUT_NAME) || !session.outputNames.includes(OUTPUT_NAME)) {
    throw new Error(`model must have an input "${INPUT_NAME}" and an output "${OUTPUT_NAME}" (has ${session.inputNames} / ${session.outputNames})`);
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
    const { mask, histogram, bbox } = toMask(out);
    port.postMessage({ id: msg.id, ok: true, mask, histogram, bbox, runMs }, [mask.buffer, histogram.buffer]);
  } catch (err) {
    port.postMessage({ id: msg.id, ok: false, message: err instanceof Error ? err.message : String(err) });
  }
}

// One photo at a time: the input tensor buffer is shared, so runs must never overlap.
let chain = Promise.resolve();
port.on('message', (/** @type {{ id: number, rgb: Uint8Array }} */ msg) => {
  chain = chain.then(() => handle(msg));
});
