// The mirror-image pass the heavy tier once merged with the photo's own (per pixel maximum): kept for
// the benches that measure it against light (tools/calibration/calibrate.ts chose against it on held-out folds).
import { MODEL_INPUT_SIZE, type MaskPrediction } from '../../src/adapters/mask-model.adapter.ts';
import { maskStatistics } from '../../src/imaging/model-io.mjs';

/** Per pixel the larger of a square mask and a mirror-image pass's mask mirrored back. */
export function maxWithMirror(a: Uint8Array, mirrored: Uint8Array, n = MODEL_INPUT_SIZE): Buffer {
  const mask = Buffer.alloc(n * n);
  for (let y = 0; y < n; y++) {
    const row = y * n;
    for (let x = 0; x < n; x++) mask[row + x] = Math.max(a[row + x], mirrored[row + n - 1 - x]);
  }
  return mask;
}

/** The heavy tier's old merge: maxWithMirror, with the merged mask's statistics. */
export function unionWithMirror(a: MaskPrediction, b: MaskPrediction): MaskPrediction {
  const mask = maxWithMirror(a.mask, b.mask);
  return { mask, ...maskStatistics(mask, MODEL_INPUT_SIZE), runMs: a.runMs + b.runMs };
}

/** A square image of `channels` bytes a pixel (RGB by default, 1 for a mask) mirrored left to right. */
export function flipLeftRight(pixels: Buffer, size: number, channels = 3): Buffer {
  const out = Buffer.alloc(pixels.length);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const s = (y * size + x) * channels;
      const d = (y * size + (size - 1 - x)) * channels;
      for (let c = 0; c < channels; c++) out[d + c] = pixels[s + c];
    }
  }
  return out;
}
