// The automatic check's decisions on real photos with masks damaged on purpose: the ground truth of an
// eval photo stands in for the model's mask (a clean result, never red), and the same mask with a known
// fault (the whole frame kept, a second object kept apart, nothing kept) gets the check's answer for
// that fault. The calibrated score's own decisions on subtler damage (a part cut away, background kept
// beside the subject) are measured by npm run calibrate -- figures (docs/check.md). The model plays no part,
// so a better model cannot break these tests; the real model's agreement with ground truth is tested in
// test/e2e/check-agreement.test.ts.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { CheckRasters } from '../../../src/adapters/images/rasters.ts';
import { diagnose } from '../../../src/pipeline/diagnose.ts';
import { CHECK_GRID } from '../../../src/pipeline/check/features.ts';
import { maskStatistics } from '../../../src/imaging/model-io.mjs';
import { evalEntries, evalFile, HAVE_EVAL_DATA, type EvalEntry } from '../../../tools/shared-data.ts';

const N = 1024;
const rasters = new CheckRasters(100_000_000);

/** The photo as the model sees it (1024² RGB) and its ground-truth mask at the same size. */
async function photoAndTruth(entry: EvalEntry) {
  const rgb = await sharp(evalFile(entry.image))
    .removeAlpha()
    .resize(N, N, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer();
  const mask = await sharp(evalFile(entry.mask)).extractChannel(0).resize(N, N, { fit: 'fill' }).raw().toBuffer();
  return { rgb, mask };
}

async function judge(rgb: Buffer, mask: Buffer) {
  const prediction = { mask, ...maskStatistics(mask, N) };
  return diagnose(prediction, await rasters.checkGrid(mask, rgb, N, CHECK_GRID), N, { width: N, height: N });
}

/**
 * A second object in the photo, a dark red block an eighth of the frame on a side in the corner farthest
 * from the subject, and kept in the mask apart from the subject.
 */
function withSecondObject(rgb: Buffer, mask: Buffer): { rgb: Buffer; mask: Buffer } {
  const photo = Buffer.from(rgb);
  const out = Buffer.from(mask);
  // A corner whose block, with a 32 px margin, holds none of the subject.
  const free = (x0: number, y0: number) => {
    for (let y = Math.max(0, y0 - 32); y < Math.min(N, y0 + 160); y++)
      for (let x = Math.max(0, x0 - 32); x < Math.min(N, x0 + 160); x++) if (mask[y * N + x] >= 128) return false;
    return true;
  };
  const corner = [
    [16, 16],
    [N - 144, 16],
    [16, N - 144],
    [N - 144, N - 144],
  ].find(([x, y]) => free(x, y));
  if (!corner) throw new Error('no free corner for a second object');
  const [cx, cy] = corner;
  for (let y = cy; y < cy + 128; y++) {
    out.fill(255, y * N + cx, y * N + cx + 128);
    for (let x = cx; x < cx + 128; x++) photo.set([140, 20, 30], (y * N + x) * 3);
  }
  return { rgb: photo, mask: out };
}

// Products with room beside them and a subject that is not already most of the frame.
const picked = () =>
  evalEntries()
    .filter((e) => e.kind === 'product' && e.mask_type === 'binary')
    .slice(0, 6);

describe.skipIf(!HAVE_EVAL_DATA)('the check on masks damaged on purpose', () => {
  it('passes the ground truth itself: a clean cut-out is never red', async () => {
    for (const entry of picked()) {
      const { rgb, mask } = await photoAndTruth(entry);
      const d = await judge(rgb, mask);
      expect(d.red, `${entry.id}: score ${d.quality.score}`).toBe(false);
    }
  });

  it('judges a cut-out that keeps the whole frame broken, with background-kept at full severity', async () => {
    for (const entry of picked()) {
      const { rgb } = await photoAndTruth(entry);
      const d = await judge(rgb, Buffer.alloc(N * N, 255));
      expect(d.red, entry.id).toBe(true);
      expect(d.quality.flags.find((f) => f.code === 'background-kept')?.severity).toBe(1);
    }
  });

  it('flags a second object kept apart from the subject (multiple-objects, with its box)', async () => {
    for (const entry of picked()) {
      const { rgb, mask } = await photoAndTruth(entry);
      const two = withSecondObject(rgb, mask);
      const d = await judge(two.rgb, two.mask);
      const flag = d.quality.flags.find((f) => f.code === 'multiple-objects');
      expect(flag, `${entry.id}: ${JSON.stringify(d.quality.flags.map((f) => f.code))}`).toBeDefined();
      expect(flag!.bbox).not.toBeNull();
    }
  });

  it('finds no subject in an empty mask (NO_SUBJECT: the photo fails, uncharged)', async () => {
    const { rgb } = await photoAndTruth(picked()[0]);
    await expect(judge(rgb, Buffer.alloc(N * N))).rejects.toMatchObject({ code: 'NO_SUBJECT' });
  });
});
