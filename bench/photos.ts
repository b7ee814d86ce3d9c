// npm run bench -- photos <folder>: the shipped check, the heavy tier and the report judge on photos you
// bring, with masks a person made. The calibration set (tools/calibration/calibration-set.ts) is made from
// ../shared/eval-data, and its grouped folds are the nearest it comes to photos the check was never fitted
// on; this command measures on the real thing: a folder of a seller's photos, a public benchmark's, anything
// with masks. Nothing is fitted here; every figure is the shipped calibration and bars, as the service runs them.
//
// The folder (searched one level deep) holds pairs: `name.jpg` (or .jpeg, .png, .webp) and its mask
// `name.mask.png` or `name.gt.png` (or .gif): 8-bit, foreground >= 128, any size (resized to the photo's).
// Each result is scored against its mask (IoU at 128, as everywhere in docs/research/quality-history.md): broken below 0.85,
// clean from 0.95. MATTE_HEAVY_MODEL_PATH, the service's own variable, puts a heavy model to the test against
// light (the bars of reports were fitted on the light model's cut-outs: docs/research/quality-history.md). The model's masks are
// cached under .bench/photos/ (keyed by the photo's bytes and the heavy model), so a
// second run takes seconds (PHOTOS_CACHE=<dir> puts them elsewhere). PHOTOS_JSON=<file> writes every figure.
// The light results are the int8 model's, as the service's default (cached apart, keyed by its calibration);
// MATTE_MODEL_INT8=0, the service's own variable too, makes them the float model's.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MODEL_INPUT_SIZE } from '../src/adapters/mask-model.adapter.ts';
import { loadConfig } from '../src/config.ts';
import { maskStatistics } from '../src/imaging/model-io.mjs';
import { CHECK_GRID } from '../src/pipeline/check/features.ts';
import { diagnose } from '../src/pipeline/diagnose.ts';
import { PhotoError } from '../src/errors.ts';
import {
  CachedMasks,
  serviceMasks,
  MaskedPhotoReader,
  maskedPhotos,
  PHOTOS_CACHE,
} from '../tools/calibration/real-photos.ts';
import { claimFigures, judgedClaims, looseClaims } from '../tools/calibration/claims-calibration.ts';
import type { Composite } from '../tools/calibration/calibration-set.ts';
import { share as pct } from '../tools/figures.ts';
import { TRUTH_BARS } from '../src/pipeline/check/calibration.ts';

const { brokenBelow: BROKEN_BELOW, goodFrom: CLEAN_FROM } = TRUTH_BARS;

const folder = process.argv[2] ?? process.env.PHOTOS_DIR;
if (!folder || !fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
  console.error('usage: npm run bench -- photos <folder of photos, each with name.mask.png or name.gt.png>');
  process.exit(2);
}
if (process.env.MATTE_HEAVY_MODEL_PATH && !fs.existsSync(process.env.MATTE_HEAVY_MODEL_PATH)) {
  console.error(`MATTE_HEAVY_MODEL_PATH: no file at ${process.env.MATTE_HEAVY_MODEL_PATH}`);
  process.exit(2);
}

/**
 * The heavy tier as this server would run it: the operator's heavy model (MATTE_HEAVY_MODEL_PATH, the service's
 * own variable) when one is set; otherwise the light model itself (docs/check.md), so no second pass is run.
 */
const HEAVY_MODEL = process.env.MATTE_HEAVY_MODEL_PATH ?? '';
/** The light results as MATTE_MODEL_INT8 sets them: the int8 model's (the default), or the float model's. */
const INT8 = loadConfig().modelInt8;
const reader = new MaskedPhotoReader(serviceMasks());
const heavyMasks = HEAVY_MODEL
  ? (() => {
      const stat = fs.statSync(HEAVY_MODEL);
      const key = `${path.resolve(HEAVY_MODEL)}:${stat.size}:${stat.mtimeMs}`;
      return new CachedMasks(
        PHOTOS_CACHE,
        `heavy-${crypto.createHash('sha256').update(key).digest('hex').slice(0, 12)}`,
        HEAVY_MODEL,
      );
    })()
  : null;

interface Row {
  id: string;
  width: number;
  height: number;
  light: { iou: number; mae: number };
  heavy: { iou: number; mae: number };
  /** The check on the light result, as the service decides it: red (not charged), its score and flags. */
  red: boolean;
  score: number | null;
  flags: string[];
}
const rows: Row[] = [];
const planes = new Map<string, { input: Buffer; light: Buffer; truth: Buffer }>();
const found = maskedPhotos(folder).map((e) => ({
  id: e.id,
  photo: path.join(folder, e.image),
  mask: path.join(folder, e.mask),
}));
if (!found.length) {
  console.error(`no photo with a mask beside it (name.mask.png or name.gt.png) in ${folder}`);
  process.exit(2);
}
for (const pair of found) {
  const photo = await reader.read(pair.photo, pair.mask);
  const { input, light, decoded } = photo;
  const { width, height } = decoded;
  const heavy = heavyMasks ? await heavyMasks.mask(photo.bytes, input) : light;
  const row: Row = {
    id: pair.id,
    width,
    height,
    light: await photo.score(light),
    heavy: await photo.score(heavy),
    red: true,
    score: null,
    flags: ['NO_SUBJECT'],
  };
  try {
    const d = diagnose(
      maskStatistics(light, MODEL_INPUT_SIZE),
      await reader.rasters.checkGrid(light, input, MODEL_INPUT_SIZE, CHECK_GRID),
      MODEL_INPUT_SIZE,
      { width, height },
    );
    Object.assign(row, { red: d.red, score: d.quality.score, flags: d.quality.flags.map((f) => f.code) });
  } catch (err) {
    // No subject: the photo fails, nothing is charged (counted as flagged).
    if (!(err instanceof PhotoError)) throw err;
  }
  rows.push(row);
  planes.set(pair.id, { input, light, truth: await photo.truthAtModelSize() });
  console.log(
    `${pair.id.padEnd(28)} light IoU ${row.light.iou.toFixed(3)}  heavy ${row.heavy.iou.toFixed(3)}  check ${row.red ? 'red ' : 'pass'} ${row.score ?? '-'} ${row.flags.join(',')}`,
  );
}
await reader.close();
await heavyMasks?.close();

