// The calibration set (issue 23): every subject of ../shared/eval-data cut out by its ground-truth alpha and
// laid over backgrounds that look like what sellers send (studio white and off-white, greys, gradients,
// coloured sweeps, textures, other photos' backgrounds; with shadows and noise), at several sizes and
// positions, as JPEG; each eval photo as it is; and harder composites (the subject over its own colours, and
// small in the frame). The service's light model runs on each composite (the int8 model, or the float one
// with MATTE_MODEL_INT8=0), and each result is scored against the alpha that made it. Reproducible: a fixed
// seed, and the same eval data give the same composites. Nothing large is committed: the composites' masks
// and figures go to .bench/calibration/<the model's pass>/ (CALIBRATION_DIR), and a second run reuses them.
//
//   node --import tsx tools/calibration/calibration-set.ts      (npm run calibrate -- write runs it first)
// CALIBRATION_PER_SUBJECT (default 6) composites per eval subject.
import fs from 'node:fs';
import path from 'node:path';
import sharp, { type Region } from 'sharp';
import { MODEL_INPUT_SIZE } from '../../src/adapters/mask-model.adapter.ts';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { CheckRasters } from '../../src/adapters/images/rasters.ts';
import { maskStatistics } from '../../src/imaging/model-io.mjs';
import { servicePass, serviceMasks } from './real-photos.ts';
import { CHECK_GRID, measure, type CheckFeatures } from '../../src/pipeline/check/features.ts';
import { subjectFillOf } from '../../src/pipeline/diagnose.ts';
import { compareAlpha, evalEntries, evalFile, HAVE_EVAL_DATA, type EvalEntry } from '../shared-data.ts';
import { TRUTH_BARS } from '../../src/pipeline/check/calibration.ts';

export const CALIBRATION_DIR =
  process.env.CALIBRATION_DIR ?? path.join(import.meta.dirname, '..', '..', '.bench', 'calibration', servicePass());
const PER_SUBJECT = Number(process.env.CALIBRATION_PER_SUBJECT ?? 6);
const SEED = 20261126;

/** The backgrounds composites are laid on. */
const COMPOSITE_FAMILIES = ['white', 'off-white', 'grey', 'gradient', 'colour sweep', 'texture', 'photo'] as const;
/**
 * The harder composites, made after the others from a second seed: the subject over a background in its own
 * colours (low contrast), and the subject small in the frame (12-30%) over any of the families above.
 */
const HARD_FAMILIES = ['own colours', 'small'] as const;
/** Every family of the set: the composites', the eval photos as they are, and the harder composites. */
export const FAMILIES = [...COMPOSITE_FAMILIES, 'original', ...HARD_FAMILIES] as const;
export type Family = (typeof FAMILIES)[number];

export interface ResultFigures {
  iou: number;
  mae: number;
  features: CheckFeatures;
  subjectFill: number;
}

export interface Composite {
  id: string;
  /** The eval subject it was made from: the unit of grouping (all its composites share a fold). */
  group: string;
  kind: string;
  source: string;
  family: Family;
  shadow: boolean;
  noise: number;
  /** The side of the frame that cuts the subject, if one does. */
  cut: string | null;
  width: number;
  height: number;
  light: ResultFigures;
}

/** Folds of the grouped cross-validation (tools/calibration/calibrate.ts, tools/calibration/claims-calibration.ts). */
export const FOLDS = 5;

/** A fold for each subject, the same on every run: subjects sorted by a hash of their id, dealt round-robin. */
export function foldOf(groups: string[]): Map<string, number> {
  const hash = (s: string) => [...s].reduce((h, ch) => (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0, 7);
  return new Map(
    [...new Set(groups)].sort((a, b) => hash(a) - hash(b) || a.localeCompare(b)).map((g, i) => [g, i % FOLDS]),
  );
}

/** mulberry32: a small seeded generator, so the set is the same on every machine. */
export function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (lo: number, hi: number) => lo + (hi - lo) * next(),
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)],
  };
}
type Rng = ReturnType<typeof generator>;

