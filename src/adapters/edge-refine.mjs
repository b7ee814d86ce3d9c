// Edge refinement at the photo's own resolution: a fast guided filter (He, Sun & Tang; He & Sun 2015)
// whose guide is the photo itself, so the model's 1024x1024 mask, upsampled, snaps to the photo's
// real edges; then colour decontamination, so a semi-transparent edge pixel keeps the product's colour
// and not the old background's (no halo on white). The filter's coefficients are computed on a grid of
// at most `grid` pixels on the long edge and interpolated, so the cost at full resolution is one pass.
// Plain JavaScript: it runs in a worker thread (edge-refine.worker.mjs), off the event loop.

/**
 * @param {{ rgb: Uint8Array, alpha: Uint8Array | null, width: number, height: number }} img RGB and the upsampled alpha, same size
 *   (alpha may be null when `low` is given and the guided filter is on)
 * @param {{ grid?: number, radius?: number, eps?: number, guided?: boolean, steepen?: number, decontaminate?: boolean, low?: { rgb: Uint8Array, alpha: Uint8Array } }} [opts]
 *   `low`: the photo and its alpha already reduced to refineGrid's size (RGB and one channel)
 * @returns {{ alpha: Uint8Array, rgb: Uint8Array }} refined alpha, and RGB with edge colours decontaminated
 */
