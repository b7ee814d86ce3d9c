// The cut-out passes in C give the JavaScript's bytes on real photos (test/unit/native-cutout.test.ts on
// generated ones): eval photos with their drawn masks, blurred as a model's mask is soft, at three sizes, bands
// cut anywhere. Every cut-out the e2e tests make through the API runs them. And the enlargement to the model's
// input in C (native/enlarge.c) gives sharp's bytes on every eval photo, as the decoder makes its input.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { refineGrid } from '../../src/imaging/edge-refine.mjs';
import { reduceArea } from '../../src/imaging/mask-reduce.mjs';
import { evalEntries, evalFile } from '../../tools/shared-data.ts';
import { expectSameCutout, same } from '../helpers/native-cutout.ts';

/** A photo and its drawn mask, as the writer gets them: RGB at `width` x `height`, the mask at the model's 1024². */
async function photo(index: number, width: number, height: number) {
  const entry = evalEntries().filter((e) => e.kind === 'product')[index];
  const rgb = await sharp(evalFile(entry.image)).resize(width, height, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  // Blurred, as a model's mask is soft at its edges: the refinement's band is then wide.
  const mask = await sharp(evalFile(entry.mask))
    .resize(1024, 1024, { fit: 'fill' })
    .extractChannel(0)
    .blur(3)
    .raw()
    .toBuffer();
  const g = refineGrid(width, height);
  const lowRgb = await sharp(rgb, { raw: { width, height, channels: 3 } })
    .resize(g.w, g.h, { fit: 'fill' })
    .raw()
    .toBuffer();
  return { rgb, mask, low: { rgb: lowRgb, alpha: reduceArea(mask, 1024, 1024, g.w, g.h) }, grid: g };
}

describe('the cut-out passes in C on real photos', () => {
  it.each([
    [0, 2000, 2000],
    [1, 1337, 1500],
    [2, 999, 731],
  ])("give the JavaScript's bytes on eval photo %i at %ix%i, in bands cut anywhere", async (i, width, height) => {
    expectSameCutout(await photo(i, width, height), width, height);
  });
});

describe('the enlargement to the model input in C on real photos', () => {
  it("gives sharp's bytes on every eval photo", async () => {
    const decoder = new ImageDecoder(100_000_000);
    let enlarged = 0;
    for (const entry of evalEntries()) {
      const decoded = await decoder.decode(evalFile(entry.image));
      const input = await decoder.toModelInput(decoded, 1024);
      const expected = await sharp(decoded.rgb, { raw: { width: decoded.width, height: decoded.height, channels: 3 } })
        .resize(1024, 1024, { fit: 'fill', kernel: 'lanczos3' })
        .raw()
        .toBuffer();
      expect(same(input.rgb, expected), entry.id).toBe(true);
      if (decoded.width < 1024 && decoded.height < 1024) enlarged++;
    }
    expect(enlarged).toBeGreaterThan(40);
  });
});