/** A background of `family`, width x height, RGB. */
async function background(
  family: (typeof COMPOSITE_FAMILIES)[number],
  width: number,
  height: number,
  rng: Rng,
  others: EvalEntry[],
): Promise<Buffer> {
  const rgb = Buffer.alloc(width * height * 3);
  const fill = (f: (x: number, y: number) => [number, number, number]) => {
    for (let y = 0, i = 0; y < height; y++) for (let x = 0; x < width; x++, i += 3) rgb.set(f(x, y), i);
  };
  switch (family) {
    case 'white': {
      const v = Math.round(rng.between(248, 255));
      rgb.fill(v);
      return rgb;
    }
    case 'off-white': {
      const base = rng.between(226, 246);
      const warm = rng.between(-6, 8);
      const c: [number, number, number] = [base + warm, base, base - warm].map((v) => Math.round(Math.min(255, v))) as [
        number,
        number,
        number,
      ];
      fill(() => c);
      return rgb;
    }
    case 'grey': {
      const v = Math.round(rng.between(90, 215));
      rgb.fill(v);
      return rgb;
    }
    case 'gradient': {
      const a = [rng.between(60, 255), rng.between(60, 255), rng.between(60, 255)];
      const b = [rng.between(60, 255), rng.between(60, 255), rng.between(60, 255)];
      fill((_, y) => a.map((v, k) => Math.round(v + ((b[k] - v) * y) / height)) as [number, number, number]);
      return rgb;
    }
    case 'colour sweep': {
      // A saturated paper sweep: one hue, lighter in the middle, darker at the edges.
      const hue = [rng.between(0, 255), rng.between(0, 255), rng.between(0, 255)];
      const max = Math.max(...hue);
      const c = hue.map((v) => (v / max) * rng.between(170, 240));
      fill((x, y) => {
        const d = Math.hypot(x / width - 0.5, y / height - 0.55);
        return c.map((v) => Math.round(Math.max(0, v * (1.1 - d * 0.8)))) as [number, number, number];
      });
      return rgb;
    }
    case 'texture': {
      // Wood, fabric or concrete: stripes or blotches, blurred a little.
      const base = [rng.between(90, 220), rng.between(80, 200), rng.between(60, 190)];
      const period = rng.between(6, 40);
      const stripes = rng.next() < 0.5;
      fill((x, y) => {
        const n = stripes
          ? Math.sin((x + 7 * Math.sin(y / 23)) / period)
          : Math.sin(x / period) * Math.sin(y / (period * 1.3));
        return base.map((v) => Math.round(Math.max(0, Math.min(255, v + n * 28 + (rng.next() - 0.5) * 30)))) as [
          number,
          number,
          number,
        ];
      });
      return sharp(rgb, { raw: { width, height, channels: 3 } })
        .blur(1.2)
        .raw()
        .toBuffer();
    }
    case 'photo': {
      // Another eval photo's background: the largest part of its scene that holds none of its subject, scaled to
      // the frame (a real scene behind the product, with no second product in it).
      const other = rng.pick(others);
      const box = await sceneBox(other);
      const img = sharp(evalFile(other.image)).removeAlpha().extract(box).resize(width, height, { fit: 'cover' });
      const sigma = rng.between(0, 4);
      return (sigma > 0.3 ? img.blur(sigma) : img).raw().toBuffer();
    }
  }
}

/**
 * A background in the subject's own colours: a gradient between two colours of its opaque pixels, with a
 * blotchy texture, so the subject stands out from it by little more than its shape and shading.
 */