export function refineEdges(img, opts = {}) {
  const { width: W, height: H, rgb, alpha } = img;
  const grid = opts.grid ?? 768;
  // Chosen on ../shared/eval-data with npm run bench (edges section): radius 1 and eps 1e-4 on a
  // coefficient grid of 768 px, then the alpha ramp steepened 1.3x: mean error 0.956x and error within
  // 3 px of the true edge 0.986x of the upsampled mask. Wider windows and larger eps blurred edges
  // (worse on both); a 1024 px grid scored the same at twice the time, a 512 px one lost at the edge.
  const radius = opts.radius ?? 1;
  const eps = opts.eps ?? 1e-4;
  const guided = opts.guided ?? true;
  const steepen = opts.steepen ?? 1.3;
  const { w, h } = refineGrid(W, H, grid);
  const n = w * h;
  // Full-resolution pixels per grid cell, across and down.
  const sx = W / w;
  const sy = H / h;

  // Low-resolution guide (grey, 0..1), alpha (0..1) and colours: given (reduced by libvips, the
  // service's way: fast and off this thread), or here by block averages.
  const I = new Float32Array(n);
  const P = new Float32Array(n);
  const R = new Float32Array(n);
  const G = new Float32Array(n);
  const B = new Float32Array(n);
  if (opts.low) {
    const { rgb: lr, alpha: la } = opts.low;
    for (let k = 0; k < n; k++) {
      R[k] = lr[k * 3];
      G[k] = lr[k * 3 + 1];
      B[k] = lr[k * 3 + 2];
      I[k] = (0.299 * R[k] + 0.587 * G[k] + 0.114 * B[k]) / 255;
      P[k] = la[k] / 255;
    }
  } else {
    if (!alpha) throw new Error('refineEdges needs the upsampled alpha or the reduced inputs');
    const count = new Float32Array(n);
    const cellOf = new Int32Array(W);
    for (let x = 0; x < W; x++) cellOf[x] = Math.min(w - 1, (x / sx) | 0);
    for (let y = 0; y < H; y++) {
      const row = Math.min(h - 1, (y / sy) | 0) * w;
      for (let x = 0, i = y * W, j = y * W * 3; x < W; x++, i++, j += 3) {
        const k = row + cellOf[x];
        const r = rgb[j], g = rgb[j + 1], b = rgb[j + 2];
        R[k] += r;
        G[k] += g;
        B[k] += b;
        I[k] += (0.299 * r + 0.587 * g + 0.114 * b) / 255;
        P[k] += alpha[i] / 255;
        count[k]++;
      }
    }
    for (let k = 0; k < n; k++) {
      const c = count[k] || 1;
      I[k] /= c;
      P[k] /= c;
      R[k] /= c;
      G[k] /= c;
      B[k] /= c;
    }
  }

  const IP = new Float32Array(n);
  const II = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    IP[k] = I[k] * P[k];
    II[k] = I[k] * I[k];
  }
  const mI = boxMean(I, w, h, radius);
  const mP = boxMean(P, w, h, radius);
  const mIP = boxMean(IP, w, h, radius);
  const mII = boxMean(II, w, h, radius);
  const A = new Float32Array(n);
  const Bc = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    const varI = mII[k] - mI[k] * mI[k];
    const cov = mIP[k] - mI[k] * mP[k];
    A[k] = cov / (varI + eps);
    Bc[k] = mP[k] - A[k] * mI[k];
  }
  const mA = boxMean(A, w, h, radius);
  const mB = boxMean(Bc, w, h, radius);
  // Where the mask is certain all around (all subject or all background), the filter has nothing to fix.
  const band = new Uint8Array(n);
  for (let k = 0; k < n; k++) band[k] = mP[k] > 0.002 && mP[k] < 0.998 ? 1 : 0;

  // The background's colour near each edge: colours weighted by how transparent they are, over a wider window.
  const decontaminate = opts.decontaminate ?? true;
  /** @type {Float32Array} */ let bgR = new Float32Array(0);
  /** @type {Float32Array} */ let bgG = bgR;
  /** @type {Float32Array} */ let bgB = bgR;
  if (decontaminate) {
    const T = new Float32Array(n);
    const TR = new Float32Array(n);
    const TG = new Float32Array(n);
    const TB = new Float32Array(n);
    for (let k = 0; k < n; k++) {
      const t = (1 - P[k]) ** 2;
      T[k] = t;
      TR[k] = t * R[k];
      TG[k] = t * G[k];
      TB[k] = t * B[k];
    }
    const mT = boxMean(T, w, h, radius * 3);
    bgR = boxMean(TR, w, h, radius * 3);
    bgG = boxMean(TG, w, h, radius * 3);
    bgB = boxMean(TB, w, h, radius * 3);
    for (let k = 0; k < n; k++) {
      const t = mT[k] > 1e-6 ? mT[k] : 1;
      bgR[k] /= t;
      bgG[k] /= t;
      bgB[k] /= t;
    }
  }

  // Outside the band the mask is certain: the upsampled alpha, or (when none was given) each cell's
  // 0 or 255 filled in at full size, which saves upsampling the whole mask.
  let outAlpha;
  if (alpha) outAlpha = new Uint8Array(alpha);
  else {
    if (!guided) throw new Error('refineEdges needs the upsampled alpha when the guided filter is off');
    outAlpha = new Uint8Array(W * H);
    for (let cy = 0; cy < h; cy++) {
      const yEnd = Math.min(H, Math.ceil((cy + 1) * sy));
      // Runs of subject cells along the row, each filled in one call per pixel row.
      for (let cx = 0; cx < w; ) {
        if (P[cy * w + cx] < 0.5) {
          cx++;
          continue;
        }
        let end = cx + 1;
        while (end < w && P[cy * w + end] >= 0.5) end++;
        const x0 = Math.floor(cx * sx);
        const x1 = Math.min(W, Math.ceil(end * sx));
        for (let y = Math.floor(cy * sy); y < yEnd; y++) outAlpha.fill(255, y * W + x0, y * W + x1);
        cx = end;
      }
    }
  }
  const outRgb = decontaminate ? new Uint8Array(rgb) : rgb;
  // Only blocks whose 2x2 interpolation neighbourhood touches the band can change.
  const touched = new Uint8Array(n);
  for (let cy = 0; cy < h; cy++) {
    for (let cx = 0; cx < w; cx++) {
      if (!band[cy * w + cx]) continue;
      for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
        const yy = cy + dy, xx = cx + dx;
        if (yy >= 0 && yy < h && xx >= 0 && xx < w) touched[yy * w + xx] = 1;
      }
    }
  }
  for (let cy = 0; cy < h; cy++) {
    for (let cx = 0; cx < w; cx++) {
      if (!touched[cy * w + cx]) continue;
      const yEnd = Math.min(H, Math.ceil((cy + 1) * sy));
      const xEnd = Math.min(W, Math.ceil((cx + 1) * sx));
      for (let y = Math.floor(cy * sy); y < yEnd; y++) {
        // Bilinear position on the low-resolution grid (cell centres).
        const gy = Math.min(h - 1, Math.max(0, (y + 0.5) / sy - 0.5));
        const y0 = gy | 0;
        const y1 = Math.min(h - 1, y0 + 1);
        const fy = gy - y0;
        for (let x = Math.floor(cx * sx); x < xEnd; x++) {
          const i = y * W + x;
          const gx = Math.min(w - 1, Math.max(0, (x + 0.5) / sx - 0.5));
          const x0 = gx | 0;
          const x1 = Math.min(w - 1, x0 + 1);
          const fx = gx - x0;
          const k00 = y0 * w + x0, k01 = y0 * w + x1, k10 = y1 * w + x0, k11 = y1 * w + x1;
          if (!(band[k00] | band[k01] | band[k10] | band[k11])) continue;
          const w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy;
          const r = rgb[i * 3], g = rgb[i * 3 + 1], b = rgb[i * 3 + 2];
          let q = alpha ? alpha[i] / 255 : 0;
          if (guided) {
            const grey = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
            const a = mA[k00] * w00 + mA[k01] * w01 + mA[k10] * w10 + mA[k11] * w11;
            const c = mB[k00] * w00 + mB[k01] * w01 + mB[k10] * w10 + mB[k11] * w11;
            q = a * grey + c;
          }
          if (steepen !== 1) q = (q - 0.5) * steepen + 0.5;
          q = q < 0 ? 0 : q > 1 ? 1 : q;
          outAlpha[i] = Math.round(q * 255);
          if (decontaminate && q > 0.02 && q < 0.98) {
            // I = q F + (1 - q) B  =>  F = (I - (1 - q) B) / q
            const keep = 1 - q;
            const br = bgR[k00] * w00 + bgR[k01] * w01 + bgR[k10] * w10 + bgR[k11] * w11;
            const bg = bgG[k00] * w00 + bgG[k01] * w01 + bgG[k10] * w10 + bgG[k11] * w11;
            const bb = bgB[k00] * w00 + bgB[k01] * w01 + bgB[k10] * w10 + bgB[k11] * w11;
            outRgb[i * 3] = clamp((r - keep * br) / q);
            outRgb[i * 3 + 1] = clamp((g - keep * bg) / q);
            outRgb[i * 3 + 2] = clamp((b - keep * bb) / q);
          }
        }
      }
    }
  }
  return { alpha: outAlpha, rgb: outRgb };
}

