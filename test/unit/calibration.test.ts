// The check's calibration file names the features its model reads (calibration.ts FEATURES): the vector
// follows those names in order, and a file naming a feature this code does not make is refused at load.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { featureVector, loadCalibration, MODEL_FEATURES } from '../../src/pipeline/check/calibration.ts';
import type { CheckFeatures } from '../../src/pipeline/check/features.ts';

const f: CheckFeatures = {
  fill: 0.2,
  soft: 0.05,
  fragmented: 0.1,
  missing: 0.3,
  backgroundKept: 0.02,
  holes: 0,
  spill: 0.4,
  halo: 0.7,
  edgesTouched: 2,
  uncertain: 0.12,
  uncertainPart: 0.08,
  uncertainJoined: 0.1,
  weakEdges: 0.03,
};

describe('calibration features', () => {
  it('makes the values a calibration names, in its order', () => {
    expect(featureVector(f, ['edgesTouched', 'missing', 'log halo'])).toEqual([2, 0.3, Math.log(0.71)]);
    expect(featureVector(f, ['log uncertain', 'weakEdges'])).toEqual([Math.log(0.13), 0.03]);
    expect(featureVector(f, ['log uncertainPart'])).toEqual([Math.log(0.09)]);
    expect(featureVector(f, ['log uncertainJoined'])).toEqual([Math.log(0.11)]);
    expect(featureVector(f)).toEqual(featureVector(f, MODEL_FEATURES));
    expect(featureVector(f)).toEqual([Math.log(0.06), 0.1, 0.3, 0.02]);
  });

  it('refuses a calibration that reads a feature this code does not make', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'matte-cal-')), 'cal.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        features: ['missing', 'sharpness'],
        mean: [0, 0],
        scale: [1, 1],
        weights: [1, 1],
        bias: 0,
        threshold: 0.5,
      }),
    );
    expect(() => loadCalibration(file)).toThrow(/sharpness/);
    expect(loadCalibration().features.length).toBeGreaterThan(0);
  });
});
