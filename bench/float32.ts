// npm run bench -- float32: ISNet `medium` as shipped (float16) against its float32 copy (model-float32.mjs),
// both bare (onnxruntime's defaults, two threads, optimised at load as onnxruntime does), alternating in
// one process on the same photo, BENCH_FLOAT32_PAIRS pairs (12); the median of the pairs' ratios, and the
// node counts after optimisation.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fromBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import ort from 'onnxruntime-node';
import sharp from 'sharp';
import { modelSource } from '../src/adapters/mask-model.adapter.ts';
import { float16ToFloat32 } from '../src/adapters/model-float32.mjs';
import { readModel } from '../src/adapters/model-session.mjs';
import { fillModelInput } from '../src/imaging/model-io.mjs';
import { evalEntries, evalFile } from '../tools/shared-data.ts';
import { median } from './cpu.ts';

const stored = readModel(modelSource());
const widened = float16ToFloat32(stored)!;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-bench-float32-'));
const session = async (bytes: Uint8Array, name: string) => {
  const file = path.join(dir, `${name}.onnx`);
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 2, optimizedModelFilePath: file });
  const nodes = fromBinary(ModelProtoSchema, fs.readFileSync(file)).graph!.node.length;
  return { s, nodes };
};
const half = await session(stored, 'float16');
const full = await session(widened, 'float32');
const entry = evalEntries().filter((e) => e.kind === 'product')[0];
const rgb = await sharp(evalFile(entry.image)).removeAlpha().resize(1024, 1024, { fit: 'fill' }).raw().toBuffer();
const input = new Float32Array(3 * 1024 * 1024);
fillModelInput(rgb, input);
const feeds = { input: new ort.Tensor('float32', input, [1, 3, 1024, 1024]) };
await half.s.run(feeds);
await full.s.run(feeds);
const times = { float16: [] as number[], float32: [] as number[] };
const ratios: number[] = [];
for (let i = 0; i < Number(process.env.BENCH_FLOAT32_PAIRS ?? 12); i++) {
  const pair: Record<string, number> = {};
  for (const [name, s] of i % 2
    ? ([
        ['float16', half.s],
        ['float32', full.s],
      ] as const)
    : ([
        ['float32', full.s],
        ['float16', half.s],
      ] as const)) {
    const t = performance.now();
    await s.run(feeds);
    pair[name] = performance.now() - t;
    times[name].push(pair[name]);
  }
  ratios.push(pair.float16 / pair.float32);
}
fs.rmSync(dir, { recursive: true, force: true });
console.log(
  `float16 as shipped ${median(times.float16).toFixed(0)} ms (${half.nodes} nodes optimised), float32 copy ${median(times.float32).toFixed(0)} ms (${full.nodes} nodes); float16 / float32 per pair: median ${median(ratios).toFixed(3)} (${ratios.map((r) => r.toFixed(2)).join(' ')})`,
);
