// The report check on claims generated from ground truth. For every eval photo the ground-truth
// cut-out (truth alpha over the photo's own colours) is damaged in one known way per claim reason, and
// the damaged region is reported with that reason: a true claim. The same reasons are also reported
// on regions of the undamaged cut-out where that defect is not: a false claim. Each claim is judged
// as the service judges a report (the photo's colours under the cut-out's alpha on the claim grid, then judgeClaim).
// Damage, with r = 12% of the square root of the subject's area (at least 6 px):
//   missing-part   subject pixels within r of a point on the subject's outline made transparent
//   hole           a disc of radius r well inside the subject made transparent
//   background-kept background pixels within r of a point just outside the outline made opaque
//   extra-object   a disc of background far from the subject made opaque
//   rough-edges    within r of a point on the outline, pixels within 3 px of the edge flipped at random
// False claims: background-kept, hole and extra-object on the intact subject; missing-part and
// rough-edges on the intact outline (half subject, half real background).
// Real errors: on the light tier's own cut-outs, each error region of at least 0.5% of the photo
// (kept background, or subject cut away, against the truth) is reported with the reason it is; those
// claims are true by construction and show how the check fares on the model's real mistakes.
import fs from 'node:fs';
import { CheckRasters } from '../src/adapters/images/rasters.ts';
import {
  CLAIM_GRID_EDGE,
  judgeClaimAt,
  type ClaimReason,
  type ClaimVerdict,
} from '../src/pipeline/check/claim-check.ts';
import { boundary, components, dilate } from '../src/imaging/raster.mjs';
import type { BBox } from '../src/domain/batch.schemas.ts';
import type { EvalEntry } from '../tools/shared-data.ts';
import { percent as pct } from '../tools/figures.ts';

interface Cutout {
  entry: EvalEntry;
  tier: string;
  /** The tier's alpha at the truth's size. */
  alpha: Buffer;
  /** The photo at the truth's size, RGB. */
  rgb: Buffer;
  truth: Buffer;
}

interface Outcome {
  reason: ClaimReason;
  kind: 'true' | 'false' | 'real';
  accepted: boolean;
  photo: string;
}

/** A small deterministic generator (mulberry32), so every run makes the same claims. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rasters = new CheckRasters(100_000_000);

async function judge(
  rgb: Buffer,
  alpha: Uint8Array,
  w: number,
  h: number,
  reason: ClaimReason,
  region: BBox,
): Promise<ClaimVerdict> {
  const rgba = Buffer.alloc(w * h * 4);
  for (let i = 0; i < w * h; i++) {
    rgba[i * 4] = rgb[i * 3];
    rgba[i * 4 + 1] = rgb[i * 3 + 1];
    rgba[i * 4 + 2] = rgb[i * 3 + 2];
    rgba[i * 4 + 3] = alpha[i];
  }
  const img = await rasters.rgbaWithin(rgba, CLAIM_GRID_EDGE, { width: w, height: h });
  return judgeClaimAt(img, { width: w, height: h }, reason, region);
}
/** The outcome of a claim; CLAIMS_EVAL_METRICS=<file> also writes it with the check's measures, one JSON line each. */
const outcome = (o: Omit<Outcome, 'accepted'>, verdict: ClaimVerdict): Outcome => {
  const out = { ...o, accepted: verdict.accepted };
  if (process.env.CLAIMS_EVAL_METRICS)
    fs.appendFileSync(process.env.CLAIMS_EVAL_METRICS, `${JSON.stringify({ ...out, metrics: verdict.metrics })}\n`);
  return out;
};

function disc(
  w: number,
  h: number,
  cx: number,
  cy: number,
  r: number,
  pick: (i: number) => boolean,
): { pixels: number[]; box: BBox } {
  const pixels: number[] = [];
  let minX = w,
    minY = h,
    maxX = -1,
    maxY = -1;
  for (let y = Math.max(0, cy - r); y <= Math.min(h - 1, cy + r); y++) {
    for (let x = Math.max(0, cx - r); x <= Math.min(w - 1, cx + r); x++) {
      const i = y * w + x;
      if ((x - cx) ** 2 + (y - cy) ** 2 > r * r || !pick(i)) continue;
      pixels.push(i);
      minX = Math.min(minX, x);
      minY = Math.min(minY, y);
      maxX = Math.max(maxX, x);
      maxY = Math.max(maxY, y);
    }
  }
  return { pixels, box: { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 } };
}

