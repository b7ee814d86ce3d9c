// npm run model -- quantize: makes the model as the server runs it with this environment's settings (with
// the int8 model by default: src/adapters/model-int8.mjs; with MATTE_MODEL_INT8=0 the float32 copy) and keeps it in
// MATTE_MODEL_CACHE_DIR, as the first start would.
// Nothing else needs it: a server makes the file on its first start, and again when the weights, the
// calibration, onnxruntime or the CPU change. Run it to take that time out of the first start.
import ort from 'onnxruntime-node';
import { loadConfig, modelRunOptions } from '../src/config.ts';
import { modelSource } from '../src/adapters/mask-model.adapter.ts';
import { createSession, modelPrecision, readModel } from '../src/adapters/model-session.mjs';

const config = loadConfig();
const bytes = readModel(modelSource(config.modelPath));
const opts = modelRunOptions(config);
const started = performance.now();
const session = await createSession(ort, bytes, opts);
await session.release();
console.log(
  `the model runs as ${modelPrecision(bytes, opts)}, optimised at ${config.modelOptimization}; ` +
    `${opts.cacheDir ? `kept in ${opts.cacheDir}` : 'no cache directory: it is made at every start'} ` +
    `(${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
