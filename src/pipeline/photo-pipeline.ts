// decode → inference → diagnose → compose → encode for one photo. Each stage is timed and announced
// (onStage) so the batch answer shows where a photo is. Everything heavy runs off the event loop:
// sharp on libuv's pool, the model in its worker thread.
import { performance } from 'node:perf_hooks';
import { THUMB_EDGE } from '../adapters/images/sharp.ts';
import type { ImageDecoder } from '../adapters/images/decoder.ts';
import type { ImageRenderer } from '../adapters/images/renderer.ts';
import type { CheckRasters } from '../adapters/images/rasters.ts';
import { MODEL_INPUT_SIZE, type MaskModel } from '../adapters/mask-model.adapter.ts';
import type { CutoutWriter } from '../imaging/cutout-writer.ts';
import { PhotoError } from '../errors.ts';
import type {
  BBox,
  Compliance,
  ImageFormat,
  StoredItemMeta,
  Quality,
  Settings,
  Stage,
  Tier,
} from '../domain/batch.schemas.ts';
import { checkCompliance } from './compliance.ts';
import { prepareInput, type PreparedInputs } from './prepared-inputs.ts';
import { cutoutAtSize, gridRgb, modelFor } from './segment.ts';
import { diagnose, withSeeThrough } from './diagnose.ts';
import { CHECK_GRID } from './check/features.ts';
import { refineGrid } from '../imaging/edge-refine.mjs';
import { reduceArea } from '../imaging/mask-reduce.mjs';
import { maskStatistics } from '../imaging/model-io.mjs';
import { outputFormatFor, planLayout } from './compose.ts';

export interface PipelineDeps {
  decoder: ImageDecoder;
  renderer: ImageRenderer;
  rasters: CheckRasters;
  model: MaskModel;
  /** The heavy tier's model (MATTE_HEAVY_MODEL_PATH); heavy photos run on `model` without one. */
  heavyModel?: MaskModel | null;
  /** Decodes started before the photo was claimed (POST /v1/images in this process). */
  prepared?: PreparedInputs;
  /** Edge refinement at full resolution and the cut-out's PNG, in worker threads. */
  cutouts: CutoutWriter;
}

export interface Drawn {
  output: Buffer;
  format: ImageFormat;
  width: number;
  height: number;
}

export interface PhotoResult extends Drawn {
  cutout: Buffer;
  quality: Quality;
  red: boolean;
  meta: StoredItemMeta;
  /**
   * Makes the output's thumbnail. Called by the worker once the result is stored and settled: off the
   * answer's path, and not beside the cut-out's bands, whose CPU it would share.
   */
  thumbnail(): Promise<Buffer>;
}

/**
 * Draws a stored cutout with Settings (no model call), without a thumbnail: previews and downloads.
 * `reused` says the output is the cutout itself (default settings), so the cutout's thumbnail is the output's.
 */
export async function drawCutout(
  deps: Pick<PipelineDeps, 'renderer'>,
  cutout: Buffer,
  size: { width: number; height: number },
  bbox: BBox | null,
  settings: Settings,
  backgroundImage: Buffer | null,
  timings?: { compose: number; encode: number },
  onEncode?: () => Promise<void>,
): Promise<Drawn & { reused: boolean }> {
  let t = performance.now();
  const layout = planLayout(size, bbox, settings);
  const format = outputFormatFor(settings);
  if (format === 'png' && isIdentity(layout, size)) {
    // Default settings draw the cutout as it is: the stored cutout already is the output, so
    // re-rendering and re-encoding it (two full-size PNG encodes) would only cost time.
    if (timings) timings.compose = performance.now() - t;
    await onEncode?.();
    return { output: cutout, format, width: size.width, height: size.height, reused: true };
  }
  const background =
    layout.background.kind === 'image'
      ? backgroundImage
        ? { kind: 'image' as const, data: backgroundImage }
        : { kind: 'transparent' as const }
      : layout.background;
  const raw = await deps.renderer.render(cutout, { ...layout, background });
  if (timings) timings.compose = performance.now() - t;
  await onEncode?.();
  t = performance.now();
  const opaque = background.kind !== 'transparent';
  const output = await deps.renderer.encodeRaw(raw, format, 'off', opaque);
  if (timings) timings.encode = performance.now() - t;
  return { output, format, width: raw.width, height: raw.height, reused: false };
}

/**
 * The marketplace check of a render (compliance.ts): the output may come back re-encoded to fit the
 * preset's upload limit. Photos without a marketplace preset pass through unchanged.
 */
