// The inference stage: the model's mask for a photo, and its alpha at working resolution.
//  light (1 credit): one pass of the model over the whole photo squeezed to 1024x1024 (with MATTE_MODEL_ASPECT=1,
//    at its own aspect ratio, long side 1024, where the model allows it).
//  heavy (2 credits): the strongest model the operator runs (MATTE_HEAVY_MODEL_PATH, any ONNX file with
//    the same input and output), one pass; without one, the light pass.
//
// Until 2026-11-26 the heavy tier was a pipeline on the light weights: the photo and its mirror image,
// per pixel the larger mask. It was chosen among eight such variants on the 47 eval photos that also
// scored it (+0.022 IoU there). On the calibration set, chosen on training folds grouped by subject and
// scored on held-out ones, no variant (maximum, mean or minimum of the two passes) beat light by the
// +0.02 that two credits call for, and each lost badly on some photos (docs/research/quality-history.md). So the heavy
// tier is where a stronger model plugs in; light is its fallback.
import type { ImageDecoder, DecodedImage } from '../adapters/images/decoder.ts';
import {
  MODEL_INPUT_SIZE,
  type MaskModel,
  type MaskPrediction,
  type ModelInput,
} from '../adapters/mask-model.adapter.ts';
import type { Tier } from '../domain/batch.schemas.ts';
import type { Cutout, PreparedCutout } from '../imaging/cutout-writer.ts';
import { refineGrid } from '../imaging/edge-refine.mjs';
import { reduceArea } from '../imaging/mask-reduce.mjs';

/** The model that runs a tier: the heavy model for heavy photos when there is one, else the light model. */
export function modelFor(models: { light: MaskModel; heavy?: MaskModel | null }, tier: Tier): MaskModel {
  return tier === 'heavy' && models.heavy ? models.heavy : models.light;
}

/** The model's mask for the tier (modelFor), of an input sized as that model asked (MaskModel.inputSize). */
export async function predictMask(
  models: { light: MaskModel; heavy?: MaskModel | null },
  modelInput: ModelInput,
  tier: Tier,
): Promise<MaskPrediction> {
  return modelFor(models, tier).predict(modelInput);
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
  // The photo's reduction was started long before: only the mask's is left, which a writer thread makes.
  const mask = { data: prediction.mask, width: MODEL_INPUT_SIZE, height: MODEL_INPUT_SIZE };
  return prepared.write({ rgb: await lowRgb, mask });
}

/**
 * The photo and the model's square mask reduced to the edge refinement's grid (RGB, and one channel), as the
 * cut-out writer makes them, but for the colours of a photo larger than the model's input, which the service
 * takes from that input (gridRgb).
 */
export async function refineInputs(
  decoder: ImageDecoder,
  decoded: DecodedImage,
  mask: Buffer,
): Promise<{ rgb: Buffer; alpha: Buffer }> {
  return { rgb: await gridRgb(decoder, decoded), alpha: gridMask(decoded, mask) };
}

/**
 * The photo reduced to its refinement grid (ImageDecoder.reduceRgb, off the event loop): needs no mask, so it
 * can start while the model runs. From the model's input where that is itself a reduction of the photo and no
 * smaller than the grid either way (a photo over 1024 px on both sides): the same edges in about 60% of the CPU
 * (47 eval photos enlarged to 2000 px, error within 3 px of the drawn edge 0.27925 from the photo and 0.27928
 * from the input; 2000² to 667²: 9.2 ms, 1024² to 667²: 5.6 ms).
 */
export function gridRgb(decoder: ImageDecoder, decoded: DecodedImage, modelInput?: ModelInput): Promise<Buffer> {
  const grid = refineGrid(decoded.width, decoded.height);
  const fromInput =
    modelInput &&
    modelInput.width < decoded.width &&
    modelInput.height < decoded.height &&
    modelInput.width >= grid.w &&
    modelInput.height >= grid.h;
  return decoder.reduceRgb(fromInput ? modelInput : decoded, grid.w, grid.h);
}

/** The model's square mask reduced to the photo's refinement grid by area averages (mask-reduce.mjs). */
function gridMask(decoded: DecodedImage, mask: Buffer): Buffer {
  const grid = refineGrid(decoded.width, decoded.height);
  const out = reduceArea(mask, MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, grid.w, grid.h);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
