// Fitting and judging the automatic check out of sample. A result is broken when its IoU against
// ground truth is below 0.85 and clean when it is at least 0.95 (between the two it is neither, and
// counts in no figure). Every photo gives two results (light and heavy tier); they are left out
// together, so a photo's heavy result never helps to judge its light one.
import {
  brokenProbability,
  chooseThreshold,
  fitLogistic,
  MODEL_FEATURES,
  type Calibration,
} from '../src/pipeline/check/calibration.ts';
import { TRUTH_BARS } from '../src/pipeline/check/calibration.ts';

export const { brokenBelow: BROKEN_BELOW, goodFrom: CLEAN_FROM } = TRUTH_BARS;

export interface Sample {
  photo: string;
  folder: string;
  tier: string;
  iou: number;
  x: number[];
}

export function fit(train: Sample[]): Calibration {
  const model = fitLogistic(
    train.map((s) => s.x),
    train.map((s) => s.iou < BROKEN_BELOW),
  );
  const cal: Calibration = { features: MODEL_FEATURES, ...model, threshold: 1 };
  cal.threshold = chooseThreshold(
    train.map((s) => brokenProbability(cal, s.x)),
    train.map((s) => s.iou >= CLEAN_FROM),
  );
  return cal;
}

/** Each sample judged by a check fitted without its photo. */
export function leaveOnePhotoOut(samples: Sample[]): boolean[] {
  const flagged = new Array<boolean>(samples.length).fill(false);
  for (const photo of new Set(samples.map((s) => s.photo))) {
    const cal = fit(samples.filter((s) => s.photo !== photo));
    samples.forEach((s, i) => {
      if (s.photo === photo) flagged[i] = brokenProbability(cal, s.x) >= cal.threshold;
    });
  }
  return flagged;
}

/** Each sample judged by a check fitted on the other folders only. */
export function heldBackFolders(samples: Sample[]): boolean[] {
  const flagged = new Array<boolean>(samples.length).fill(false);
  for (const folder of new Set(samples.map((s) => s.folder))) {
    const train = samples.filter((s) => s.folder !== folder);
    if (!train.some((s) => s.iou < BROKEN_BELOW)) continue;
    const cal = fit(train);
    samples.forEach((s, i) => {
      if (s.folder === folder) flagged[i] = brokenProbability(cal, s.x) >= cal.threshold;
    });
  }
  return flagged;
}

export interface Tally {
  broken: number;
  brokenFlagged: number;
  clean: number;
  cleanFlagged: number;
  missed: string[];
  falseAlarms: string[];
}

export function tally(samples: Sample[], flagged: boolean[], pick: (s: Sample) => boolean = () => true): Tally {
  const t: Tally = { broken: 0, brokenFlagged: 0, clean: 0, cleanFlagged: 0, missed: [], falseAlarms: [] };
  samples.forEach((s, i) => {
    if (!pick(s)) return;
    if (s.iou < BROKEN_BELOW) {
      t.broken++;
      if (flagged[i]) t.brokenFlagged++;
      else t.missed.push(`${s.photo}/${s.tier}`);
    } else if (s.iou >= CLEAN_FROM) {
      t.clean++;
      if (flagged[i]) {
        t.cleanFlagged++;
        t.falseAlarms.push(`${s.photo}/${s.tier}`);
      }
    }
  });
  return t;
}