export async function checkRendered<T extends Drawn>(
  deps: Pick<PipelineDeps, 'renderer' | 'rasters'>,
  rendered: T,
  cutout: { width: number; height: number },
  bbox: BBox | null,
  settings: Settings,
): Promise<{ rendered: T; compliance?: Compliance }> {
  const { output, compliance } = await checkCompliance(
    deps,
    rendered.output,
    rendered.format,
    rendered,
    settings,
    planLayout(cutout, bbox, settings),
  );
  return { rendered: { ...rendered, output }, compliance };
}

function isIdentity(l: ReturnType<typeof planLayout>, size: { width: number; height: number }): boolean {
  const c = l.corrections;
  return (
    l.background.kind === 'transparent' &&
    !l.flip &&
    l.rotate === 0 &&
    l.scale === 1 &&
    !c.sharpen &&
    !c.brightness &&
    !c.contrast &&
    !c.saturation &&
    l.canvas.width === size.width &&
    l.canvas.height === size.height &&
    l.place.left === 0 &&
    l.place.top === 0 &&
    l.place.width === size.width &&
    l.place.height === size.height &&
    l.crop.width === size.width &&
    l.crop.height === size.height
  );
}

/** Lets the event loop answer what is waiting (I/O included) before the next stretch of work on it. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs the check's code (the mask's reductions, diagnose) on a synthetic photo a few times, giving the
 * event loop its turn between rounds: until the JavaScript engine has optimised it, the first photos'
 * check held the event loop for 190-360 ms at a time, against 40-75 ms afterwards.
 */
export async function warmUpCheck(rasters: CheckRasters, rounds = 6): Promise<void> {
  const size = MODEL_INPUT_SIZE;
  const mask = Buffer.alloc(size * size);
  const rgb = Buffer.alloc(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x - size / 2, y - size / 2) - size / 3;
      mask[y * size + x] = Math.max(0, Math.min(255, Math.round(128 - d * 16)));
      rgb.set([x % 256, y % 256, mask[y * size + x]], (y * size + x) * 3);
    }
  }
  const prediction = { mask, ...maskStatistics(mask, size), runMs: 0 };
  const photo = { width: 2000, height: 1500 };
  const grid = refineGrid(photo.width, photo.height);
  for (let i = 0; i < rounds; i++) {
    reduceArea(mask, size, size, grid.w, grid.h);
    await yieldToRequests();
    const checkGrid = {
      mask: rasters.checkMask(mask, size, CHECK_GRID),
      rgb: await rasters.checkColours({ rgb, width: size, height: size }, CHECK_GRID),
    };
    await yieldToRequests();
    diagnose(prediction, checkGrid, size, photo);
    await yieldToRequests();
  }
}

/** What the caller hears while a photo runs. */
export interface PhotoHooks {
  /** A stage begins (recorded on the photo's row). */
  onStage(stage: Stage): Promise<void>;
  /**
   * The cut-out PNG as it is made: its parts in order, each resolving as soon as it exists (the first
   * bands before the last: imaging/cutout-writer.ts Cutout), and the whole. The caller may store it
   * while it is being written, checked and drawn. Awaited before runPhoto answers; its failure fails the
   * photo. If the photo fails after it was called, whatever it wrote is the caller's to remove.
   */
  onCutout?(parts: Promise<Uint8Array>[], whole: Promise<Buffer>): Promise<void>;
}

