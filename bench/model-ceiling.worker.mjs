// One of bench/model-ceiling.ts's two sessions at once: its own session of the model (the service's session
// options, with `threads` threads), run on the tensors it was given, as many runs as each message asks for;
// answers 'done'.
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { sessionOptions } from '../src/adapters/model-session.mjs';

const { model, inputs, threads } = workerData;
const session = await ort.InferenceSession.create(model, sessionOptions(threads));
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const tensor = (/** @type {number} */ i) => new ort.Tensor('float32', inputs[i % inputs.length], [1, 3, 1024, 1024]);
await session.run({ input: tensor(0) }, ['output']);
port.postMessage('ready');
port.on('message', async (/** @type {number} */ runs) => {
  for (let i = 0; i < runs; i++) await session.run({ input: tensor(i) }, ['output']);
  port.postMessage('done');
});
