// The cut-outs against the masks a person drew, at each photo's working size (npm run bench -- edges; part of npm
// run bench -- all): the service's light masks (int8 by default, cached under .bench/photos/) made into alpha as
// the service makes it (src/pipeline/segment.ts, imaging/solid-interior.mjs, imaging/edge-refine.mjs), on every set
// of real photos (../shared/eval-data, ../shared/real-photos). Per photo and per set:
//  - IoU (alpha >= 128 against the drawn mask >= 128), the mean absolute alpha error, and the edge error (the mean
//    within 3 px of where the drawn mask crosses 128);
//  - see-through inside (issue 84): of the drawn subject's pixels at least 1% of the long side in from its edge,
//    the share at alpha 16-239;
// for three alphas: the mask upsampled, the refined alpha without the solid interior (the service before
// 2026-12-08), and the service's. Results: bench/results/edges.md and .json.
import fs from 'node:fs';
import path from 'node:path';
import { ImageDecoder, type DecodedImage } from '../src/adapters/images/decoder.ts';
import { CheckRasters } from '../src/adapters/images/rasters.ts';
import { MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { refineEdges, refineGrid } from '../src/imaging/edge-refine.mjs';
import { solidInterior } from '../src/imaging/solid-interior.mjs';
import { dilate, boundary } from '../src/imaging/raster.mjs';
import { refineInputs } from '../src/pipeline/segment.ts';
import { compareAlpha } from '../tools/shared-data.ts';
import { MaskedPhotoReader, realFolders, serviceMasks } from '../tools/calibration/real-photos.ts';
import { seeThroughInside } from '../tools/masks.ts';
import { share } from '../tools/figures.ts';

const RESULTS = path.join(import.meta.dirname, 'results');

/**
 * The alpha of a photo as the service makes it (src/pipeline/segment.ts): the grid's inputs, the photo reduced by
 * libvips and the mask by area averages, its inside made opaque (`solid`, as the service does), then the
 * refinement at the photo's size.
 */
export async function refinedAlpha(
  decoder: ImageDecoder,
  decoded: DecodedImage,
  mask: Buffer,
  opts: { radius?: number; eps?: number; solid?: boolean } = {},
): Promise<Uint8Array> {
  const low = await refineInputs(decoder, decoded, mask);
  if (opts.solid ?? true) {
    const grid = refineGrid(decoded.width, decoded.height);
    solidInterior(low.alpha, grid.w, grid.h);
  }
  const { alpha } = refineEdges(
    { rgb: decoded.rgb, alpha: null, width: decoded.width, height: decoded.height },
    { radius: opts.radius, eps: opts.eps, low },
  );
  // A photo's own transparency caps the cut-out's alpha (imaging/rgba-bands.mjs).
  if (decoded.alpha) for (let i = 0; i < alpha.length; i++) alpha[i] = Math.min(alpha[i], decoded.alpha[i]);
  return alpha;
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

type Arm = 'upsampled' | 'refined' | 'service';
const ARMS: Arm[] = ['upsampled', 'refined', 'service'];
const ARM_NAMES: Record<Arm, string> = {
  upsampled: 'the mask upsampled',
  refined: 'refined, without the solid interior',
  service: 'the service (refined, solid interior)',
};

interface Figures {
  iou: number;
  mae: number;
  edgeMae: number;
  seeThrough: number;
}

export interface PhotoFigures {
  set: string;
  id: string;
  arms: Record<Arm, Figures>;
}

export interface EdgeFigures {
  photos: PhotoFigures[];
  refineMs: number;
}

export async function edgeFigures(opts: { log?: (line: string) => void } = {}): Promise<EdgeFigures> {
  const reader = new MaskedPhotoReader(serviceMasks());
  const rasters = new CheckRasters(100_000_000);
  const photos: PhotoFigures[] = [];
  let refineMs = 0;
  try {
    for (const { name, dir, entries } of realFolders()) {
      for (const e of entries) {
        const photo = await reader.read(path.join(dir, e.image), path.join(dir, e.mask));
        const { decoded, truth, light } = photo;
        const { width, height } = decoded;
        const errors = alphaErrors(truth, width, height);
        const score = (alpha: Uint8Array): Figures => ({
          iou: compareAlpha(alpha, truth).iou,
          ...errors(alpha),
          seeThrough: seeThroughInside(alpha, truth, width, height),
        });
        const t0 = performance.now();
        const service = await refinedAlpha(reader.decoder, decoded, light);
        refineMs += performance.now() - t0;
        const arms = {
          upsampled: score(await rasters.maskToSize(light, MODEL_INPUT_SIZE, decoded)),
          refined: score(await refinedAlpha(reader.decoder, decoded, light, { solid: false })),
          service: score(service),
        };
        photos.push({ set: name, id: e.id, arms });
        const s = arms.service;
        opts.log?.(
          `${name}/${e.id}: IoU ${s.iou.toFixed(4)}, edge ${s.edgeMae.toFixed(4)}, see-through ${(100 * s.seeThrough).toFixed(2)}% (before ${(100 * arms.refined.seeThrough).toFixed(2)}%)`,
        );
      }
    }
  } finally {
    await reader.close();
  }
  return { photos, refineMs: refineMs / Math.max(1, photos.length) };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Per set: each arm's means, and the see-through where the cut-out is otherwise right (IoU >= 0.90). */
export function edgeLines(f: EdgeFigures): string[] {
  const lines: string[] = [];
  const sets = [...new Set(f.photos.map((p) => p.set))];
  for (const set of [...sets, 'all']) {
    const group = f.photos.filter((p) => set === 'all' || p.set === set);
    lines.push(`\n## ${set}: ${group.length} photos`, '');
    lines.push(
      '| alpha | IoU | mean error | edge error | see-through inside | where otherwise right (IoU >= 0.90): see-through, photos above 2% |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const arm of ARMS) {
      const all = group.map((p) => p.arms[arm]);
      const right = all.filter((a) => a.iou >= 0.9);
      lines.push(
        `| ${ARM_NAMES[arm]} | ${mean(all.map((a) => a.iou)).toFixed(4)} | ${mean(all.map((a) => a.mae)).toFixed(4)} | ` +
          `${mean(all.map((a) => a.edgeMae)).toFixed(4)} | ${(100 * mean(all.map((a) => a.seeThrough))).toFixed(2)}% | ` +
          `${(100 * mean(right.map((a) => a.seeThrough))).toFixed(3)}% of ${right.length} photos, ${share(right.filter((a) => a.seeThrough > 0.02).length, right.length)} |`,
      );
    }
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await edgeFigures({ log: process.env.EDGE_VERBOSE ? console.log : undefined });
  const text = [
    '# The cut-outs against the drawn masks',
    '',
    'Written by `npm run bench -- edges` (bench/edges.ts). See-through inside: of the drawn subject’s pixels at least',
    '1% of the long side in from its edge, the share at alpha 16-239 (goals, issue 84: where the cut-out is otherwise',
    'right, at most 0.25% on average and no photo above 2%; over all photos at most half of the service before; IoU',
    'and the edge error no worse).',
    ...edgeLines(figures),
    '',
    `The alpha's refinement: ${figures.refineMs.toFixed(0)} ms a photo in JavaScript, one thread.`,
  ].join('\n');
  fs.mkdirSync(RESULTS, { recursive: true });
  fs.writeFileSync(path.join(RESULTS, 'edges.md'), `${text}\n`);
  const rounded = (_: string, v: unknown) => (typeof v === 'number' ? Math.round(v * 1e5) / 1e5 : v);
  fs.writeFileSync(path.join(RESULTS, 'edges.json'), `${JSON.stringify(figures, rounded)}\n`);
  console.log(text);
}