const around = (w: number, h: number, i: number, r: number): BBox => {
  const x = i % w,
    y = Math.floor(i / w);
  const x0 = Math.max(0, x - r),
    y0 = Math.max(0, y - r);
  return { x: x0, y: y0, width: Math.min(w, x + r + 1) - x0, height: Math.min(h, y + r + 1) - y0 };
};

export async function evaluateClaims(cutouts: Cutout[], seed: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const rand = random(seed);
  const pickFrom = (xs: number[]) => xs[Math.floor(rand() * xs.length)];
  for (const c of cutouts) {
    const { width: w, height: h } = c.entry;
    const n = w * h;
    if (c.tier !== 'light') continue;
    outcomes.push(...(await realErrors(c)));
    const subject = new Uint8Array(n);
    let area = 0;
    for (let i = 0; i < n; i++) {
      if (c.truth[i] < 128) continue;
      subject[i] = 1;
      area++;
    }
    const r = Math.max(6, Math.round(0.12 * Math.sqrt(area)));
    const background = new Uint8Array(n);
    for (let i = 0; i < n; i++) background[i] = subject[i] ? 0 : 1;
    const nearBackground = dilate(background, w, h, r + 3);
    const outline = boundary(subject, w, h);
    const margin = 4;
    const awayFromBorder = (i: number) => {
      const x = i % w,
        y = Math.floor(i / w);
      return x >= margin && y >= margin && x < w - margin && y < h - margin;
    };
    const outlinePoints: number[] = [];
    const deepPoints: number[] = [];
    const nearOutside: number[] = [];
    const farOutside: number[] = [];
    const nearSubject = dilate(subject, w, h, Math.ceil(r / 2));
    const farFromSubject = dilate(subject, w, h, 2 * r + 4);
    for (let i = 0; i < n; i++) {
      if (!awayFromBorder(i)) continue;
      if (outline[i]) outlinePoints.push(i);
      if (subject[i] && !nearBackground[i]) deepPoints.push(i);
      if (!subject[i] && nearSubject[i]) nearOutside.push(i);
      if (!farFromSubject[i]) farOutside.push(i);
    }
    const truth = Uint8Array.from(c.truth);
    const claim = async (reason: ClaimReason, kind: 'true' | 'false', alpha: Uint8Array, region: BBox) =>
      outcomes.push(outcome({ reason, kind, photo: c.entry.id }, await judge(c.rgb, alpha, w, h, reason, region)));
    for (let round = 0; round < 2; round++) {
      if (outlinePoints.length) {
        const p = pickFrom(outlinePoints);
        const d = disc(w, h, p % w, Math.floor(p / w), r, (i) => subject[i] === 1);
        const damaged = Uint8Array.from(truth);
        for (const i of d.pixels) damaged[i] = 0;
        await claim('missing-part', 'true', damaged, d.box);
        const rough = Uint8Array.from(truth);
        const band = dilate(outline, w, h, 3);
        const area2 = disc(w, h, p % w, Math.floor(p / w), r, (i) => band[i] === 1);
        for (const i of area2.pixels) if (rand() < 0.5) rough[i] = rough[i] >= 128 ? 0 : 255;
        await claim('rough-edges', 'true', rough, area2.box);
        const q = pickFrom(outlinePoints);
        await claim('missing-part', 'false', truth, around(w, h, q, r));
        await claim('rough-edges', 'false', truth, around(w, h, q, r));
      }
      if (deepPoints.length) {
        const p = pickFrom(deepPoints);
        const d = disc(w, h, p % w, Math.floor(p / w), r, () => true);
        const damaged = Uint8Array.from(truth);
        for (const i of d.pixels) damaged[i] = 0;
        await claim('hole', 'true', damaged, d.box);
        const q = pickFrom(deepPoints);
        await claim('hole', 'false', truth, around(w, h, q, r));
        await claim('background-kept', 'false', truth, around(w, h, q, r));
        await claim('extra-object', 'false', truth, around(w, h, pickFrom(deepPoints), r));
      }
      if (nearOutside.length) {
        const p = pickFrom(nearOutside);
        const d = disc(w, h, p % w, Math.floor(p / w), r, (i) => subject[i] === 0);
        const damaged = Uint8Array.from(truth);
        for (const i of d.pixels) damaged[i] = 255;
        await claim('background-kept', 'true', damaged, d.box);
      }
      if (farOutside.length) {
        const p = pickFrom(farOutside);
        const d = disc(w, h, p % w, Math.floor(p / w), r, () => true);
        const damaged = Uint8Array.from(truth);
        for (const i of d.pixels) damaged[i] = 255;
        await claim('extra-object', 'true', damaged, d.box);
      }
    }
  }
  return outcomes;
}

