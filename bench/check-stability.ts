// npm run bench -- check-stability: does the shipped check give a photo the same verdict when the photo is
// decoded and saved again as JPEG at quality 95, as a seller's tools do? On every real-photo set with masks a
// person drew (../shared/eval-data, ../shared/real-photos, and CALIBRATION_PHOTOS), each photo and its re-save
// go through the service's light model (the int8 model; MATTE_MODEL_INT8=0: float) and the shipped check.
// Prints per set: the verdicts that flip, how far a re-save moves a photo's broken probability (median), how many
// photos sit nearer the bar than that, and which photos flip with their broken probabilities and IoU. Masks are cached under .bench/photos/ like bench:photos'. Fits nothing.
// BENCH_JSON=<file> also writes the figures, with every photo's row.
import fs from 'node:fs';
import path from 'node:path';
import { squareInput } from '../src/adapters/mask-model.adapter.ts';
import { loadCalibration } from '../src/pipeline/check/calibration.ts';
import {
  checkVerdict,
  MaskedPhotoReader,
  realFolders,
  RESAVE_QUALITY,
  servicePass,
  serviceMasks,
  type MaskedPhoto,
} from '../tools/calibration/real-photos.ts';

interface Row {
  id: string;
  iou: number;
  /** Broken probability as the photo is, and re-saved (1 for a photo with no subject: it fails). */
  p: number;
  pResaved: number;
  red: boolean;
  redResaved: boolean;
}

const reader = new MaskedPhotoReader(serviceMasks());
const { threshold } = loadCalibration();

const verdict = (photo: MaskedPhoto, mask: Buffer, input: Buffer) =>
  checkVerdict(reader.rasters, photo, mask, squareInput(input));

const sets: {
  name: string;
  photos: number;
  flips: number;
  moved: number;
  nearBar: number;
  flipped: Row[];
  /** Every photo's row, for BENCH_JSON: another bar's flips and errors can be read off them. */
  rows: Row[];
}[] = [];
for (const { name, dir, entries } of realFolders()) {
  const rows: Row[] = [];
  for (const e of entries) {
    const photo = await reader.read(path.join(dir, e.image), path.join(dir, e.mask));
    const { iou } = await photo.score(photo.light);
    const first = await verdict(photo, photo.light, photo.input);
    const again = await reader.resaved(photo);
    const second = await verdict({ ...photo, decoded: again.decoded }, again.mask, again.input);
    rows.push({
      id: e.id,
      iou,
      p: first.brokenProbability,
      pResaved: second.brokenProbability,
      red: first.red,
      redResaved: second.red,
    });
  }
  const flipped = rows.filter((r) => r.red !== r.redResaved);
  // The re-save's own noise: the median move of a photo's broken probability; nearer the bar than that, a
  // verdict is a coin toss.
  const moves = rows.map((r) => Math.abs(r.p - r.pResaved)).sort((a, b) => a - b);
  const moved = moves[Math.floor(moves.length / 2)] ?? 0;
  sets.push({
    name,
    photos: rows.length,
    flips: flipped.length,
    moved,
    nearBar: rows.filter((r) => Math.abs(r.p - threshold) < moved).length,
    flipped,
    rows,
  });
}
await reader.close();

const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(1)}%`;
const lines = [
  `## the check's verdict, photo as it is against the photo saved again as JPEG at quality ${RESAVE_QUALITY} (${servicePass()} masks; the bar ${threshold})`,
  'set            photos  verdicts flipped   median move of p   photos nearer the bar than that',
  ...sets.map(
    (s) =>
      `${s.name.padEnd(14)} ${String(s.photos).padStart(6)}  ${`${s.flips} (${pct(s.flips, s.photos)})`.padEnd(17)}  ${s.moved.toFixed(4).padEnd(17)}  ${s.nearBar} (${pct(s.nearBar, s.photos)})`,
  ),
  `all            ${String(sets.reduce((a, s) => a + s.photos, 0)).padStart(6)}  ${pct(
    sets.reduce((a, s) => a + s.flips, 0),
    sets.reduce((a, s) => a + s.photos, 0),
  )} flipped (goal: at most 3%)`,
  '',
  'flipped: photo, IoU, broken probability as it is -> re-saved',
  ...sets.flatMap((s) =>
    s.flipped.map(
      (r) =>
        `  ${s.name}/${r.id.padEnd(28)} IoU ${r.iou.toFixed(3)}  p ${r.p.toFixed(3)} -> ${r.pResaved.toFixed(3)}  ${r.red ? 'red -> pass' : 'pass -> red'}`,
    ),
  ),
];
console.log(lines.join('\n'));
const out = path.join(import.meta.dirname, 'results');
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(
  path.join(out, 'check-stability.md'),
  `# npm run bench -- check-stability\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`,
);
if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify({ threshold, sets }, null, 2));
