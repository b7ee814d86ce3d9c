// The inference stage: the model's mask for a photo, and its alpha at working resolution.
//  light (1 credit): one pass over the whole photo squeezed to 1024x1024.
//  heavy (2 credits): a stronger pipeline on the same weights: the photo and its mirror image, and per
//    pixel the larger of the two masks (the mirror image's mask mirrored back). The model's most common
//    failure on product photos is a missing part (a limb of a plush toy, the far side of a vase), and it
//    rarely misses the same part in both views; background it keeps in one view it mostly keeps in both.
//
// Chosen by measurement on all 47 photos of ../shared/eval-data (mean IoU at alpha >= 128, photos below
// 0.85), with the passes cached and merged eight ways: light 0.866 (11); mirror averaged 0.880 (9);
// letterboxed input 0.872 (12); mean of stretched, mirrored and letterboxed 0.885 (10); their median
// 0.882 (10); per-pixel maximum of photo and mirror 0.888 (8). The maximum held in each source folder
// on its own (alphamatting 0.820 → 0.857, grabcut 0.935 → 0.936). A second pass on the subject's crop
// at full model resolution lost on average (mirror + crop 0.876) and ruined one photo (0.97 → 0.70),
// so it is not used. `npm run bench:quality` measures the two tiers as the service runs them.
import type { ImageDecoder, DecodedImage } from '../adapters/images/decoder.ts';
import { MODEL_INPUT_SIZE, type MaskModel, type MaskPrediction } from '../adapters/mask-model.adapter.ts';
import type { Tier } from '../domain/batch.schemas.ts';
import type { Cutout, PreparedCutout } from '../imaging/cutout-writer.ts';
import { refineGrid } from '../imaging/edge-refine.mjs';
import { reduceArea } from '../imaging/mask-reduce.mjs';
import { maskStatistics } from '../imaging/model-io.mjs';

/** The model's mask for the tier: one pass (light), or the photo and its mirror image merged (heavy). */
export async function predictMask(model: MaskModel, modelInput: Buffer, tier: Tier): Promise<MaskPrediction> {
  return tier === 'light' ? model.predict(modelInput) : mirroredUnion(model, modelInput);
}

/**
 * The cut-out at the photo's working size: the model's mask refined against the photo (edge-refine.mjs),
 * capped by any source transparency, with the photo's colours decontaminated at the edges, as PNG
 * (imaging/cutout-writer.ts). `prepared`: the photo handed to the cut-out writer, and `lowRgb` the
 * photo at its refinement grid (gridRgb), both started by the caller while the model runs.
 * The refinement needs the mask only on its grid: away from the edge it is 0 or 255 anyway, so the
 * whole mask is never upsampled.
 */
export async function cutoutAtSize(
  decoded: DecodedImage,
  prediction: MaskPrediction,
  prepared: PreparedCutout,
  lowRgb: Promise<Buffer>,
): Promise<Cutout> {
  // The photo's reduction was started long before: only the mask's is left.
  const alpha = gridMask(decoded, prediction.mask);
  return prepared.write({ rgb: await lowRgb, alpha });
}

/** The photo and the model's square mask reduced to the edge refinement's grid (RGB, and one channel), as cutoutAtSize makes them. */
export async function refineInputs(
  decoder: ImageDecoder,
  decoded: DecodedImage,
  mask: Buffer,
): Promise<{ rgb: Buffer; alpha: Buffer }> {
  return { rgb: await gridRgb(decoder, decoded), alpha: gridMask(decoded, mask) };
}

/** The photo reduced to its refinement grid (ImageDecoder.reduceRgb, off the event loop): needs no mask, so it can start while the model runs. */
export function gridRgb(decoder: ImageDecoder, decoded: DecodedImage): Promise<Buffer> {
  const grid = refineGrid(decoded.width, decoded.height);
  return decoder.reduceRgb(decoded, grid.w, grid.h);
}

/** The model's square mask reduced to the photo's refinement grid by area averages (mask-reduce.mjs). */
function gridMask(decoded: DecodedImage, mask: Buffer): Buffer {
  const grid = refineGrid(decoded.width, decoded.height);
  const out = reduceArea(mask, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, grid.w, grid.h);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** The model on the input and on its mirror image; per pixel the larger mask value of the two views. */
async function mirroredUnion(model: MaskModel, input: Buffer): Promise<MaskPrediction> {
  const a = await model.predict(input);
  const b = await model.predict(flipRgb(input, MODEL_INPUT_SIZE));
  return unionWithMirror(a, b);
}

/** Per pixel the larger of a mask and a mirror-image pass's mask mirrored back (the heavy tier's merge). */
export function unionWithMirror(a: MaskPrediction, b: MaskPrediction): MaskPrediction {
  const n = MODEL_INPUT_SIZE;
  const mask = Buffer.alloc(a.mask.length);
  for (let y = 0; y < n; y++) {
    const row = y * n;
    for (let x = 0; x < n; x++) mask[row + x] = Math.max(a.mask[row + x], b.mask[row + n - 1 - x]);
  }
  return { mask, ...maskStatistics(mask, n), runMs: a.runMs + b.runMs };
}

/** A square RGB image mirrored left to right. */
export function flipRgb(rgb: Buffer, size: number): Buffer {
  const out = Buffer.alloc(rgb.length);
  for (let y = 0; y < size; y++) {
    const row = y * size * 3;
    for (let x = 0; x < size; x++) {
      const from = row + x * 3;
      const to = row + (size - 1 - x) * 3;
      out[to] = rgb[from];
      out[to + 1] = rgb[from + 1];
      out[to + 2] = rgb[from + 2];
    }
  }
  return out;
}
