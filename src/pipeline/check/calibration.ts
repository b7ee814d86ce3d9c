// The check's decision: a logistic model over a few measured features gives the probability that a
// cut-out is broken (below TRUTH_BARS.brokenBelow IoU against what a person would cut), and a threshold turns it into
// `review: red`. Both are fitted by `npm run calibrate -- write` (tools/calibration/calibrate.ts) on real photos with drawn masks
// (tools/calibration/real-photos.ts) and the composites made from ../shared/eval-data (tools/calibration/calibration-set.ts), the
// threshold and the feature set chosen on the real photos (docs/check.md), and stored in check-calibration.json;
// this module only applies them, and holds the fitting arithmetic so the command and its tests use the same code.
import fs from 'node:fs';
import type { CheckFeatures } from './features.ts';

/**
 * What the check is judged against, the one place these bars are written: a cut-out is broken below
 * `brokenBelow` IoU with the mask a person drew, good (clean) from `goodFrom`, neither in between. Every
 * calibration, bench and gate reads them from here.
 */
export const TRUTH_BARS = Object.freeze({ brokenBelow: 0.85, goodFrom: 0.95 });

/**
 * Every feature a calibration may read, by name, and how it is made from the check's measures: a
 * calibration file lists the ones its model reads, in order, so that a refit can choose another set
 * without a code change.
 */
export const FEATURES: Record<string, (f: CheckFeatures) => number> = {
  'log soft': (f) => Math.log(f.soft + 0.01),
  fragmented: (f) => f.fragmented,
  missing: (f) => f.missing,
  backgroundKept: (f) => f.backgroundKept,
  holes: (f) => f.holes,
  spill: (f) => f.spill,
  halo: (f) => f.halo,
  fill: (f) => f.fill,
  edgesTouched: (f) => f.edgesTouched,
  'log fragmented': (f) => Math.log(f.fragmented + 0.01),
  'log missing': (f) => Math.log(f.missing + 0.01),
  'log backgroundKept': (f) => Math.log(f.backgroundKept + 0.01),
  'log holes': (f) => Math.log(f.holes + 0.01),
  'log spill': (f) => Math.log(f.spill + 0.01),
  'log halo': (f) => Math.log(f.halo + 0.01),
  'log fill': (f) => Math.log(f.fill + 0.01),
  'log uncertain': (f) => Math.log(f.uncertain + 0.01),
  'log uncertainPart': (f) => Math.log(f.uncertainPart + 0.01),
  'log uncertainJoined': (f) => Math.log(f.uncertainJoined + 0.01),
  weakEdges: (f) => f.weakEdges,
};

/** The features of the first calibration (fitted on the 47 eval photos alone). */
export const MODEL_FEATURES = ['log soft', 'fragmented', 'missing', 'backgroundKept'] as const;

/** The values a calibration's model reads, in its order. */
export function featureVector(f: CheckFeatures, names: readonly string[] = MODEL_FEATURES): number[] {
  return names.map((name) => FEATURES[name](f));
}

export interface Calibration {
  features: readonly string[];
  mean: number[];
  scale: number[];
  weights: number[];
  bias: number;
  /** A probability at or above this is judged broken. */
  threshold: number;
  /** How it was fitted and what it scored out of sample (written by npm run calibrate -- write). */
  fitted?: Record<string, unknown>;
}

export const CALIBRATION_FILE = new URL('./check-calibration.json', import.meta.url);

export function loadCalibration(file: URL | string = CALIBRATION_FILE): Calibration {
  const cal = JSON.parse(fs.readFileSync(file, 'utf8')) as Calibration;
  const unknown = cal.features.filter((name) => !(name in FEATURES));
  if (unknown.length)
    throw new Error(
      `check-calibration.json reads features this code does not make (${unknown.join(', ')}); run npm run calibrate -- write`,
    );
  return cal;
}

export function brokenProbability(cal: Calibration, x: number[]): number {
  let z = cal.bias;
  for (let k = 0; k < x.length; k++) z += cal.weights[k] * ((x[k] - cal.mean[k]) / cal.scale[k]);
  return 1 / (1 + Math.exp(-z));
}

/** The score is 100 for certainly clean and 0 for certainly broken; below 50 exactly when p >= threshold. */
export function scoreFor(p: number, threshold: number): number {
  const s = p < threshold ? 50 + 50 * (1 - p / threshold) : 50 * ((1 - p) / (1 - threshold)) - 1e-9;
  return Math.max(0, Math.min(100, s));
}

/** L2-regularised logistic regression on standardised features, by plain gradient descent (deterministic). */
export function fitLogistic(
  xs: number[][],
  ys: boolean[],
  opts: { lambda?: number; steps?: number; rate?: number } = {},
): Omit<Calibration, 'threshold' | 'features'> {
  const { lambda = 0.1, steps = 3000, rate = 0.5 } = opts;
  const d = xs[0].length;
  const n = xs.length;
  const mean = Array.from({ length: d }, (_, k) => xs.reduce((s, x) => s + x[k], 0) / n);
  const scale = Array.from(
    { length: d },
    (_, k) => Math.sqrt(xs.reduce((s, x) => s + (x[k] - mean[k]) ** 2, 0) / n) + 1e-9,
  );
  const z = xs.map((x) => x.map((v, k) => (v - mean[k]) / scale[k]));
  const weights = new Array<number>(d).fill(0);
  let bias = 0;
  for (let step = 0; step < steps; step++) {
    const gw = new Array<number>(d).fill(0);
    let gb = 0;
    for (let i = 0; i < n; i++) {
      let s = bias;
      for (let k = 0; k < d; k++) s += weights[k] * z[i][k];
      const err = 1 / (1 + Math.exp(-s)) - (ys[i] ? 1 : 0);
      for (let k = 0; k < d; k++) gw[k] += err * z[i][k];
      gb += err;
    }
    for (let k = 0; k < d; k++) weights[k] -= rate * (gw[k] / n + lambda * weights[k]);
    bias -= rate * (gb / n);
  }
  return { mean, scale, weights, bias };
}

/**
 * The threshold: just above the highest probability any clean training result got (clean = IoU >= 0.95),
 * so the check refunds every result at least as doubtful as the worst-looking clean one it was shown.
 */
export function chooseThreshold(probabilities: number[], clean: boolean[]): number {
  let top = 0;
  probabilities.forEach((p, i) => {
    if (clean[i] && p > top) top = p;
  });
  return Math.min(0.99, top + 1e-6);
}
