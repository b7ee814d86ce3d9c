// Measures of a cut-out's alpha against a mask, for the benches and the tests: distances within a mask, and how much
// of a subject's inside a cut-out leaves see-through.

/** Squared Euclidean distance from each pixel to the nearest pixel where `zero` is set (Felzenszwalb's two passes). */
export function squaredDistance(zero: Uint8Array, width: number, height: number): Float64Array {
  const INF = 1e20;
  const d = new Float64Array(width * height);
  for (let i = 0; i < d.length; i++) d[i] = zero[i] ? 0 : INF;
  const n = Math.max(width, height);
  const f = new Float64Array(n);
  const out = new Float64Array(n);
  const v = new Int32Array(n);
  const z = new Float64Array(n + 1);
  const line = (len: number) => {
    let k = 0;
    v[0] = 0;
    z[0] = -Infinity;
    z[1] = Infinity;
    for (let q = 1; q < len; q++) {
      let s = (f[q] + q * q - (f[v[k]] + v[k] * v[k])) / (2 * q - 2 * v[k]);
      while (s <= z[k]) {
        k--;
        s = (f[q] + q * q - (f[v[k]] + v[k] * v[k])) / (2 * q - 2 * v[k]);
      }
      k++;
      v[k] = q;
      z[k] = s;
      z[k + 1] = Infinity;
    }
    k = 0;
    for (let q = 0; q < len; q++) {
      while (z[k + 1] < q) k++;
      out[q] = (q - v[k]) * (q - v[k]) + f[v[k]];
    }
  };
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) f[y] = d[y * width + x];
    line(height);
    for (let y = 0; y < height; y++) d[y * width + x] = out[y];
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) f[x] = d[y * width + x];
    line(width);
    for (let x = 0; x < width; x++) d[y * width + x] = out[x];
  }
  return d;
}

/**
 * See-through inside (issue 84's measure): of the drawn subject's pixels at least 1% of the long side from its edge
 * (the nearest pixel the drawn mask leaves out), the share the cut-out leaves at alpha 16-239.
 */
export function seeThroughInside(alpha: Uint8Array, truth: Uint8Array, width: number, height: number): number {
  const n = width * height;
  const outside = new Uint8Array(n);
  for (let i = 0; i < n; i++) outside[i] = truth[i] >= 128 ? 0 : 1;
  const d2 = squaredDistance(outside, width, height);
  const depth = 0.01 * Math.max(width, height);
  let inside = 0;
  let seen = 0;
  for (let i = 0; i < n; i++) {
    if (truth[i] < 128 || d2[i] < depth * depth) continue;
    inside++;
    if (alpha[i] >= 16 && alpha[i] <= 239) seen++;
  }
  return inside ? seen / inside : 0;
}