async function ownColours(fg: Buffer, alpha: Buffer, width: number, height: number, rng: Rng): Promise<Buffer> {
  const opaque: number[] = [];
  for (let i = 0; i < alpha.length; i++) if (alpha[i] > 200) opaque.push(i);
  const colour = () => {
    const i = opaque.length ? opaque[Math.floor(rng.next() * opaque.length)] : 0;
    return [fg[i * 3], fg[i * 3 + 1], fg[i * 3 + 2]];
  };
  const a = colour();
  const b = colour();
  const period = rng.between(20, 80);
  const rgb = Buffer.alloc(width * height * 3);
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i += 3) {
      const t = (x + y) / (width + height);
      const n = Math.sin(x / period) * Math.sin(y / (period * 1.4)) * 12;
      for (let c = 0; c < 3; c++) rgb[i + c] = Math.max(0, Math.min(255, Math.round(a[c] + (b[c] - a[c]) * t + n)));
    }
  }
  return sharp(rgb, { raw: { width, height, channels: 3 } })
    .blur(2)
    .raw()
    .toBuffer();
}

/** The largest box of `entry`'s photo clear of its subject (on a 96² grid, three cells clear of any cell the subject touches), in pixels. */
async function sceneBox(entry: EvalEntry): Promise<Region> {
  const grid = 96;
  const { data, info } = await sharp(evalFile(entry.mask))
    .extractChannel(0)
    .resize(grid, grid, { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const touched = (x: number, y: number) => data[(y * info.width + x) * info.channels] >= 2;
  // A cell is clear when no cell within three of it holds any of the subject.
  const blocked = new Uint8Array(grid * grid);
  for (let y = 0; y < grid; y++)
    for (let x = 0; x < grid; x++)
      if (touched(x, y))
        for (let v = Math.max(0, y - 3); v <= Math.min(grid - 1, y + 3); v++)
          for (let u = Math.max(0, x - 3); u <= Math.min(grid - 1, x + 3); u++) blocked[v * grid + u] = 1;
  const clear = (x: number, y: number) => !blocked[y * grid + x];
  // Largest rectangle of clear cells: a histogram of clear runs above each row, and a stack per row.
  const heights = new Array<number>(grid).fill(0);
  let best = { area: 0, left: 0, top: 0, width: grid, height: grid };
  for (let y = 0; y < grid; y++) {
    for (let x = 0; x < grid; x++) heights[x] = clear(x, y) ? heights[x] + 1 : 0;
    const stack: number[] = [];
    for (let x = 0; x <= grid; x++) {
      const h = x < grid ? heights[x] : 0;
      while (stack.length && heights[stack[stack.length - 1]] >= h) {
        const top = heights[stack.pop()!];
        const left = stack.length ? stack[stack.length - 1] + 1 : 0;
        const area = top * (x - left);
        if (area > best.area) best = { area, left, top: y - top + 1, width: x - left, height: top };
      }
      stack.push(x);
    }
  }
  if (best.area === 0) return { left: 0, top: 0, width: entry.width, height: entry.height };
  const sx = entry.width / grid;
  const sy = entry.height / grid;
  return {
    left: Math.floor(best.left * sx),
    top: Math.floor(best.top * sy),
    width: Math.max(1, Math.floor(best.width * sx)),
    height: Math.max(1, Math.floor(best.height * sy)),
  };
}

/** One composite: the subject (cropped to its box with a margin) scaled and placed over the background. */
export async function composite(
  entry: EvalEntry,
  index: number,
  rng: Rng,
  others: EvalEntry[],
  hard?: (typeof HARD_FAMILIES)[number],
) {
  const drawn =
    COMPOSITE_FAMILIES[(index + Math.floor(rng.next() * COMPOSITE_FAMILIES.length)) % COMPOSITE_FAMILIES.length];
  const family: Family = hard ?? drawn;
  const longEdge = Math.round(rng.between(800, 1400));
  const aspect = rng.pick([1, 1, 4 / 3, 3 / 4, 3 / 2]);
  const width = aspect >= 1 ? longEdge : Math.round(longEdge * aspect);
  const height = aspect >= 1 ? Math.round(longEdge / aspect) : longEdge;

  const truth = await sharp(evalFile(entry.mask)).extractChannel(0).raw().toBuffer();
  let x0 = entry.width,
    y0 = entry.height,
    x1 = -1,
    y1 = -1;
  for (let y = 0; y < entry.height; y++) {
    for (let x = 0; x < entry.width; x++) {
      if (truth[y * entry.width + x] >= 128) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  const margin = Math.round(0.04 * Math.max(x1 - x0, y1 - y0));
  const crop = { left: Math.max(0, x0 - margin), top: Math.max(0, y0 - margin) };
  const cw = Math.min(entry.width, x1 + margin + 1) - crop.left;
  const ch = Math.min(entry.height, y1 + margin + 1) - crop.top;
  // The subject's box fills 35-90% of the frame's shorter fit.
  const fillShare = hard === 'small' ? rng.between(0.12, 0.3) : rng.between(0.35, 0.9);
  const scale = Math.min((width * fillShare) / cw, (height * fillShare) / ch);
  const sw = Math.max(8, Math.round(cw * scale));
  const sh = Math.max(8, Math.round(ch * scale));
  let left = Math.round(rng.between(0, width - sw));
  let top = Math.round(rng.between(0, height - sh));
  // A third of the subjects are cut by the frame, as real products often are (a tall bottle, a sleeve, a
  // close-up): the frame crosses 8-30% of the subject on one side, so touching the frame is no giveaway.
  const cut = rng.next() < 1 / 3 ? rng.pick(['bottom', 'bottom', 'left', 'right', 'top'] as const) : undefined;
  const cutShare = rng.between(0.08, 0.3);
  if (cut === 'bottom') top = height - Math.round(sh * (1 - cutShare));
  if (cut === 'top') top = -Math.round(sh * cutShare);
  if (cut === 'left') left = -Math.round(sw * cutShare);
  if (cut === 'right') left = width - Math.round(sw * (1 - cutShare));
  const region = { left: crop.left, top: crop.top, width: cw, height: ch };
  const fg = await sharp(evalFile(entry.image))
    .removeAlpha()
    .extract(region)
    .resize(sw, sh, { fit: 'fill' })
    .raw()
    .toBuffer();
  const alpha = await sharp(truth, { raw: { width: entry.width, height: entry.height, channels: 1 } })
    .extract(region)
    .resize(sw, sh, { fit: 'fill' })
    .extractChannel(0)
    .raw()
    .toBuffer();

  const bg =
    hard === 'own colours'
      ? await ownColours(fg, alpha, width, height, rng)
      : await background(
          drawn,
          width,
          height,
          rng,
          others.filter((o) => o.id !== entry.id),
        );
  const shadow = rng.next() < 0.5;
  if (shadow) {
    // A soft contact shadow under the subject.
    const cx = left + sw / 2,
      cy = top + sh * 0.97,
      rx = sw * 0.55,
      ry = Math.max(6, sh * 0.08),
      depth = rng.between(0.12, 0.35);
    for (let y = Math.max(0, Math.floor(cy - 3 * ry)); y < Math.min(height, cy + 3 * ry); y++) {
      for (let x = Math.max(0, Math.floor(cx - 1.5 * rx)); x < Math.min(width, cx + 1.5 * rx); x++) {
        const d = ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2;
        const k = 1 - depth * Math.exp(-d);
        const i = (y * width + x) * 3;
        for (let c = 0; c < 3; c++) bg[i + c] = Math.round(bg[i + c] * k);
      }
    }
  }
  const known = Buffer.alloc(width * height);
  const photo = Buffer.from(bg);
  for (let y = Math.max(0, -top); y < Math.min(sh, height - top); y++) {
    for (let x = Math.max(0, -left); x < Math.min(sw, width - left); x++) {
      const a = alpha[y * sw + x] / 255;
      const o = ((top + y) * width + left + x) * 3;
      const s = (y * sw + x) * 3;
      for (let c = 0; c < 3; c++) photo[o + c] = Math.round(fg[s + c] * a + bg[o + c] * (1 - a));
      known[(top + y) * width + left + x] = alpha[y * sw + x];
    }
  }
  const noise = rng.next() < 0.5 ? rng.between(2, 7) : 0;
  if (noise)
    for (let i = 0; i < photo.length; i++)
      photo[i] = Math.max(
        0,
        Math.min(255, Math.round(photo[i] + (rng.next() + rng.next() + rng.next() - 1.5) * noise)),
      );
  const jpeg = await sharp(photo, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: Math.round(rng.between(82, 95)) })
    .toBuffer();
  return { jpeg, known, family, shadow, noise: Math.round(noise * 10) / 10, width, height, cut: cut ?? null };
}

/** The first `count` composites as JPEG files in `dir`, to look at (CALIBRATION_PREVIEW=dir). */
export async function previewComposites(dir: string, count: number) {
  const entries = evalEntries();
  const rng = generator(SEED);
  fs.mkdirSync(dir, { recursive: true });
  let made = 0;
  for (const entry of entries) {
    for (let k = 0; k < PER_SUBJECT && made < count; k++, made++) {
      const c = await composite(entry, k, rng, entries);
      fs.writeFileSync(
        path.join(dir, `${entry.id}.c${k}.${c.family.replace(' ', '-')}${c.cut ? `.cut-${c.cut}` : ''}.jpg`),
        c.jpeg,
      );
    }
  }
  const hardRng = generator(SEED + 1);
  for (const entry of entries.slice(0, Math.ceil(count / HARD_FAMILIES.length))) {
    for (const hard of HARD_FAMILIES) {
      const c = await composite(entry, 0, hardRng, entries, hard);
      fs.writeFileSync(path.join(dir, `${entry.id}.${hard.replace(' ', '-')}.jpg`), c.jpeg);
    }
  }
}

export async function buildCalibrationSet(
  log: (line: string) => void = console.log,
  opts: { cachedOnly?: boolean } = {},
): Promise<Composite[]> {
  if (!HAVE_EVAL_DATA) throw new Error('the calibration set is made from ../shared/eval-data; set MATTE_SHARED_DIR');
  fs.mkdirSync(CALIBRATION_DIR, { recursive: true });
  const entries = evalEntries();
  const decoder = new ImageDecoder(100_000_000);
  const rasters = new CheckRasters(100_000_000);
  // The service's light model, as the service runs it (its masks are kept in each composite's .bin).
  const model = serviceMasks(CALIBRATION_DIR);
  const set: Composite[] = [];
  const rng = generator(SEED);
  type Made = {
    jpeg: Buffer;
    known: Buffer;
    family: Family;
    shadow: boolean;
    noise: number;
    cut: string | null;
    width: number;
    height: number;
  };
  const score = async (entry: EvalEntry, id: string, made: Made, record: string) => {
    const decoded = await decoder.decode(made.jpeg);
    const input = (await decoder.toModelInput(decoded, MODEL_INPUT_SIZE)).rgb;
    const light = await model.run(input);
    const figures = async (mask: Buffer): Promise<ResultFigures> => {
      const alpha = await rasters.maskToSize(mask, MODEL_INPUT_SIZE, decoded);
      const { iou, mae } = compareAlpha(alpha, made.known);
      const subjectFill = subjectFillOf(maskStatistics(mask, MODEL_INPUT_SIZE).histogram);
      const evidence = measure(await rasters.checkGrid(mask, input, MODEL_INPUT_SIZE, CHECK_GRID));
      return { iou, mae, features: evidence.features, subjectFill };
    };
    const c: Composite = {
      id,
      group: entry.id,
      kind: entry.kind,
      source: entry.source,
      family: made.family,
      shadow: made.shadow,
      noise: made.noise,
      cut: made.cut,
      width: made.width,
      height: made.height,
      light: await figures(light),
    };
    // What the fitting reads again: the model's input, its mask and the truth, 1024² each.
    const knownSquare = await sharp(made.known, { raw: { width: made.width, height: made.height, channels: 1 } })
      .resize(MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, { fit: 'fill' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    fs.writeFileSync(path.join(CALIBRATION_DIR, `${id}.bin`), Buffer.concat([input, light, knownSquare]));
    fs.writeFileSync(record, JSON.stringify(c));
    set.push(c);
    log(`${id.padEnd(30)} ${c.family.padEnd(13)} light IoU ${c.light.iou.toFixed(3)}`);
  };
  for (const entry of entries) {
    for (let k = 0; k < PER_SUBJECT; k++) {
      const id = `${entry.id}.c${k}`;
      // Every composite draws from the generator whether or not it is cached, so the set stays the same.
      const made = await composite(entry, k, rng, entries);
      const record = path.join(CALIBRATION_DIR, `${id}.json`);
      if (fs.existsSync(record)) set.push(JSON.parse(fs.readFileSync(record, 'utf8')) as Composite);
      else if (!opts.cachedOnly) await score(entry, id, made, record);
    }
  }
  // And each eval photo as it is (family "original"): real framing, real backgrounds, subjects cut by the
  // frame, which the composites do not have.
  for (const entry of entries) {
    const id = `${entry.id}.original`;
    const record = path.join(CALIBRATION_DIR, `${id}.json`);
    if (fs.existsSync(record)) {
      set.push(JSON.parse(fs.readFileSync(record, 'utf8')) as Composite);
      continue;
    }
    if (opts.cachedOnly) continue;
    const known = await sharp(evalFile(entry.mask)).extractChannel(0).raw().toBuffer();
    const made: Made = {
      jpeg: evalFile(entry.image),
      known,
      family: 'original',
      shadow: false,
      noise: 0,
      cut: null,
      width: entry.width,
      height: entry.height,
    };
    await score(entry, id, made, record);
  }
  // The harder composites, from a second seed so the ones above stay as they were.
  const hardRng = generator(SEED + 1);
  for (const entry of entries) {
    for (const hard of HARD_FAMILIES) {
      const id = `${entry.id}.${hard.replace(' ', '-')}`;
      const made = await composite(entry, 0, hardRng, entries, hard);
      const record = path.join(CALIBRATION_DIR, `${id}.json`);
      if (fs.existsSync(record)) set.push(JSON.parse(fs.readFileSync(record, 'utf8')) as Composite);
      else if (!opts.cachedOnly) await score(entry, id, made, record);
    }
  }
  await model.close();
  return set;
}

/** The cached planes of a composite: model input (RGB), the light mask and the truth, all 1024². */
export function readPlanes(id: string) {
  const all = fs.readFileSync(path.join(CALIBRATION_DIR, `${id}.bin`));
  const n = MODEL_INPUT_SIZE * MODEL_INPUT_SIZE;
  let at = 0;
  const take = (bytes: number) => all.subarray(at, (at += bytes));
  return {
    input: take(3 * n),
    light: take(n),
    truth: take(n),
  };
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.CALIBRATION_PREVIEW) {
  await previewComposites(process.env.CALIBRATION_PREVIEW, 24);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const set = await buildCalibrationSet();
  const broken = set.filter((c) => c.light.iou < TRUTH_BARS.brokenBelow).length;
  const clean = set.filter((c) => c.light.iou >= TRUTH_BARS.goodFrom).length;
  console.log(
    `${set.length} composites of ${new Set(set.map((c) => c.group)).size} subjects: light results ${broken} broken (IoU < ${TRUTH_BARS.brokenBelow}), ${clean} clean (>= ${TRUTH_BARS.goodFrom})`,
  );
}