const broken = rows.filter((r) => r.light.iou < BROKEN_BELOW);
const clean = rows.filter((r) => r.light.iou >= CLEAN_FROM);
console.log(
  `\n## the check on ${rows.length} photos (light results of the ${INT8 ? 'int8 model, the default' : 'float model, MATTE_MODEL_INT8=0'}; broken: IoU < ${BROKEN_BELOW}, clean: IoU >= ${CLEAN_FROM})`,
);
console.log(`broken results flagged: ${pct(broken.filter((r) => r.red).length, broken.length)} (goal >= 90%)`);
console.log(`clean results flagged:  ${pct(clean.filter((r) => r.red).length, clean.length)} (goal <= 5%)`);
console.log(
  `in between (${BROKEN_BELOW}..${CLEAN_FROM}): ${rows.length - broken.length - clean.length}, of which flagged ${rows.filter((r) => r.light.iou >= BROKEN_BELOW && r.light.iou < CLEAN_FROM && r.red).length}`,
);
console.log(
  `missed: ${
    broken
      .filter((r) => !r.red)
      .map((r) => `${r.id} (${r.light.iou.toFixed(2)})`)
      .join(', ') || 'none'
  }`,
);
console.log(
  `false alarms: ${
    clean
      .filter((r) => r.red)
      .map((r) => `${r.id} (${r.flags.join(',')})`)
      .join(', ') || 'none'
  }`,
);

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const diffs = rows.map((r) => ({ id: r.id, d: r.heavy.iou - r.light.iou }));
const worst = diffs.reduce((a, b) => (b.d < a.d ? b : a));
const gain = mean(diffs.map((d) => d.d));
console.log(
  HEAVY_MODEL
    ? `\n## heavy tier: ${HEAVY_MODEL} (MATTE_HEAVY_MODEL_PATH), against light`
    : '\n## heavy tier without a stronger model: the light model itself (set MATTE_HEAVY_MODEL_PATH to test one)',
);
console.log(
  `mean IoU light ${mean(rows.map((r) => r.light.iou)).toFixed(3)}, heavy ${mean(rows.map((r) => r.heavy.iou)).toFixed(3)} (${gain >= 0 ? '+' : ''}${gain.toFixed(3)}); mean alpha error ${mean(rows.map((r) => r.light.mae)).toFixed(4)} and ${mean(rows.map((r) => r.heavy.mae)).toFixed(4)}; worst photo ${worst.d.toFixed(3)} (${worst.id})`,
);

// Reports: the model's own mistakes claimed with the reason that fits (true claims), and regions the result
// gets right claimed anyway (false ones), built and judged as on the calibration set (tools/calibration/claims-calibration.ts).
const results = rows.map(
  (r) => ({ id: r.id, group: r.id, source: 'photos', family: 'original' }) as unknown as Composite,
);
const claims = await claimFigures(results, (c) => planes.get(c.id)!);
console.log('\n## reports on these results (the shipped bars)');
console.log('reason            true claims accepted     false claims refused');
for (const [reason, t] of claims)
  console.log(`${reason.padEnd(17)} ${pct(t.accepted, t.trueClaims).padEnd(24)} ${pct(t.rejected, t.falseClaims)}`);
console.log(
  `true claims with a box a quarter looser on each side: ${pct(looseClaims.filter((c) => c.accepted).length, looseClaims.length)}`,
);
const wrong = judgedClaims.filter((c) => c.truth !== c.accepted);
if (wrong.length) {
  console.log('claims judged wrong (true ones refused, false ones accepted):');
  for (const c of wrong)
    console.log(
      `  ${c.truth ? 'true, refused  ' : 'false, accepted'} ${c.group.padEnd(28)} ${c.reason.padEnd(16)} ${Object.entries(
        c.metrics,
      )
        .map(([k, v]) => `${k} ${Math.round(v * 1000) / 1000}`)
        .join(', ')}`,
    );
}
if (process.env.PHOTOS_JSON)
  fs.writeFileSync(
    process.env.PHOTOS_JSON,
    `${JSON.stringify({ rows, claims: Object.fromEntries(claims) }, null, 2)}\n`,
  );
