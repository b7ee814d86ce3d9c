// Edge refinement on a drawn photo: a blurred mask snaps towards the photo's real edge, and edge
// colours lose the old background's tint. Also through the worker thread the service uses.
import { describe, expect, it } from 'vitest';
import { refineEdges, refineGrid } from '../../src/adapters/edge-refine.mjs';
import { WorkerEdgeRefiner } from '../../src/adapters/edge-refiner.adapter.ts';

const W = 120;
const H = 80;
/** A dark red product (x < 60) on a light green background; the true alpha is a step at x = 60. */
function scene() {
  const rgb = new Uint8Array(W * H * 3);
  const truth = new Uint8Array(W * H);
  const blurred = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const inside = x < 60;
      rgb.set(inside ? [150, 20, 20] : [180, 230, 180], i * 3);
      truth[i] = inside ? 255 : 0;
      // An upsampled mask: a ramp 8 px wide around the edge, as a 1024 px mask scaled up gives.
      blurred[i] = Math.round(Math.min(1, Math.max(0, (64 - x) / 8)) * 255);
    }
  }
  // An edge pixel that mixes product and background half and half.
  for (let y = 0; y < H; y++) rgb.set([165, 125, 100], (y * W + 60) * 3);
  return { rgb, truth, blurred };
}
const mae = (a: Uint8Array, b: Uint8Array) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length / 255;

describe('edge refinement', () => {
  it('brings a blurred mask closer to the true edge, and leaves certain pixels alone', () => {
    const { rgb, truth, blurred } = scene();
    const { alpha } = refineEdges({ rgb, alpha: blurred, width: W, height: H });
    expect(mae(alpha, truth)).toBeLessThan(mae(blurred, truth) * 0.7);
    expect(alpha[10 * W + 5]).toBe(255);
    expect(alpha[10 * W + 110]).toBe(0);
  });

  it('works from the reduced inputs alone (the service\'s way): no upsampled mask needed', () => {
    const { rgb, truth, blurred } = scene();
    const grid = refineGrid(W, H, 60);
    const f = W / grid.w;
    const low = { rgb: new Uint8Array(grid.w * grid.h * 3), alpha: new Uint8Array(grid.w * grid.h) };
    for (let y = 0; y < grid.h; y++) {
      for (let x = 0; x < grid.w; x++) {
        const i = Math.floor(y * f) * W + Math.floor(x * f);
        low.rgb.set(rgb.subarray(i * 3, i * 3 + 3), (y * grid.w + x) * 3);
        low.alpha[y * grid.w + x] = blurred[i];
      }
    }
    const { alpha } = refineEdges({ rgb, alpha: null, width: W, height: H }, { grid: 60, low });
    expect(mae(alpha, truth)).toBeLessThan(mae(blurred, truth));
    expect(alpha[10 * W + 5]).toBe(255);
    expect(alpha[10 * W + 115]).toBe(0);
    expect(() => refineEdges({ rgb, alpha: null, width: W, height: H })).toThrow(/needs/);
  });

  it('decontaminates a semi-transparent edge pixel towards the product colour', () => {
    const { rgb, blurred } = scene();
    const half = new Uint8Array(blurred);
    for (let y = 0; y < H; y++) half[y * W + 60] = 128;
    const out = refineEdges({ rgb, alpha: half, width: W, height: H }, { guided: false, steepen: 1 });
    const i = (10 * W + 60) * 3;
    // The mixed pixel (165,125,100) minus half the green background is close to the red product.
    expect(out.rgb[i + 1]).toBeLessThan(60);
    expect(out.rgb[i]).toBeGreaterThan(130);
    // Opaque pixels keep their colours.
    expect([...out.rgb.subarray((10 * W + 5) * 3, (10 * W + 5) * 3 + 3)]).toEqual([150, 20, 20]);
  });

  it('runs in its worker thread and gives the same answer', async () => {
    const { rgb, blurred } = scene();
    const refiner = new WorkerEdgeRefiner();
    try {
      const viaWorker = await refiner.refine(Buffer.from(rgb), Buffer.from(blurred), W, H);
      const direct = refineEdges({ rgb, alpha: blurred, width: W, height: H });
      expect(viaWorker.alpha.equals(Buffer.from(direct.alpha))).toBe(true);
      expect(viaWorker.rgb.equals(Buffer.from(direct.rgb))).toBe(true);
      // The caller's buffers are untouched (copies were sent).
      expect(blurred[10 * W + 62]).toBe(Math.round((2 / 8) * 255));
    } finally {
      await refiner.close();
    }
  });
});
