// npm run bench -- check-cost: what the automatic check costs a photo, in CPU time (this machine is shared, so
// wall time is noisy; CPU time of the process, libvips' threads included, is not). For each eval product
// the model's input (1024², as the pipeline makes it) and a mask cut from it are reduced to the check's
// grid and measured, many times over, two ways in the same run:
//   linear  the grid made by libvips' linear reduction (the check before issue 23)
//   blocks  the grid made by block averages (mask-reduce.mjs reduceBlocks, the check now), colours and mask
//           apart: the colours are reduced while the model runs, so only the mask and the measures are on
//           the photo's path
// and, of the measures, the largest uncertain part alone (its connected pieces and the join test). And what a
// seller's report costs to judge (claim-check.ts judgeClaim, on the 512² cut-out it reads), for a box the size
// of the whole subject: the largest box a seller can draw around it, and for background-kept the most windows'
// worth of pixels.
// Written to bench/results/check-cost.json and check-cost.md.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { ImageDecoder } from '../src/adapters/images/decoder.ts';
import { CheckRasters } from '../src/adapters/images/rasters.ts';
import { CHECK_GRID, largestPartJoined, measure, UNCERTAIN_FROM } from '../src/pipeline/check/features.ts';
import { CLAIM_GRID_EDGE, judgeClaim, type ClaimImage } from '../src/pipeline/check/claim-check.ts';
import type { BBox } from '../src/domain/batch.schemas.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../tools/shared-data.ts';

if (!HAVE_EVAL_DATA) throw new Error('npm run bench -- check-cost reads ../shared/eval-data; set MATTE_SHARED_DIR');
const ROUNDS = Number(process.env.BENCH_CHECK_ROUNDS ?? 20);
const N = MODEL_INPUT_SIZE;
const decoder = new ImageDecoder(100_000_000);
const rasters = new CheckRasters(100_000_000);

const photos: { input: Buffer; mask: Buffer }[] = [];
for (const e of evalEntries().filter((x) => x.kind === 'product')) {
  const input = (await decoder.toModelInput(await decoder.decode(evalFile(e.image)), N)).rgb;
  // A mask with a soft edge: the photo's own truth, scaled to the model's square and blurred a little.
  const mask = await sharp(evalFile(e.mask)).extractChannel(0).resize(N, N, { fit: 'fill' }).blur(2).raw().toBuffer();
  photos.push({ input, mask });
}

const linear = async (mask: Buffer, rgb: Buffer) => {
  const reduce = (input: Buffer, channels: 1 | 3) =>
    sharp(input, { raw: { width: N, height: N, channels } }).resize(CHECK_GRID, CHECK_GRID, {
      fit: 'fill',
      kernel: 'linear',
    });
  const [m, c] = await Promise.all([
    reduce(mask, 1).extractChannel(0).raw().toBuffer(),
    reduce(rgb, 3).raw().toBuffer(),
  ]);
  return { mask: m, rgb: c };
};

/** CPU milliseconds (user + system, all threads) and wall milliseconds per photo of `step`. */
async function cost(step: (p: (typeof photos)[number]) => Promise<unknown> | unknown) {
  for (const p of photos) await step(p); // warm-up
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = 0; r < ROUNDS; r++) for (const p of photos) await step(p);
  const cpu = process.cpuUsage(cpu0);
  const count = ROUNDS * photos.length;
  return { cpuMs: (cpu.user + cpu.system) / 1000 / count, wallMs: (performance.now() - t0) / count };
}

const figures = {
  at: new Date().toISOString(),
  photos: photos.length,
  rounds: ROUNDS,
  'linear grid + measures': await cost(async (p) => measure(await linear(p.mask, p.input))),
  'block grid + measures': await cost(async (p) => measure(await rasters.checkGrid(p.mask, p.input, N, CHECK_GRID))),
  'block grid, colours alone (while the model runs)': await cost((p) =>
    rasters.checkColours({ rgb: p.input, width: N, height: N }, CHECK_GRID),
  ),
  'block grid, mask + measures (on the photo path)': await (async () => {
    const colours = new Map(
      await Promise.all(
        photos.map(
          async (p) => [p, await rasters.checkColours({ rgb: p.input, width: N, height: N }, CHECK_GRID)] as const,
        ),
      ),
    );
    return cost((p) => measure({ mask: rasters.checkMask(p.mask, N, CHECK_GRID), rgb: colours.get(p)! }));
  })(),
  'measures alone': await (async () => {
    const grids = await Promise.all(photos.map((p) => rasters.checkGrid(p.mask, p.input, N, CHECK_GRID)));
    let k = 0;
    return cost(() => measure(grids[k++ % grids.length]));
  })(),
  'of which the largest uncertain part': await (async () => {
    const sets = (await Promise.all(photos.map((p) => rasters.checkGrid(p.mask, p.input, N, CHECK_GRID)))).map((g) => ({
      unsure: g.mask.map((v) => (v >= UNCERTAIN_FROM && v < 128 ? 1 : 0)),
      subject: g.mask.map((v) => (v >= 128 ? 1 : 0)),
    }));
    let k = 0;
    return cost(() => {
      const s = sets[k++ % sets.length];
      return largestPartJoined(s.unsure, s.subject, CHECK_GRID, CHECK_GRID);
    });
  })(),
  'report judge, background-kept over the whole subject': await claimCost('background-kept'),
  'report judge, missing-part over the whole subject': await claimCost('missing-part'),
};

/** A report's cost a claim: each photo's cut-out at the report check's size, the region the subject's box. */
async function claimCost(reason: 'background-kept' | 'missing-part') {
  const E = CLAIM_GRID_EDGE;
  const claims = await Promise.all(
    photos.map(async (p) => {
      const rgba = await sharp(p.input, { raw: { width: N, height: N, channels: 3 } })
        .joinChannel(p.mask, { raw: { width: N, height: N, channels: 1 } })
        .resize(E, E, { fit: 'fill' })
        .raw()
        .toBuffer();
      const img: ClaimImage = { width: E, height: E, rgba: new Uint8Array(rgba) };
      let [x0, y0, x1, y1] = [E, E, 0, 0];
      for (let i = 0; i < E * E; i++)
        if (rgba[i * 4 + 3] >= 128) {
          const x = i % E;
          const y = (i - x) / E;
          [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x + 1), Math.max(y1, y + 1)];
        }
      const region: BBox = { x: x0, y: y0, width: Math.max(1, x1 - x0), height: Math.max(1, y1 - y0) };
      return { img, region };
    }),
  );
  let k = 0;
  return cost(() => {
    const c = claims[k++ % claims.length];
    return judgeClaim(c.img, reason, c.region);
  });
}
const lines = Object.entries(figures)
  .filter(([, v]) => typeof v === 'object')
  .map(
    ([name, v]) =>
      `${name.padEnd(50)} CPU ${(v as { cpuMs: number }).cpuMs.toFixed(1)} ms a photo, wall ${(v as { wallMs: number }).wallMs.toFixed(1)} ms`,
  );
for (const line of lines) console.log(line);
const dir = path.join(import.meta.dirname, 'results');
fs.writeFileSync(path.join(dir, 'check-cost.json'), `${JSON.stringify(figures, null, 2)}\n`);
fs.writeFileSync(
  path.join(dir, 'check-cost.md'),
  `# npm run bench -- check-cost, ${figures.at}\n\n${photos.length} eval products, ${ROUNDS} rounds.\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`,
);
console.log('written: bench/results/check-cost.json, bench/results/check-cost.md');
