// A drawn photo for the edge refinement and the cut-out writer: a dark red product (x < 60) on a light
// green background, its true alpha a step at x = 60, and the blurred mask a 1024 px mask scaled up gives.
export const W = 120;
export const H = 80;
export function scene() {
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
export const mae = (a: Uint8Array, b: Uint8Array) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length / 255;
