// Edge refinement at the photo's own resolution: a fast guided filter (He, Sun & Tang; He & Sun 2015)
// whose guide is the photo itself, so the model's 1024x1024 mask, upsampled, snaps to the photo's
// real edges; then colour decontamination, so a semi-transparent edge pixel keeps the product's colour
// and not the old background's (no halo on white). The filter's coefficients are computed on a grid of
// at most `grid` pixels on the long edge and interpolated, so the cost at full resolution is one pass.
// Plain JavaScript: it runs in the cut-out writer's worker threads (cutout-writer.worker.mjs), a band of
// rows each (refineRows), off the event loop.

import { dilate } from './raster.mjs';

/**
 * @typedef {{ grid?: number, radius?: number, eps?: number, guided?: boolean, steepen?: number, decontaminate?: boolean, low?: { rgb: Uint8Array, alpha: Uint8Array }, inPlace?: boolean }} RefineOptions
 *   `low`: the photo and its alpha already reduced to refineGrid's size (RGB and one channel)
 *   `inPlace`: the edge colours are decontaminated in `rgb` itself, and the alpha returned is a kept array
 *   that the next call overwrites (the cut-out writer's threads, whose copy of the photo is their own):
 *   no copy of the photo's 12 MB is made
 */

/**
 * @param {{ rgb: Uint8Array, alpha: Uint8Array | null, width: number, height: number }} img RGB and the upsampled alpha, same size
 *   (alpha may be null when `low` is given and the guided filter is on)
 * @param {RefineOptions} [opts]
 * @returns {{ alpha: Uint8Array, rgb: Uint8Array }} refined alpha, and RGB with edge colours decontaminated
 */
export function refineEdges(img, opts = {}) {
  return refineRows(img, opts, 0, img.height);
}

/**
 * Chosen on ../shared/eval-data with npm run bench -- all (edges section): radius 1 and eps 1e-4 on a
 * coefficient grid of 768 px, then the alpha ramp steepened 1.3x: mean error 0.956x and error within
 * 3 px of the true edge 0.986x of the upsampled mask, with the mask reduced to the grid by libvips'
 * lanczos3; 0.956x and 0.988x with the area averages that reduce it now (mask-reduce.mjs: 1 ms and
 * not 5; steeper ramps did not win the 0.002 back). Wider windows and larger eps blurred edges (worse
 * on both); a 1024 px grid scored the same at twice the time, a 512 px one lost at the edge.
 */
export const REFINE_DEFAULTS = Object.freeze({ grid: 768, radius: 1, eps: 1e-4, steepen: 1.3 });

/**
 * Grid rows each side of a band's own rows that its result reads: the bilinear neighbour (1), the
 * background colours' window (3) and the filter's two stacked windows (2), with one to spare.
 */
const MARGIN = 6;

/**
 * refineEdges for the pixel rows [y0, y1) alone: the same values, bit for bit, as those rows of the
 * whole photo's answer. The grid's filter work is done only for the grid rows those pixels read, so
 * bands of one photo can be refined side by side (cutout-writer.worker.mjs).
 * @param {{ rgb: Uint8Array, alpha: Uint8Array | null, width: number, height: number }} img as refineEdges
 * @param {RefineOptions} opts as refineEdges
 * @param {number} y0 @param {number} y1
 * @returns {{ alpha: Uint8Array, rgb: Uint8Array }} alpha ((y1 - y0) x width) and RGB of the rows
 */