/** The light tier's own mistakes against the truth, each reported with the reason it is. */
async function realErrors(c: Cutout): Promise<Outcome[]> {
  const { width: w, height: h } = c.entry;
  const n = w * h;
  const kept = new Uint8Array(n);
  const lost = new Uint8Array(n);
  const opaque = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    opaque[i] = c.alpha[i] >= 128 ? 1 : 0;
    if (opaque[i] && c.truth[i] < 128) kept[i] = 1;
    if (!opaque[i] && c.truth[i] >= 128) lost[i] = 1;
  }
  const parts = components(opaque, w, h);
  let main = 0;
  for (let k = 1; k < parts.sizes.length; k++) if (!main || parts.sizes[k] > parts.sizes[main]) main = k;
  const gaps = components(
    Uint8Array.from(opaque, (v) => 1 - v),
    w,
    h,
  );
  const out: Outcome[] = [];
  for (const [set, kind] of [
    [kept, 'kept'],
    [lost, 'lost'],
  ] as const) {
    const errs = components(set, w, h);
    for (let k = 1; k < errs.sizes.length; k++) {
      if (errs.sizes[k] < 0.005 * n) continue;
      let anyPixel = -1;
      for (let i = 0; i < n && anyPixel < 0; i++) if (errs.label[i] === k) anyPixel = i;
      let reason: ClaimReason;
      if (kind === 'kept') reason = parts.label[anyPixel] === main ? 'background-kept' : 'extra-object';
      else reason = gaps.touchesBorder[gaps.label[anyPixel]] ? 'missing-part' : 'hole';
      const verdict = await judge(c.rgb, c.alpha, w, h, reason, errs.boxes[k]!);
      out.push(outcome({ reason, kind: 'real', photo: c.entry.id }, verdict));
    }
  }
  return out;
}

export function printClaims(outcomes: Outcome[], title: string): void {
  console.log(`\n## reports (pixel check): ${title} (targets: true accepted >= 90%, false rejected >= 95%)`);
  console.log('reason            true accepted      false rejected     real model errors accepted');
  const reasons = [...new Set(outcomes.map((o) => o.reason))].sort();
  const line = (name: string, os: Outcome[]) => {
    const t = os.filter((o) => o.kind === 'true');
    const f = os.filter((o) => o.kind === 'false');
    const real = os.filter((o) => o.kind === 'real');
    const ta = t.filter((o) => o.accepted).length;
    const fr = f.filter((o) => !o.accepted).length;
    const ra = real.filter((o) => o.accepted).length;
    console.log(
      `${name.padEnd(17)} ${`${ta}/${t.length}`.padStart(7)} ${pct(ta, t.length).padStart(5)}      ${`${fr}/${f.length}`.padStart(7)} ${pct(fr, f.length).padStart(5)}     ${`${ra}/${real.length}`.padStart(7)} ${pct(ra, real.length).padStart(5)}`,
    );
  };
  for (const reason of reasons)
    line(
      reason,
      outcomes.filter((o) => o.reason === reason),
    );
  line('all', outcomes);
}
