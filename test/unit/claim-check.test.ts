// The report check on drawn cut-outs: each reason accepted where the fault is, rejected where it is not.
import { describe, expect, it } from 'vitest';
import { judgeClaim, type ClaimImage } from '../../src/pipeline/check/claim-check.ts';

const N = 200;
const BLUE = [30, 40, 140];
const WHITE = [250, 250, 250];

/** A white photo with a blue product (50..150 square), cut out exactly; `edit` changes pixels. */
function cutout(
  edit: (x: number, y: number, px: { rgb: number[]; alpha: number }) => void = () => undefined,
): ClaimImage {
  const rgba = new Uint8Array(N * N * 4);
  for (let y = 0; y < N; y++) {
    for (let x = 0; x < N; x++) {
      const inside = x >= 50 && x < 150 && y >= 50 && y < 150;
      const px = { rgb: inside ? [...BLUE] : [...WHITE], alpha: inside ? 255 : 0 };
      edit(x, y, px);
      rgba.set([...px.rgb, px.alpha], (y * N + x) * 4);
    }
  }
  return { width: N, height: N, rgba };
}
const within = (x: number, y: number, x0: number, y0: number, x1: number, y1: number) =>
  x >= x0 && x < x1 && y >= y0 && y < y1;

describe('the report check', () => {
  it('hole: a transparent patch of product colours inside the product, not a real gap showing the background', () => {
    const holed = cutout((x, y, px) => {
      if (within(x, y, 80, 80, 120, 120)) px.alpha = 0;
    });
    const v = judgeClaim(holed, 'hole', { x: 75, y: 75, width: 50, height: 50 });
    expect(v).toMatchObject({ accepted: true });
    expect(v.metrics.notBackgroundShare).toBeGreaterThan(0.9);
    expect(v.evidence).toMatch(/\d+% of the region is transparent/);
    expect(judgeClaim(cutout(), 'hole', { x: 75, y: 75, width: 50, height: 50 }).accepted).toBe(false);
    const realGap = cutout((x, y, px) => {
      if (within(x, y, 80, 80, 120, 120)) {
        px.alpha = 0;
        px.rgb = [...WHITE];
      }
    });
    expect(judgeClaim(realGap, 'hole', { x: 75, y: 75, width: 50, height: 50 }).accepted).toBe(false);
  });

  it('background-kept: kept pixels with the colours of the background beside them', () => {
    const kept = cutout((x, y, px) => {
      if (within(x, y, 150, 60, 185, 140)) px.alpha = 255;
    });
    expect(judgeClaim(kept, 'background-kept', { x: 150, y: 60, width: 35, height: 80 }).accepted).toBe(true);
    expect(judgeClaim(kept, 'background-kept', { x: 60, y: 60, width: 60, height: 60 }).accepted).toBe(false);
    expect(judgeClaim(cutout(), 'background-kept', { x: 160, y: 60, width: 30, height: 80 }).accepted).toBe(false);
  });

  it("background-kept: a seller's loose box is judged where the kept background is, in a window of it", () => {
    // A strip of backdrop kept beside the product; the box also holds much backdrop the cut-out has right.
    const kept = cutout((x, y, px) => {
      if (within(x, y, 150, 85, 165, 115)) px.alpha = 255;
    });
    const loose = { x: 140, y: 40, width: 60, height: 120 };
    const v = judgeClaim(kept, 'background-kept', loose);
    expect(v.accepted).toBe(true);
    expect(v.metrics.windowScale).toBeLessThan(1);
    expect(v.metrics.opaqueShare).toBeGreaterThanOrEqual(0.4);
    expect(v.evidence).toMatch(/window \d+% of its width and height/);
    // Over the whole box, a fifth is kept: the box alone would not pass.
    expect((10 * 100 + 15 * 30) / (60 * 120)).toBeLessThan(0.4);
    expect(judgeClaim(cutout(), 'background-kept', loose).accepted).toBe(false);
  });

  it('background-kept: the blend along a correct edge is no kept background; a band of backdrop kept is', () => {
    // The product's edge kept one or two pixels wide in colours near the backdrop's, as a correct cut's edge
    // blends the two: every such pixel lies at the cut.
    const blended = (width: number) =>
      cutout((x, y, px) => {
        if (within(x, y, 150, 50, 150 + width, 150)) {
          px.alpha = 255;
          px.rgb = [240, 240, 245];
        }
      });
    for (const width of [1, 2]) {
      const v = judgeClaim(blended(width), 'background-kept', { x: 140, y: 60, width: 24, height: 24 });
      expect(v.accepted).toBe(false);
      expect(v.metrics.backgroundLikeShare).toBeGreaterThan(0.02);
      expect(v.metrics.deepShare).toBe(0);
      expect(v.evidence).toMatch(/two pixels or more in from the cut/);
      expect(v.evidence).toMatch(/is the blend along the edge, not kept background\.$/);
    }
    // Three pixels and more: backdrop kept beyond the blend.
    const v = judgeClaim(blended(4), 'background-kept', { x: 140, y: 60, width: 24, height: 24 });
    expect(v.accepted).toBe(true);
    expect(v.metrics.deepShare).toBeGreaterThan(0.005);
    expect(v.evidence).toMatch(/: kept background, not only the blend along the edge\.$/);
  });

  it("background-kept: a part of the product in the backdrop's colours, kept all round, is no kept background", () => {
    // A white label in the middle of the blue product: the backdrop's colour, but surrounded by product.
    const label = cutout((x, y, px) => {
      if (within(x, y, 80, 80, 120, 120)) px.rgb = [...WHITE];
    });
    const v = judgeClaim(label, 'background-kept', { x: 75, y: 75, width: 50, height: 50 });
    expect(v.accepted).toBe(false);
    expect(v.metrics.backgroundLikeShare).toBe(0);
    // The same white kept where it joins the backdrop the cut-out dropped is kept background.
    const strip = cutout((x, y, px) => {
      if (within(x, y, 150, 80, 175, 120)) px.alpha = 255;
    });
    expect(judgeClaim(strip, 'background-kept', { x: 140, y: 75, width: 40, height: 50 }).accepted).toBe(true);
  });

  it('missing-part: a part in the background colours that the model half kept, not one it ruled out', () => {
    // The product's right end is white like the backdrop: colour alone cannot tell it was cut away.
    const part = (alpha: number) =>
      cutout((x, y, px) => {
        if (within(x, y, 150, 80, 180, 120)) {
          px.rgb = [...WHITE];
          px.alpha = alpha;
        }
      });
    const halfKept = judgeClaim(part(90), 'missing-part', { x: 150, y: 80, width: 30, height: 40 });
    expect(halfKept).toMatchObject({ accepted: true });
    expect(halfKept.metrics.doubtShare).toBeGreaterThan(0.9);
    expect(halfKept.evidence).toMatch(/half kept \d+%/);
    expect(judgeClaim(part(0), 'missing-part', { x: 150, y: 80, width: 30, height: 40 }).accepted).toBe(false);
    // Faint alpha (under 26) is no doubt: the edge refinement leaves such traces anywhere.
    expect(judgeClaim(part(12), 'missing-part', { x: 150, y: 80, width: 30, height: 40 }).accepted).toBe(false);
  });

  it('missing-part: cut-away pixels of product colours that join the product, not background beside it', () => {
    const cut = cutout((x, y, px) => {
      if (within(x, y, 120, 50, 150, 150)) px.alpha = 0;
    });
    expect(judgeClaim(cut, 'missing-part', { x: 118, y: 50, width: 34, height: 100 }).accepted).toBe(true);
    expect(judgeClaim(cutout(), 'missing-part', { x: 140, y: 60, width: 40, height: 80 }).accepted).toBe(false);
  });

  it('extra-object: kept pixels apart from the main product', () => {
    const extra = cutout((x, y, px) => {
      if (within(x, y, 165, 165, 190, 190)) {
        px.alpha = 255;
        px.rgb = [200, 30, 30];
      }
    });
    const v = judgeClaim(extra, 'extra-object', { x: 160, y: 160, width: 35, height: 35 });
    expect(v.accepted).toBe(true);
    expect(v.metrics.parts).toBe(2);
    expect(judgeClaim(extra, 'extra-object', { x: 60, y: 60, width: 60, height: 60 }).accepted).toBe(false);
  });

  it('extra-object: a few stray pixels kept apart are no object', () => {
    const specks = cutout((x, y, px) => {
      if ((x === 170 && y === 170) || (x === 180 && y === 175) || (x === 172 && y === 185)) {
        px.alpha = 255;
        px.rgb = [200, 30, 30];
      }
    });
    const v = judgeClaim(specks, 'extra-object', { x: 160, y: 160, width: 35, height: 35 });
    expect(v.metrics.apartPixels).toBe(3);
    expect(v.metrics.apartShare).toBe(1);
    expect(v.accepted).toBe(false);
    expect(v.evidence).toMatch(/too few to be an object/);
  });

  it('rough-edges: a ragged outline that cuts against the colours, not a clean one', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const rough = cutout((x, y, px) => {
      if (y >= 60 && y < 140 && Math.abs(x - 150) <= 3 && rand() < 0.5) px.alpha = px.alpha ? 0 : 255;
    });
    const v = judgeClaim(rough, 'rough-edges', { x: 135, y: 60, width: 30, height: 80 });
    expect(v.accepted).toBe(true);
    expect(v.metrics.raggedness).toBeGreaterThan(1.35);
    expect(judgeClaim(cutout(), 'rough-edges', { x: 135, y: 60, width: 30, height: 80 }).accepted).toBe(false);
  });

  it('clips a region that runs off the image and always answers a sentence with numbers', () => {
    for (const reason of ['background-kept', 'missing-part', 'hole', 'extra-object', 'rough-edges'] as const) {
      const v = judgeClaim(cutout(), reason, { x: 190, y: 190, width: 500, height: 500 });
      expect(v.accepted).toBe(false);
      expect(v.confidence).toBeGreaterThanOrEqual(0);
      expect(v.confidence).toBeLessThanOrEqual(1);
      expect(v.evidence).toMatch(/\d/);
    }
  });
});