export async function runPhoto(
  deps: PipelineDeps,
  input: Buffer,
  settings: Settings,
  backgroundImage: Buffer | null,
  hooks: PhotoHooks,
  tier: Tier = 'light',
): Promise<PhotoResult> {
  const { onStage } = hooks;
  const started = performance.now();
  const timings = { decode: 0, inference: 0, diagnose: 0, compose: 0, encode: 0, total: 0 };

  let t = performance.now();
  const model = modelFor({ light: deps.model, heavy: deps.heavyModel }, tier);
  const first = deps.prepared?.take(input) ?? prepareInput(deps.decoder, input, (w, h) => model.inputSize(w, h));
  let modelInput = await first.modelInput;
  const decoded = await first.decoded; // already there: the model's input is made from it
  // A model says its input size once it has loaded (a load failure is predict's to report), and a photo
  // prepared at the upload was sized for the light model: one sized otherwise is made again, so a photo's
  // result never depends on when it came.
  await model.ready().catch(() => undefined);
  const size = model.inputSize(decoded.width, decoded.height);
  if (size.width !== modelInput.width || size.height !== modelInput.height)
    modelInput = await deps.decoder.toModelInput(decoded, size);
  timings.decode = performance.now() - t;

  // The model starts first: the stage is announced while it runs.
  const predicting = model.predict(modelInput);
  predicting.catch(() => undefined);
  await onStage('inference');
  // What needs no mask is done while the model runs: the photo is handed to the cut-out writer (its
  // threads' shared copy) and reduced to the edge refinement's grid.
  const prepared = deps.cutouts.prepare(decoded, THUMB_EDGE);
  const lowRgb = gridRgb(deps.decoder, decoded, modelInput);
  lowRgb.catch(() => undefined);
  const checkColours = deps.rasters.checkColours(modelInput, CHECK_GRID);
  checkColours.catch(() => undefined);
  let prediction;
  try {
    prediction = await predicting;
  } catch (err) {
    // An inference server's failure keeps its code (REMOTE_*, with a message that names no backend); any
    // other is PROCESSING_FAILED. The message never names the model or the infrastructure.
    if (err instanceof PhotoError) throw err;
    throw new PhotoError('PROCESSING_FAILED', 'The photo could not be processed; retrying may help.', false);
  }
  // The model's own run time (all passes); a photo may also have waited while another photo ran.
  timings.inference = prediction.runMs;

  // The cut-out starts first, before the stage is recorded; the check reads only the mask, and runs
  // while the cut-out is refined and written (in worker threads).
  const cutting = cutoutAtSize(decoded, prediction, prepared, lowRgb);
  cutting.catch(() => undefined);
  // Stored as it is made, beside the check (onCutout).
  const storing = hooks.onCutout ? cutting.then((cut) => hooks.onCutout!(cut.parts, cut.png)) : undefined;
  storing?.catch(() => undefined);
  // The mask's reductions and the check run on the event loop, 20-30 ms each: other requests are answered
  // between them (the stage's database write alone would not let them in). The cut-out's bands are handed to
  // their threads first (a few ms after the mask): else they wait for the loop until the check is done.
  await cutting.then((cut) => cut.started).catch(() => undefined);
  await yieldToRequests();
  await onStage('diagnose');
  t = performance.now();
  const checkGrid = {
    mask: deps.rasters.checkMask(prediction.mask, MODEL_INPUT_SIZE, CHECK_GRID),
    rgb: await checkColours,
  };
  await yieldToRequests();
  const diagnosis = diagnose(prediction, checkGrid, MODEL_INPUT_SIZE, decoded);
  timings.diagnose = performance.now() - t;

  await onStage('compose');
  t = performance.now();
  const cut = await cutting;
  // With default settings the output is the cut-out, and its thumbnail is made from the cut-out's
  // preview (a reduction the bands make anyway), when the caller asks for it.
  cut.preview.catch(() => undefined);
  const cutout = await cut.png;
  // The check's figures are the model's; what stays see-through inside the cut-out is flagged beside them.
  const quality = withSeeThrough(diagnosis.quality, await cut.seeThrough);
  timings.compose = performance.now() - t;

  const stageTimes = { compose: 0, encode: 0 };
  const { reused, ...drawn } = await drawCutout(
    deps,
    cutout,
    decoded,
    diagnosis.bbox,
    settings,
    backgroundImage,
    stageTimes,
    () => onStage('encode'),
  );
  t = performance.now();
  const { rendered, compliance } = await checkRendered(deps, drawn, decoded, diagnosis.bbox, settings);
  const thumbnail = () =>
    reused ? cut.preview.then((p) => deps.renderer.thumbnailRaw(p)) : deps.renderer.thumbnail(rendered.output);
  timings.compose += stageTimes.compose;
  timings.encode = stageTimes.encode + (performance.now() - t);
  await storing;
  timings.total = performance.now() - started;
  for (const key of Object.keys(timings) as (keyof typeof timings)[]) timings[key] = Math.round(timings[key] * 10) / 10;

  const warnings: string[] = [];
  if (decoded.width !== decoded.source.width)
    warnings.push(
      `Cutout made at ${decoded.width}x${decoded.height}, the working-resolution cap, from ${decoded.source.width}x${decoded.source.height}.`,
    );
  return {
    ...rendered,
    cutout,
    thumbnail,
    quality,
    red: diagnosis.red,
    meta: {
      timings,
      output: {
        width: rendered.width,
        height: rendered.height,
        format: rendered.format,
        bytes: rendered.output.length,
      },
      source: { width: decoded.source.width, height: decoded.source.height, format: decoded.source.format },
      cutout: { width: decoded.width, height: decoded.height },
      bbox: diagnosis.bbox,
      subjectFill: diagnosis.subjectFill,
      warnings,
      presetId: settings.presetId,
      ...(compliance ? { compliance } : {}),
    },
  };
}