/**
 * The coefficient grid for a photo: at most `grid` cells on the long edge, a whole number of pixels a cell.
 * @param {number} W @param {number} H @param {number} [grid]
 */
export function refineGrid(W, H, grid = 768) {
  const f = Math.max(1, Math.ceil(Math.max(W, H) / grid));
  return { w: Math.ceil(W / f), h: Math.ceil(H / f) };
}

/** @param {number} v */
function clamp(v) {
  return v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
}

/**
 * Mean over a (2r+1)^2 window, clipped at the borders, with a summed-area table.
 * @param {ArrayLike<number>} src @param {number} w @param {number} h @param {number} r
 */
export function boxMean(src, w, h, r) {
  const sat = new Float64Array((w + 1) * (h + 1));
  for (let y = 0; y < h; y++) {
    let row = 0;
    for (let x = 0; x < w; x++) {
      row += src[y * w + x];
      sat[(y + 1) * (w + 1) + x + 1] = sat[y * (w + 1) + x + 1] + row;
    }
  }
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const ya = Math.max(0, y - r), yb = Math.min(h, y + r + 1);
    for (let x = 0; x < w; x++) {
      const xa = Math.max(0, x - r), xb = Math.min(w, x + r + 1);
      const sum = sat[yb * (w + 1) + xb] - sat[ya * (w + 1) + xb] - sat[yb * (w + 1) + xa] + sat[ya * (w + 1) + xa];
      out[y * w + x] = sum / ((yb - ya) * (xb - xa));
    }
  }
  return out;
}
