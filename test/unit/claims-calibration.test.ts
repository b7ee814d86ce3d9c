// The report calibration's claims on a made-up result: where the result is right, every false claim a seller
// could make there is in the set, and the shipped judge refuses them.
import { describe, expect, it } from 'vitest';
import { judgeClaim } from '../../src/pipeline/check/claim-check.ts';
import type { Composite } from '../../tools/calibration/calibration-set.ts';
import { compositeClaims, toClaimGrid } from '../../tools/calibration/claims-calibration.ts';

describe('the report calibration claims', () => {
  it('claims the background beside a right result as a missing part too, and the judge refuses it', () => {
    // The model's input size: the calibration's planes are 1024².
    const N = 1024;
    const input = new Uint8Array(N * N * 3).fill(235);
    const mask = new Uint8Array(N * N);
    // A dark box of a product in the middle, cut exactly as drawn.
    for (let y = 300; y < 700; y++)
      for (let x = 350; x < 650; x++) {
        mask[y * N + x] = 255;
        input.set([60, 40, 120], (y * N + x) * 3);
      }
    const c = { id: 'made-up', group: 'made-up', source: 'made-up', family: 'white' } as unknown as Composite;
    const { img, claims } = compositeClaims(c, { input, light: mask, truth: mask });
    expect(claims.every((claim) => !claim.truth)).toBe(true);
    const background = claims.filter((claim) => claim.reason === 'extra-object');
    expect(background).toHaveLength(1);
    const asMissing = claims.filter(
      (claim) =>
        claim.reason === 'missing-part' && JSON.stringify(claim.region) === JSON.stringify(background[0].region),
    );
    expect(asMissing).toHaveLength(1);
    const verdict = judgeClaim(img, 'missing-part', toClaimGrid(asMissing[0].region));
    expect(verdict.accepted).toBe(false);
  });
});
