// npm run bench -- int8-gate: the gate for the int8 model as the default light model, against the truth. On every
// real-photo set with masks a person drew (../shared/eval-data as it is, ../shared/real-photos, and an
// operator's folder named by CALIBRATION_PHOTOS), each photo's float and int8 masks are scored against the
// drawn mask (IoU at 128 at the photo's size, as the service scales a mask) and judged by the shipped check as
// the service judges them. Per set it prints: mean IoU of each model, the worst photo's change, the check's
// errors (broken results, IoU < 0.85, that pass; good ones, IoU >= 0.95, flagged), and whether the gate holds:
//  - int8's mean IoU within 0.003 of float's, or better;
//  - no photo worse than float's by more than 0.05 IoU;
//  - the check's errors (good flagged, broken passed) no more than float's plus one photo, a set.
// Nothing is fitted here. The masks are cached under .bench/photos/ (shared with bench:photos and calibrate), so
// a second run takes seconds. Exit status 1 when a gate fails on any set; BENCH_JSON=<file> writes the figures.
import fs from 'node:fs';
import path from 'node:path';
import { squareInput } from '../src/adapters/mask-model.adapter.ts';
import {
  CachedMasks,
  checkErrors,
  checkFlags,
  int8Masks,
  MaskedPhotoReader,
  realFolders,
  type MaskedPhoto,
} from '../tools/calibration/real-photos.ts';

export const GATES = { meanIou: -0.003, worstPhoto: -0.05, checkErrors: 1 } as const;

interface Judged {
  iou: number;
  /** The check's verdict: red (flagged, not charged); a photo with no subject fails and counts as flagged. */
  red: boolean;
}

export interface SetGate {
  name: string;
  photos: number;
  floatIou: number;
  int8Iou: number;
  worstChange: number;
  worstPhoto: string;
  /** The check's errors against the drawn masks, each model's results judged on their own IoU. */
  float: { goodFlagged: number; good: number; brokenPassed: number; broken: number };
  int8: { goodFlagged: number; good: number; brokenPassed: number; broken: number };
  pass: { meanIou: boolean; worstPhoto: boolean; goodFlagged: boolean; brokenPassed: boolean };
}

const reader = new MaskedPhotoReader(new CachedMasks());
const quantized = int8Masks();

async function judge(photo: MaskedPhoto, mask: Buffer): Promise<Judged> {
  const { iou } = await photo.score(mask);
  return { iou, red: await checkFlags(reader.rasters, photo, mask, squareInput(photo.input)) };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sets: SetGate[] = [];
for (const { name, dir, entries } of realFolders()) {
  const float: Judged[] = [];
  const int8: Judged[] = [];
  let worst = { d: Infinity, id: '' };
  for (const e of entries) {
    const photo = await reader.read(path.join(dir, e.image), path.join(dir, e.mask));
    const f = await judge(photo, photo.light);
    const q = await judge(photo, await quantized.mask(photo.bytes, photo.input));
    float.push(f);
    int8.push(q);
    if (q.iou - f.iou < worst.d) worst = { d: q.iou - f.iou, id: e.id };
  }
  const fe = checkErrors(float);
  const qe = checkErrors(int8);
  const set: SetGate = {
    name,
    photos: entries.length,
    floatIou: mean(float.map((r) => r.iou)),
    int8Iou: mean(int8.map((r) => r.iou)),
    worstChange: worst.d,
    worstPhoto: worst.id,
    float: fe,
    int8: qe,
    pass: {
      meanIou: mean(int8.map((r) => r.iou)) - mean(float.map((r) => r.iou)) >= GATES.meanIou,
      worstPhoto: worst.d >= GATES.worstPhoto,
      goodFlagged: qe.goodFlagged <= fe.goodFlagged + GATES.checkErrors,
      brokenPassed: qe.brokenPassed <= fe.brokenPassed + GATES.checkErrors,
    },
  };
  sets.push(set);
}
await reader.close();
await quantized.close();

const f3 = (x: number) => x.toFixed(4);
const mark = (ok: boolean) => (ok ? 'pass' : 'FAIL');
console.log('# int8 (the default light model) against float, scored against masks people drew\n');
console.log(
  '| set | photos | mean IoU float | mean IoU int8 | worst photo (int8 − float) | good flagged, float → int8 | broken passed, float → int8 | gate |',
);
console.log('|---|---:|---:|---:|---|---|---|---|');
for (const s of sets) {
  const ok = Object.values(s.pass).every(Boolean);
  console.log(
    `| ${s.name} | ${s.photos} | ${f3(s.floatIou)} | ${f3(s.int8Iou)} ${mark(s.pass.meanIou)} | ${f3(s.worstChange)} (${s.worstPhoto}) ${mark(s.pass.worstPhoto)} | ${s.float.goodFlagged}/${s.float.good} → ${s.int8.goodFlagged}/${s.int8.good} ${mark(s.pass.goodFlagged)} | ${s.float.brokenPassed}/${s.float.broken} → ${s.int8.brokenPassed}/${s.int8.broken} ${mark(s.pass.brokenPassed)} | ${mark(ok)} |`,
  );
}
console.log(
  `\ngates: mean IoU int8 − float ≥ ${GATES.meanIou}; no photo below ${GATES.worstPhoto}; good flagged and broken passed each at most float's + ${GATES.checkErrors}`,
);
const passed = sets.every((s) => Object.values(s.pass).every(Boolean));
console.log(passed ? 'the gate holds on every set' : 'the gate FAILS on a set');
if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, `${JSON.stringify({ sets }, null, 2)}\n`);
process.exit(passed ? 0 : 1);