export function refineRows(img, opts, y0, y1) {
  const { width: W, height: H, rgb, alpha } = img;
  const grid = opts.grid ?? REFINE_DEFAULTS.grid;
  const radius = opts.radius ?? REFINE_DEFAULTS.radius;
  const eps = opts.eps ?? REFINE_DEFAULTS.eps;
  const guided = opts.guided ?? true;
  const steepen = opts.steepen ?? REFINE_DEFAULTS.steepen;
  const { w, h } = refineGrid(W, H, grid);
  // Full-resolution pixels per grid cell, across and down.
  const sx = W / w;
  const sy = H / h;
  // The grid rows this band reads: [g0, g1), `gh` of them; grid arrays below hold only those rows.
  const g0 = Math.max(0, Math.floor(y0 / sy) - MARGIN);
  const g1 = Math.min(h, Math.ceil(y1 / sy) + MARGIN);
  const gh = g1 - g0;
  const n = w * gh;
  const rows = y1 - y0;

  // Low-resolution colours and alpha (0..255): given (the service's way: the photo reduced by libvips,
  // the mask by area averages, segment.ts refineInputs), or here by block averages. Cell k of this band's
  // grid rows is entry `base + k` of them. Everything below reads them directly, at the few cells near the
  // edge: no grid-sized array of the guide, the alpha or their products is made.
  /** @type {ArrayLike<number>} */ let lr;
  /** @type {ArrayLike<number>} */ let la;
  let base = 0;
  if (opts.low) {
    lr = opts.low.rgb;
    la = opts.low.alpha;
    base = g0 * w;
  } else {
    if (!alpha) throw new Error('refineEdges needs the upsampled alpha or the reduced inputs');
    const sumRgb = new Float32Array(n * 3);
    const sumA = new Float32Array(n);
    const count = new Float32Array(n);
    const cellOf = new Int32Array(W);
    for (let x = 0; x < W; x++) cellOf[x] = Math.min(w - 1, (x / sx) | 0);
    for (let y = 0; y < H; y++) {
      const cell = Math.min(h - 1, (y / sy) | 0);
      if (cell < g0 || cell >= g1) continue;
      const row = (cell - g0) * w;
      for (let x = 0, i = y * W, j = y * W * 3; x < W; x++, i++, j += 3) {
        const k = row + cellOf[x];
        sumRgb[k * 3] += rgb[j];
        sumRgb[k * 3 + 1] += rgb[j + 1];
        sumRgb[k * 3 + 2] += rgb[j + 2];
        sumA[k] += alpha[i];
        count[k]++;
      }
    }
    for (let k = 0; k < n; k++) {
      const c = count[k] || 1;
      sumRgb[k * 3] /= c;
      sumRgb[k * 3 + 1] /= c;
      sumRgb[k * 3 + 2] /= c;
      sumA[k] /= c;
    }
    lr = sumRgb;
    la = sumA;
  }

  // From here on windows are clipped at this band's grid rows [g0, g1): a window that the cut at g0 or g1
  // clips differs from the whole photo's, but MARGIN keeps every such row out of what this band reads.
  // The alpha's window means over the whole band of rows, from running sums (exact: whole numbers for
  // the service's 8-bit alpha).
  const mP = windowMeans(la, base, w, gh, radius, scratch('mP', Float32Array, n), 1 / 255);
  // Where the mask is certain all around (all subject or all background), the filter has nothing to fix.
  const band = scratch('band', Uint8Array, n);
  for (let k = 0; k < n; k++) band[k] = mP[k] > 0.002 && mP[k] < 0.998 ? 1 : 0;
  // A pixel reads the grid at the four cells around it, and changes only when one is in the band: the
  // cells one step from the band are all that is read (`near`), and their filter coefficients' means
  // read the coefficients one window further (`nearer`). Means are computed there alone, which on a
  // product photo is a tenth of the grid; every one of them has the value a whole-grid pass would give.
  const near = spans(dilate(band, w, gh, 1), w, gh);
  const nearer = spans(dilate(near.mask, w, gh, radius), w, gh);

  // The filter's coefficients at the cells that need them, each window summed directly: a window of
  // radius 1 is nine cells, and these cells are a tenth of the grid. The grey guide (0..1) is formed
  // inside the sums. A and Bc are written only at `nearer` cells, and read only there.
  const A = scratch('A', Float32Array, n);
  const Bc = scratch('Bc', Float32Array, n);
  forEachWindow(nearer, w, gh, radius, (k, ya, yb, xa, xb) => {
    let sI = 0,
      sIP = 0,
      sII = 0;
    for (let yy = ya; yy < yb; yy++) {
      for (let j = base + yy * w + xa, end = base + yy * w + xb; j < end; j++) {
        const v = Math.fround((0.299 * lr[j * 3] + 0.587 * lr[j * 3 + 1] + 0.114 * lr[j * 3 + 2]) / 255);
        sI += v;
        sIP += v * Math.fround(la[j] / 255);
        sII += v * v;
      }
    }
    const area = (yb - ya) * (xb - xa);
    const mI = Math.fround(sI / area);
    const varI = Math.fround(sII / area) - mI * mI;
    const cov = Math.fround(sIP / area) - mI * mP[k];
    A[k] = cov / (varI + eps);
    Bc[k] = mP[k] - A[k] * mI;
  });
  const mA = windowMean(A, w, gh, radius, near, scratch('mA', Float32Array, n));
  const mB = windowMean(Bc, w, gh, radius, near, scratch('mB', Float32Array, n));

  // The background's colour near each edge: colours weighted by how transparent they are ((1 - alpha)²),
  // over a wider window, at the `near` cells alone (the only ones the pixels read).
  const decontaminate = opts.decontaminate ?? true;
  /** @type {Float32Array} */ let bgR = new Float32Array(0);
  /** @type {Float32Array} */ let bgG = bgR;
  /** @type {Float32Array} */ let bgB = bgR;
  if (decontaminate) {
    bgR = scratch('bgR', Float32Array, n);
    bgG = scratch('bgG', Float32Array, n);
    bgB = scratch('bgB', Float32Array, n);
    // Each cell's weight and weighted colours, formed once (a cell is in up to 49 windows; an opaque one weighs
    // 0), then each window summed down its columns and those sums across: 14 terms a window and not 49, in an
    // order that does not depend on where the band starts (native/cutout.c sums in the same order).
    const r3 = radius * 3;
    const tW = scratch('tW', Float64Array, n);
    const tR = scratch('tR', Float64Array, n);
    const tG = scratch('tG', Float64Array, n);
    const tB = scratch('tB', Float64Array, n);
    for (let k = Math.max(0, near.rowStart - r3) * w, end = Math.min(gh, near.rowEnd + r3) * w; k < end; k++) {
      const j = base + k;
      const u = 1 - la[j] / 255;
      const t = u * u;
      tW[k] = t;
      tR[k] = t * lr[j * 3];
      tG[k] = t * lr[j * 3 + 1];
      tB[k] = t * lr[j * 3 + 2];
    }
    const vW = scratch('vW', Float64Array, w);
    const vR = scratch('vR', Float64Array, w);
    const vG = scratch('vG', Float64Array, w);
    const vB = scratch('vB', Float64Array, w);
    for (let y = near.rowStart; y < near.rowEnd; y++) {
      if (near.first[y] >= near.end[y]) continue;
      const ya = Math.max(0, y - r3);
      const yb = Math.min(gh, y + r3 + 1);
      for (let x = Math.max(0, near.first[y] - r3), x1 = Math.min(w, near.end[y] + r3); x < x1; x++) {
        let sT = 0,
          sR = 0,
          sG = 0,
          sB = 0;
        for (let k = ya * w + x, end = yb * w + x; k < end; k += w) {
          sT += tW[k];
          sR += tR[k];
          sG += tG[k];
          sB += tB[k];
        }
        vW[x] = sT;
        vR[x] = sR;
        vG[x] = sG;
        vB[x] = sB;
      }
      for (let x = near.first[y], k = y * w + x; x < near.end[y]; x++, k++) {
        if (!near.mask[k]) continue;
        const xa = Math.max(0, x - r3);
        const xb = Math.min(w, x + r3 + 1);
        let sT = 0,
          sR = 0,
          sG = 0,
          sB = 0;
        for (let xx = xa; xx < xb; xx++) {
          sT += vW[xx];
          sR += vR[xx];
          sG += vG[xx];
          sB += vB[xx];
        }
        const area = (yb - ya) * (xb - xa);
        // Where hardly any background is near, the weights' mean stands in for 1, as the means were made.
        const t = sT / area > 1e-6 ? sT : area;
        bgR[k] = sR / t;
        bgG[k] = sG / t;
        bgB[k] = sB / t;
      }
    }
  }

  // The grid rows whose pixels include some of [y0, y1).
  const c0 = Math.max(0, Math.floor(y0 / sy) - 1);
  const c1 = Math.min(h, Math.ceil(y1 / sy) + 1);
  // Outside the band the mask is certain: the upsampled alpha, or (when none was given) each cell's
  // 0 or 255 filled in at full size, which saves upsampling the whole mask.
  let outAlpha;
  // Copies (a Buffer's slice() would be a view): the input stays as it was.
  if (alpha) outAlpha = new Uint8Array(alpha.subarray(y0 * W, y1 * W));
  else {
    if (!guided) throw new Error('refineEdges needs the upsampled alpha when the guided filter is off');
    outAlpha = opts.inPlace ? scratch('outAlpha', Uint8Array, rows * W).fill(0) : new Uint8Array(rows * W);
    for (let cy = c0; cy < c1; cy++) {
      const yStart = Math.max(y0, Math.floor(cy * sy));
      const yEnd = Math.min(y1, Math.ceil((cy + 1) * sy));
      if (yStart >= yEnd) continue;
      const krow = (cy - g0) * w;
      // Runs of subject cells along the row, each filled in one call per pixel row.
      for (let cx = 0; cx < w;) {
        if (la[base + krow + cx] < 127.5) {
          cx++;
          continue;
        }
        let end = cx + 1;
        while (end < w && la[base + krow + end] >= 127.5) end++;
        const x0 = Math.floor(cx * sx);
        const x1 = Math.min(W, Math.ceil(end * sx));
        for (let y = yStart; y < yEnd; y++) outAlpha.fill(255, (y - y0) * W + x0, (y - y0) * W + x1);
        cx = end;
      }
    }
  }
  const outRgb =
    decontaminate && !opts.inPlace
      ? new Uint8Array(rgb.subarray(y0 * W * 3, y1 * W * 3))
      : rgb.subarray(y0 * W * 3, y1 * W * 3);
  // Only pixels whose 2x2 interpolation neighbourhood touches the band can change. Such a pixel's own
  // cell (the one its position falls in) is within one cell of each of those four, so it is a `near`
  // cell: the pixels are visited cell by cell of the near ones, each pixel once (in place, a second
  // visit would decontaminate it twice). Each column's bilinear position on the grid (cell centres) and
  // cell are the same on every row: computed once.
  const colX0 = new Int32Array(W);
  const colX1 = new Int32Array(W);
  const colFx = new Float64Array(W);
  // The first column of each cell, and W after the last.
  const cellStart = new Int32Array(w + 1).fill(W);
  for (let x = W - 1; x >= 0; x--) {
    const gx = Math.min(w - 1, Math.max(0, (x + 0.5) / sx - 0.5));
    const x0 = gx | 0;
    colX0[x] = x0;
    colX1[x] = Math.min(w - 1, x0 + 1);
    colFx[x] = gx - x0;
    cellStart[Math.min(w - 1, (x / sx) | 0)] = x;
  }
  for (let cx = w - 1; cx >= 0; cx--) cellStart[cx] = Math.min(cellStart[cx], cellStart[cx + 1]);
  for (let y = y0; y < y1; y++) {
    const cy = Math.min(h - 1, (y / sy) | 0);
    const nearRow = (cy - g0) * w;
    const firstCell = near.first[cy - g0];
    const endCell = near.end[cy - g0];
    if (firstCell >= endCell) continue;
    // Bilinear position on the low-resolution grid (cell centres), as rows of this band's grid.
    const gy = Math.min(h - 1, Math.max(0, (y + 0.5) / sy - 0.5));
    const ya = gy | 0;
    const yb = Math.min(h - 1, ya + 1);
    const fy = gy - ya;
    const ka = (ya - g0) * w;
    const kb = (yb - g0) * w;
    for (let cx = firstCell; cx < endCell; cx++) {
      if (!near.mask[nearRow + cx]) continue;
      for (let x = cellStart[cx], xEnd = cellStart[cx + 1]; x < xEnd; x++) {
        const i = y * W + x;
        const o = i - y0 * W;
        const x0 = colX0[x];
        const x1 = colX1[x];
        const fx = colFx[x];
        const k00 = ka + x0,
          k01 = ka + x1,
          k10 = kb + x0,
          k11 = kb + x1;
        if (!(band[k00] | band[k01] | band[k10] | band[k11])) continue;
        const w00 = (1 - fx) * (1 - fy),
          w01 = fx * (1 - fy),
          w10 = (1 - fx) * fy,
          w11 = fx * fy;
        const r = rgb[i * 3],
          g = rgb[i * 3 + 1],
          b = rgb[i * 3 + 2];
        let q = alpha ? alpha[i] / 255 : 0;
        if (guided) {
          const grey = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
          const a = mA[k00] * w00 + mA[k01] * w01 + mA[k10] * w10 + mA[k11] * w11;
          const c = mB[k00] * w00 + mB[k01] * w01 + mB[k10] * w10 + mB[k11] * w11;
          q = a * grey + c;
        }
        if (steepen !== 1) q = (q - 0.5) * steepen + 0.5;
        q = q < 0 ? 0 : q > 1 ? 1 : q;
        outAlpha[o] = Math.round(q * 255);
        if (decontaminate && q > 0.02 && q < 0.98) {
          // I = q F + (1 - q) B  =>  F = (I - (1 - q) B) / q
          const keep = 1 - q;
          const br = bgR[k00] * w00 + bgR[k01] * w01 + bgR[k10] * w10 + bgR[k11] * w11;
          const bg = bgG[k00] * w00 + bgG[k01] * w01 + bgG[k10] * w10 + bgG[k11] * w11;
          const bb = bgB[k00] * w00 + bgB[k01] * w01 + bgB[k10] * w10 + bgB[k11] * w11;
          outRgb[o * 3] = clamp((r - keep * br) / q);
          outRgb[o * 3 + 1] = clamp((g - keep * bg) / q);
          outRgb[o * 3 + 2] = clamp((b - keep * bb) / q);
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
export function refineGrid(W, H, grid = REFINE_DEFAULTS.grid) {
  const f = Math.max(1, Math.ceil(Math.max(W, H) / grid));
  return { w: Math.ceil(W / f), h: Math.ceil(H / f) };
}

/** Typed arrays kept between calls (one set a thread), by name: a photo's grid arrays are not made anew each band. */
const kept = new Map();

/**
 * A typed array of `length` from the kept ones, grown when too short. Its contents are what the last call
 * left: a caller writes every entry it reads.
 * @template {Float32Array | Float64Array | Uint8Array} T
 * @param {string} name @param {{ new (length: number): T }} Type @param {number} length
 * @returns {T}
 */
function scratch(name, Type, length) {
  let array = kept.get(name);
  if (!(array instanceof Type) || array.length < length) {
    array = new Type(length);
    kept.set(name, array);
  }
  return /** @type {T} */ (array.subarray(0, length));
}

/**
 * The mean over every clipped (2r+1)^2 window of a w x h grid held at `src[base...]`, times `scale`,
 * into `out`, from running sums along the rows and then down the columns: two reads a cell whatever r is.
 * @param {ArrayLike<number>} src @param {number} base @param {number} w @param {number} h @param {number} r
 * @param {Float32Array} out @param {number} scale
 */
function windowMeans(src, base, w, h, r, out, scale) {
  const rows = scratch('rowSums', Float64Array, w * h);
  for (let y = 0; y < h; y++) {
    const o = y * w;
    const from = base + o;
    let sum = 0;
    for (let x = 0; x < Math.min(w, r); x++) sum += src[from + x];
    for (let x = 0; x < w; x++) {
      if (x + r < w) sum += src[from + x + r];
      if (x - r - 1 >= 0) sum -= src[from + x - r - 1];
      rows[o + x] = sum;
    }
  }
  const cols = scratch('colSums', Float64Array, w);
  cols.fill(0);
  for (let y = 0; y < Math.min(h, r); y++) for (let x = 0, o = y * w; x < w; x++) cols[x] += rows[o + x];
  for (let y = 0; y < h; y++) {
    if (y + r < h) for (let x = 0, o = (y + r) * w; x < w; x++) cols[x] += rows[o + x];
    if (y - r - 1 >= 0) for (let x = 0, o = (y - r - 1) * w; x < w; x++) cols[x] -= rows[o + x];
    const hh = Math.min(h, y + r + 1) - Math.max(0, y - r);
    for (let x = 0, o = y * w; x < w; x++) {
      const ww = Math.min(w, x + r + 1) - Math.max(0, x - r);
      out[o + x] = (cols[x] / (hh * ww)) * scale;
    }
  }
  return out;
}

/** @param {number} v */
function clamp(v) {
  return v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
}

/**
 * @typedef {{ mask: Uint8Array, first: Int32Array, end: Int32Array, rowStart: number, rowEnd: number, colStart: number, colEnd: number }} Cells
 *   where `mask` is set; per row the first such column and one past the last (first >= end: none); the
 *   first row and column that have any, and one past the last (rowStart >= rowEnd: none at all)
 */

/**
 * A mask with its extent (see Cells).
 * @param {Uint8Array} mask @param {number} w @param {number} h
 * @returns {Cells}
 */
export function spans(mask, w, h) {
  const first = new Int32Array(h).fill(w);
  const end = new Int32Array(h);
  let rowStart = h;
  let rowEnd = 0;
  let colStart = w;
  let colEnd = 0;
  for (let y = 0; y < h; y++) {
    const o = y * w;
    for (let x = 0; x < w; x++) {
      if (!mask[o + x]) continue;
      if (first[y] === w) first[y] = x;
      end[y] = x + 1;
    }
    if (end[y] > 0) {
      if (rowStart === h) rowStart = y;
      rowEnd = y + 1;
      if (first[y] < colStart) colStart = first[y];
      if (end[y] > colEnd) colEnd = end[y];
    }
  }
  return { mask, first, end, rowStart, rowEnd, colStart, colEnd };
}

/**
 * Calls `fn(k, x, y)` for every cell set in `cells`, row by row.
 * @param {Cells} cells @param {number} w @param {(k: number, x: number, y: number) => void} fn
 */
function forEachCell(cells, w, fn) {
  for (let y = cells.rowStart; y < cells.rowEnd; y++) {
    for (let x = cells.first[y], end = cells.end[y], k = y * w + x; x < end; x++, k++) if (cells.mask[k]) fn(k, x, y);
  }
}

/**
 * Calls `fn(k, ya, yb, xa, xb)` for every cell set in `cells`, with its (2r+1)^2 window clipped at the
 * w x h grid's borders: rows [ya, yb) and columns [xa, xb).
 * @param {Cells} cells @param {number} w @param {number} h @param {number} r
 * @param {(k: number, ya: number, yb: number, xa: number, xb: number) => void} fn
 */
function forEachWindow(cells, w, h, r, fn) {
  forEachCell(cells, w, (k, x, y) =>
    fn(k, Math.max(0, y - r), Math.min(h, y + r + 1), Math.max(0, x - r), Math.min(w, x + r + 1)),
  );
}

/**
 * Mean over a (2r+1)^2 window, clipped at the borders, at the cells of `only` alone (0 elsewhere), each
 * window summed directly: cheaper than boxMean's table where the cells are few and the window small.
 * @param {ArrayLike<number>} src @param {number} w @param {number} h @param {number} r @param {Cells} only
 * @param {Float32Array} [into] room for the answer (w x h), whose other cells are left as they are
 */
export function windowMean(src, w, h, r, only, into) {
  const out = into ?? new Float32Array(w * h);
  forEachWindow(only, w, h, r, (k, ya, yb, xa, xb) => {
    let sum = 0;
    for (let yy = ya; yy < yb; yy++) for (let j = yy * w + xa, end = yy * w + xb; j < end; j++) sum += src[j];
    out[k] = sum / ((yb - ya) * (xb - xa));
  });
  return out;
}

/**
 * Mean over a (2r+1)^2 window, clipped at the borders, with a summed-area table.
 * @param {ArrayLike<number>} src @param {number} w @param {number} h @param {number} r
 * @param {Float64Array} [scratch] room for the table ((w + 1) * (h + 1) or more), reused between calls
 * @param {Cells} [only] when given, the mean is computed only there (0 elsewhere), and the table only where that reads:
 *   its rows and columns from the first window's start, so each entry sums from there and not from the grid's corner
 */
export function boxMean(src, w, h, r, scratch, only) {
  const W1 = w + 1;
  const sat = scratch && scratch.length >= W1 * (h + 1) ? scratch : new Float64Array(W1 * (h + 1));
  // The table's rows and columns that the windows read (all of them without `only`): entry (y, x)
  // sums the rectangle from (top0, left0), and the row above and the column left of it are zeros.
  const top0 = only ? Math.max(0, Math.min(h, only.rowStart - r)) : 0;
  const left0 = only ? Math.max(0, Math.min(w, only.colStart - r)) : 0;
  const rows = only ? Math.min(h, only.rowEnd + r) : h;
  const cols = only ? Math.min(w, only.colEnd + r) : w;
  sat.fill(0, top0 * W1 + left0, top0 * W1 + cols + 1);
  for (let y = top0; y < rows; y++) {
    let row = 0;
    const at = (y + 1) * W1;
    const above = y * W1;
    const from = y * w;
    sat[at + left0] = 0;
    for (let x = left0; x < cols; x++) {
      row += src[from + x];
      sat[at + x + 1] = sat[above + x + 1] + row;
    }
  }
  const out = new Float32Array(w * h);
  // Columns whose window the left or right border clips; between them every window is 2r + 1 wide.
  const left = Math.min(w, r);
  const right = Math.max(left, w - r - 1);
  for (let y = 0; y < h; y++) {
    const ya = Math.max(0, y - r),
      yb = Math.min(h, y + r + 1);
    const top = ya * W1,
      bottom = yb * W1,
      o = y * w;
    const clipped = (/** @type {number} */ x) => {
      const xa = Math.max(0, x - r),
        xb = Math.min(w, x + r + 1);
      out[o + x] = (sat[bottom + xb] - sat[top + xb] - sat[bottom + xa] + sat[top + xa]) / ((yb - ya) * (xb - xa));
    };
    if (only) {
      for (let x = only.first[y], end = only.end[y]; x < end; x++) if (only.mask[o + x]) clipped(x);
      continue;
    }
    const area = (yb - ya) * (2 * r + 1);
    for (let x = 0; x < left; x++) clipped(x);
    for (let x = left, xa = left - r, xb = left + r + 1; x < right; x++, xa++, xb++) {
      out[o + x] = (sat[bottom + xb] - sat[top + xb] - sat[bottom + xa] + sat[top + xa]) / area;
    }
    for (let x = right; x < w; x++) clipped(x);
  }
  return out;
}
