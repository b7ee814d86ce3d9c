// Edge figures on ../shared/eval-data at each photo's full source resolution: the model's mask
// upsampled (what the service made before), against the refined alpha (src/imaging/edge-refine.mjs):
// mean absolute alpha error over the whole photo, and within 3 pixels of the true edge (where the
// ground truth crosses 128). Part of npm run bench -- all; also runs alone (npm run bench -- edges).
// MATTE_QUALITY_CACHE=<dir> reuses the light masks kept by npm run calibrate -- figures.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { ImageDecoder, type DecodedImage } from '../src/adapters/images/decoder.ts';
import { CheckRasters } from '../src/adapters/images/rasters.ts';
import { OnnxMaskModel, MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { refineEdges } from '../src/imaging/edge-refine.mjs';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../tools/shared-data.ts';
import { dilate, boundary } from '../src/imaging/raster.mjs';
import { refineInputs } from '../src/pipeline/segment.ts';

export interface EdgeFigures {
  photos: number;
  upsampled: { mae: number; edgeMae: number };
  refined: { mae: number; edgeMae: number };
  refineMs: number;
}

/**
 * The refined alpha of a photo as the service makes it (src/pipeline/segment.ts): the grid's inputs, the photo
 * reduced by libvips and the mask by area averages, then the refinement at the photo's size.
 */
export async function refinedAlpha(
  decoder: ImageDecoder,
  decoded: DecodedImage,
  mask: Buffer,
  opts: { radius?: number; eps?: number } = {},
): Promise<Uint8Array> {
  const low = await refineInputs(decoder, decoded, mask);
  return refineEdges(
    { rgb: decoded.rgb, alpha: null, width: decoded.width, height: decoded.height },
    { radius: opts.radius, eps: opts.eps, low },
  ).alpha;
}

/**
 * Mean absolute alpha error (0..1) against a drawn mask (one channel, at the photo's size): over the whole photo
 * and within 3 px of the true edge (where the truth crosses 128). The edge band is found once; the function
 * returned scores any alpha of that photo.
 */
export function alphaErrors(
  truth: Uint8Array,
  width: number,
  height: number,
): (alpha: Uint8Array) => { mae: number; edgeMae: number } {
  const n = truth.length;
  const solid = new Uint8Array(n);
  for (let i = 0; i < n; i++) solid[i] = truth[i] >= 128 ? 1 : 0;
  const near = dilate(boundary(solid, width, height), width, height, 3);
  return (a) => {
    let all = 0;
    let edge = 0;
    let edgeN = 0;
    for (let i = 0; i < n; i++) {
      const e = Math.abs(a[i] - truth[i]) / 255;
      all += e;
      if (near[i]) {
        edge += e;
        edgeN++;
      }
    }
    return { mae: all / n, edgeMae: edgeN ? edge / edgeN : 0 };
  };
}

export async function edgeFigures(
  opts: { radius?: number; eps?: number; log?: (line: string) => void } = {},
): Promise<EdgeFigures> {
  if (!HAVE_EVAL_DATA) throw new Error('the edge figures read ../shared/eval-data; set MATTE_SHARED_DIR');
  const decoder = new ImageDecoder(100_000_000);
  const rasters = new CheckRasters(100_000_000);
  const cache = process.env.MATTE_QUALITY_CACHE;
  let model: OnnxMaskModel | undefined;
  const sums = { up: 0, upEdge: 0, ref: 0, refEdge: 0, ms: 0 };
  const entries = evalEntries();
  for (const entry of entries) {
    const decoded = await decoder.decode(evalFile(entry.image));
    const input = await decoder.toModelInput(decoded, MODEL_INPUT_SIZE);
    const file = cache && path.join(cache, `${entry.id}.photo.mask`);
    let mask: Buffer;
    if (file && fs.existsSync(file)) mask = fs.readFileSync(file);
    else {
      model ??= new OnnxMaskModel({ modelPath: '', threads: 2 });
      await model.ready();
      mask = (await model.predict(input)).mask;
    }
    const upsampled = await rasters.maskToSize(mask, MODEL_INPUT_SIZE, decoded);
    // As the service runs it (src/pipeline/segment.ts): the grid's inputs, the photo reduced by libvips and the mask by area averages.
    const t0 = performance.now();
    const refined = await refinedAlpha(decoder, decoded, mask, opts);
    sums.ms += performance.now() - t0;
    const truth = await sharp(evalFile(entry.mask))
      .extractChannel(0)
      .resize(decoded.width, decoded.height, { fit: 'fill' })
      .raw()
      .toBuffer();
    const err = alphaErrors(truth, decoded.width, decoded.height);
    const u = err(upsampled);
    const r = err(refined);
    sums.up += u.mae;
    sums.upEdge += u.edgeMae;
    sums.ref += r.mae;
    sums.refEdge += r.edgeMae;
    opts.log?.(
      `${entry.id.padEnd(26)} upsampled MAE ${u.mae.toFixed(4)} edge ${u.edgeMae.toFixed(4)}   refined MAE ${r.mae.toFixed(4)} edge ${r.edgeMae.toFixed(4)}`,
    );
  }
  await model?.close();
  const k = entries.length;
  return {
    photos: k,
    upsampled: { mae: sums.up / k, edgeMae: sums.upEdge / k },
    refined: { mae: sums.ref / k, edgeMae: sums.refEdge / k },
    refineMs: sums.ms / k,
  };
}

export function printEdgeFigures(f: EdgeFigures): void {
  console.log(`\n## edges at full source resolution, ${f.photos} eval photos (light tier mask)`);
  console.log('alpha                mean |error|   within 3 px of the true edge');
  console.log(`upsampled mask       ${f.upsampled.mae.toFixed(4)}         ${f.upsampled.edgeMae.toFixed(4)}`);
  console.log(`refined              ${f.refined.mae.toFixed(4)}         ${f.refined.edgeMae.toFixed(4)}`);
  console.log(
    `refined / upsampled  ${(f.refined.mae / f.upsampled.mae).toFixed(3)}          ${(f.refined.edgeMae / f.upsampled.edgeMae).toFixed(3)}   (refinement ${f.refineMs.toFixed(0)} ms a photo)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const radius = process.env.EDGE_RADIUS ? Number(process.env.EDGE_RADIUS) : undefined;
  const eps = process.env.EDGE_EPS ? Number(process.env.EDGE_EPS) : undefined;
  printEdgeFigures(await edgeFigures({ radius, eps, log: process.env.EDGE_VERBOSE ? console.log : undefined }));
}
