// A seller's brush strokes on a cut-out: erase and restore, painted as discs along each stroke's path, and
// with snap, made to follow the photo's edges. Plain JavaScript: the cut-out writer's worker threads run it
// (cutout-writer.worker.mjs), off the event loop.
//
// Snap. A stroke is laid over the wrong part, and a hurried one spills past it onto what was right. What the
// stroke changes is decided pixel by pixel inside its discs: a pixel changes when it is nearer, along the
// photo, to what the stroke is about than to what it leaves alone. "Along the photo" is a geodesic distance:
// each step from a pixel to its neighbour costs its length plus EDGE_WEIGHT times the colour difference
// between them, so crossing an edge in the photo is long and staying within one region is short. What the
// stroke is about: its own path (where the hand went), and the pixels under its discs already as the stroke
// would make them. What it leaves alone: the pixels just outside its discs on the other side (for an erase,
// the subject the discs border; for a restore, the background). Without snap a stroke changes its discs exactly.

/** @typedef {'erase' | 'restore'} StrokeMode */
/** @typedef {{ mode: StrokeMode, size: number, points: number[][] }} Stroke */
/** @typedef {{ x0: number, y0: number, x1: number, y1: number }} Bounds pixel bounds, end exclusive */
/**
 * @typedef {{ rgb: Uint8Array, alpha: Uint8Array | null, x0: number, y0: number, width: number, height: number }} PhotoWindow
 *   the photo's RGB and its own transparency (null: opaque) over the window of the cut-out at (x0, y0)
 */

/**
 * @typedef {object} SnapOptions
 * @property {number} [edgeWeight] colour difference (Euclidean, 0-255 RGB) that weighs as much as a pixel of length
 * @property {number} [ring] width of the rings of pixels left alone, in pixels
 * @property {number} [reach] how far past its discs a stroke may change pixels, in brush radii
 * @property {number} [reachPenalty] how much nearer what the stroke is about a pixel past the discs must be
 * @property {number} [keepFilter] a ring pixel whose colour is more typical of the path than of the rings by this
 *   factor is not left alone (0: every ring pixel is)
 * @property {number} [passes] raster passes of the distances
 */

/**
 * Chosen with `npm run bench -- touch-up` on the real photos with drawn masks, where each was measured against
 * its neighbours (docs/research/touch-up.md); the figures are flat around them.
 * @type {Readonly<Required<SnapOptions>>}
 */
export const SNAP_DEFAULTS = Object.freeze({
  edgeWeight: 1,
  ring: 2,
  reach: 1,
  reachPenalty: 5,
  keepFilter: 0.3,
  // One forward and one backward pass: a second changed no photo's figure on either set of real photos.
  passes: 1,
});

/**
 * The pixels a run of strokes covers, inside `bounds`: each stroke a capsule of its size (a disc at every
 * point, joined along each segment). A pixel (x, y) is covered when its centre, at (x, y), lies within size / 2
 * of the stroke's path. Row intervals are summed in a difference array, so overlapping strokes cost only their
 * rows, not their area.
 * @param {Stroke[]} strokes @param {Bounds} b
 * @returns {{ cover: Uint8Array, path: Uint8Array }} one byte a pixel of the bounds: covered, and on a path
 */
export function paintStrokes(strokes, b) {
  const w = b.x1 - b.x0;
  const h = b.y1 - b.y0;
  const diff = new Int32Array((w + 1) * h);
  const path = new Uint8Array(w * h);
  /** @param {number} y row of the image @param {number} xa @param {number} xb */
  const span = (y, xa, xb) => {
    const from = Math.max(b.x0, Math.ceil(xa - 1e-9));
    const to = Math.min(b.x1 - 1, Math.floor(xb + 1e-9));
    if (from > to) return;
    const row = (y - b.y0) * (w + 1);
    diff[row + from - b.x0]++;
    diff[row + to + 1 - b.x0]--;
  };
  /** @param {number} x @param {number} y */
  const mark = (x, y) => {
    const px = Math.round(x);
    const py = Math.round(y);
    if (px >= b.x0 && px < b.x1 && py >= b.y0 && py < b.y1) path[(py - b.y0) * w + px - b.x0] = 1;
  };
  for (const stroke of strokes) {
    const r = stroke.size / 2;
    const pts = stroke.points;
    if (pts.length === 1) {
      const [x, y] = pts[0];
      capsule(x, y, x, y, r, b, span);
      mark(x, y);
      continue;
    }
    for (let i = 1; i < pts.length; i++) {
      const [xa, ya] = pts[i - 1];
      const [xb, yb] = pts[i];
      capsule(xa, ya, xb, yb, r, b, span);
      // The path is marked every half pixel, over the part of the segment inside the bounds only (a point may
      // lie far outside the cut-out).
      const part = clipSegment(xa, ya, xb, yb, b);
      if (!part) continue;
      const [t0, t1] = part;
      const steps = Math.max(1, Math.ceil(Math.hypot(xb - xa, yb - ya) * (t1 - t0) * 2));
      for (let s = 0; s <= steps; s++) {
        const t = t0 + ((t1 - t0) * s) / steps;
        mark(xa + (xb - xa) * t, ya + (yb - ya) * t);
      }
    }
  }
  const cover = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    let run = 0;
    const row = y * (w + 1);
    for (let x = 0; x < w; x++) {
      run += diff[row + x];
      if (run > 0) cover[y * w + x] = 1;
    }
  }
  return { cover, path };
}

/**
 * The part of the segment (xa, ya)-(xb, yb) inside the bounds, widened by a pixel, as its parameters [t0, t1]
 * (Liang and Barsky's clipping); null when none of it is.
 * @param {number} xa @param {number} ya @param {number} xb @param {number} yb @param {Bounds} b
 * @returns {[number, number] | null}
 */
function clipSegment(xa, ya, xb, yb, b) {
  let t0 = 0;
  let t1 = 1;
  const dx = xb - xa;
  const dy = yb - ya;
  for (const [p, q] of [
    [-dx, xa - (b.x0 - 1)],
    [dx, b.x1 - xa],
    [-dy, ya - (b.y0 - 1)],
    [dy, b.y1 - ya],
  ]) {
    if (p === 0) {
      if (q < 0) return null;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
  }
  return t0 <= t1 ? [t0, t1] : null;
}

/**
 * Calls `span(y, xa, xb)` for each row y in the bounds that the capsule around the segment (xa, ya)-(xb, yb) of
 * radius r crosses, with the crossing's ends. The capsule is convex: its crossing is one interval, the hull of
 * the crossings of its two end discs and of the band between them.
 * @param {number} xa @param {number} ya @param {number} xb @param {number} yb @param {number} r @param {Bounds} b
 * @param {(y: number, from: number, to: number) => void} span
 */
function capsule(xa, ya, xb, yb, r, b, span) {
  const top = Math.max(b.y0, Math.ceil(Math.min(ya, yb) - r));
  const bottom = Math.min(b.y1 - 1, Math.floor(Math.max(ya, yb) + r));
  const dx = xb - xa;
  const dy = yb - ya;
  const len2 = dx * dx + dy * dy;
  const len = Math.sqrt(len2);
  for (let y = top; y <= bottom; y++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const [cx, cy] of [
      [xa, ya],
      [xb, yb],
    ]) {
      const h2 = r * r - (y - cy) * (y - cy);
      if (h2 < 0) continue;
      const half = Math.sqrt(h2);
      lo = Math.min(lo, cx - half);
      hi = Math.max(hi, cx + half);
    }
    if (len > 0) {
      // The band: 0 <= ((x - xa) dx + (y - ya) dy) / len² <= 1 and |(x - xa) dy - (y - ya) dx| / len <= r,
      // each linear in x, so each an interval of x (or all or nothing where its x coefficient is zero).
      let from = -Infinity;
      let to = Infinity;
      const along = (y - ya) * dy;
      if (dx !== 0) {
        const t0 = xa - along / dx;
        const t1 = xa + (len2 - along) / dx;
        from = Math.max(from, Math.min(t0, t1));
        to = Math.min(to, Math.max(t0, t1));
      } else if (along < 0 || along > len2) to = -Infinity;
      const across = (y - ya) * dx;
      if (dy !== 0) {
        const t0 = xa + (across - r * len) / dy;
        const t1 = xa + (across + r * len) / dy;
        from = Math.max(from, Math.min(t0, t1));
        to = Math.min(to, Math.max(t0, t1));
      } else if (Math.abs(across) > r * len) to = -Infinity;
      if (from <= to) {
        lo = Math.min(lo, from);
        hi = Math.max(hi, to);
      }
    }
    if (lo <= hi) span(y, lo, hi);
  }
}

/**
 * The pixels of the bounds a run of strokes of one mode changes: its discs (plain), or with snap those pixels
 * of its discs, and of a band of `reach` brush radii around them, that are geodesically nearer what the stroke
 * is about than what it leaves alone (the file's header). Over the bounds, the run's zones are:
 *  - the discs (`cover`) and the brush's path;
 *  - the inner ring, `ring` pixels around the discs, and the reach band beyond it, to `reach` radii;
 *  - the outer ring, `ring` pixels past the reach band.
 * What the stroke is about (distance 0): its path, and every pixel of the zones already on the side of 128 the
 * stroke makes (an erase makes background, a restore subject). What it leaves alone (distance 0): the pixels of
 * the two rings on the other side, but for those whose colour is much more typical of the path than of the
 * rest of the rings (KEEP_FILTER): most likely the wrong region going on past the discs, which the stroke may
 * then reach. A pixel of the discs changes when it is nearer what the stroke is about; a pixel past them, only
 * when nearer by REACH_PENALTY.
 * @param {{ rgba: Uint8Array, width: number, photo: PhotoWindow }} img the cut-out's pixels as they are now, its
 *   width, and the photo over a window that holds `b`
 * @param {{ cover: Uint8Array, path: Uint8Array }} painted paintStrokes' answer, over `b`
 * @param {StrokeMode} mode @param {Bounds} b @param {number} radius the run's largest brush radius
 * @param {SnapOptions | null} snap null: plain discs
 * @returns {Uint8Array} 1 where the run changes the pixel, over `b`
 */
export function changedPixels(img, painted, mode, b, radius, snap) {
  const { cover, path } = painted;
  if (!snap) return cover;
  const o = { ...SNAP_DEFAULTS, ...snap };
  const w = b.x1 - b.x0;
  const h = b.y1 - b.y0;
  const n = w * h;
  const { rgba, width, photo } = img;
  const target = mode === 'erase' ? 0 : 1;
  const reach = Math.max(o.ring, Math.round(o.reach * radius));
  // Chessboard distances to the discs, and from what they leave uncovered: the rings and the band are the
  // pixels within so many pixels of the discs (a square neighbourhood).
  const fromCover = chessboardDistance(cover, w, h, reach + o.ring);
  const uncovered = new Uint8Array(n);
  for (let i = 0; i < n; i++) uncovered[i] = cover[i] ? 0 : 1;
  // The heart of the discs, more than a radius from their outline, is not in question: it changes, and is only
  // a source of what the stroke is about for the edge zone around it (a scribble over a large region would
  // otherwise cost its whole area in every pass).
  const fromUncovered = chessboardDistance(uncovered, w, h, Math.ceil(radius) + 1);
  const toChange = new Float32Array(n).fill(Infinity);
  const toKeep = new Float32Array(n).fill(Infinity);
  /** 1: its distances are computed; 2: a source whose distance stays 0 (the heart of the discs) */
  const inside = new Uint8Array(n);
  let keeps = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const d = fromCover[i];
      if (d > reach + o.ring) continue;
      if (cover[i] && fromUncovered[i] > Math.ceil(radius)) {
        inside[i] = 2;
        toChange[i] = 0;
        continue;
      }
      inside[i] = 1;
      const onTarget = (rgba[((y + b.y0) * width + x + b.x0) * 4 + 3] >= 128 ? 1 : 0) === target;
      if (onTarget || path[i]) toChange[i] = 0;
      // The inner ring, and the outer ring past the reach band.
      else if (!cover[i] && (d <= o.ring || d > reach)) {
        toKeep[i] = 0;
        keeps++;
      }
    }
  }
  if (keeps && o.keepFilter) keeps = filterKeepSeeds(photo, b, path, toKeep, o.keepFilter);
  // Nothing on the other side borders the discs: nothing to protect, and nothing to reach past them.
  if (keeps === 0) return cover;
  const cost = stepCosts(photo, b, inside, o.edgeWeight);
  for (let p = 0; p < o.passes; p++) sweep(toChange, toKeep, cost, inside, w, h);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (cover[i]) out[i] = inside[i] === 2 || toChange[i] < toKeep[i] ? 1 : 0;
    else if (fromCover[i] <= reach) out[i] = toChange[i] + o.reachPenalty < toKeep[i] ? 1 : 0;
  }
  return out;
}

/** A colour's bin in the filter's histograms: 16 levels a channel. */
const colourBin = (/** @type {Uint8Array} */ rgb, /** @type {number} */ p) =>
  ((rgb[p * 3] >> 4) << 8) | ((rgb[p * 3 + 1] >> 4) << 4) | (rgb[p * 3 + 2] >> 4);

/** Where the pixel (x, y) of the cut-out is in a photo window. */
const at = (/** @type {PhotoWindow} */ photo, /** @type {number} */ x, /** @type {number} */ y) =>
  (y - photo.y0) * photo.width + (x - photo.x0);

/**
 * Frees the keep seeds whose colour is more typical of the path than of the keep seeds (by `factor`); returns
 * how many keep seeds are left.
 * @param {PhotoWindow} photo @param {Bounds} b @param {Uint8Array} path
 * @param {Float32Array} toKeep 0 at the keep seeds, changed in place @param {number} factor
 */
function filterKeepSeeds(photo, b, path, toKeep, factor) {
  const w = b.x1 - b.x0;
  const h = b.y1 - b.y0;
  const onPath = new Float64Array(4096);
  const kept = new Float64Array(4096);
  let paths = 0;
  let keeps = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const bin = colourBin(photo.rgb, at(photo, x + b.x0, y + b.y0));
      if (path[i]) {
        onPath[bin]++;
        paths++;
      }
      if (toKeep[i] === 0) {
        kept[bin]++;
        keeps++;
      }
    }
  }
  if (paths === 0) return keeps;
  let left = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (toKeep[i] !== 0) continue;
      const bin = colourBin(photo.rgb, at(photo, x + b.x0, y + b.y0));
      if (onPath[bin] / paths > (factor * kept[bin]) / keeps) toKeep[i] = Infinity;
      else left++;
    }
  }
  return left;
}

/**
 * The chessboard distance (steps to any of the 8 neighbours) from each pixel to the nearest pixel of the set, up
 * to `cap` (farther pixels get cap + 1), in one forward and one backward pass: a pixel is within d of the set
 * exactly where a (2d + 1)² square around it meets the set.
 * @param {Uint8Array} set @param {number} w @param {number} h @param {number} cap
 * @returns {Uint16Array}
 */
function chessboardDistance(set, w, h, cap) {
  const far = Math.min(65535, cap + 1);
  const d = new Uint16Array(w * h);
  for (let i = 0; i < d.length; i++) d[i] = set[i] ? 0 : far;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      let v = d[i];
      if (v === 0) continue;
      if (x > 0 && d[i - 1] + 1 < v) v = d[i - 1] + 1;
      if (y > 0) {
        const up = i - w;
        if (d[up] + 1 < v) v = d[up] + 1;
        if (x > 0 && d[up - 1] + 1 < v) v = d[up - 1] + 1;
        if (x + 1 < w && d[up + 1] + 1 < v) v = d[up + 1] + 1;
      }
      d[i] = v;
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      const i = y * w + x;
      let v = d[i];
      if (v === 0) continue;
      if (x + 1 < w && d[i + 1] + 1 < v) v = d[i + 1] + 1;
      if (y + 1 < h) {
        const down = i + w;
        if (d[down] + 1 < v) v = d[down] + 1;
        if (x + 1 < w && d[down + 1] + 1 < v) v = d[down + 1] + 1;
        if (x > 0 && d[down - 1] + 1 < v) v = d[down - 1] + 1;
      }
      d[i] = v;
    }
  }
  return d;
}

/** Steps stored a pixel by stepCosts: to the right, below, below-right and below-left neighbours. */
const STEPS = 4;

/**
 * The cost of a step from each pixel of the domain to its right, lower, lower-right and lower-left neighbour
 * (Infinity where the neighbour is outside it): its length plus edgeWeight times their colour difference.
 * @param {PhotoWindow} photo @param {Bounds} b @param {Uint8Array} inside @param {number} edgeWeight
 */
function stepCosts(photo, b, inside, edgeWeight) {
  const w = b.x1 - b.x0;
  const h = b.y1 - b.y0;
  const { rgb } = photo;
  const row = photo.width;
  const cost = new Float32Array(w * h * STEPS).fill(Infinity);
  /** @param {number} p @param {number} q indices in the photo window */
  const colour = (p, q) => {
    const dr = rgb[p * 3] - rgb[q * 3];
    const dg = rgb[p * 3 + 1] - rgb[q * 3 + 1];
    const db = rgb[p * 3 + 2] - rgb[q * 3 + 2];
    return Math.sqrt(dr * dr + dg * dg + db * db);
  };
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const here = inside[i];
      if (!here) continue;
      const p = at(photo, x + b.x0, y + b.y0);
      const c = i * STEPS;
      // A step between two fixed sources is never taken.
      const useful = (/** @type {number} */ j) => inside[j] === 1 || (inside[j] === 2 && here === 1);
      if (x + 1 < w && useful(i + 1)) cost[c] = 1 + edgeWeight * colour(p, p + 1);
      if (y + 1 < h) {
        if (useful(i + w)) cost[c + 1] = 1 + edgeWeight * colour(p, p + row);
        if (x + 1 < w && useful(i + w + 1)) cost[c + 2] = Math.SQRT2 + edgeWeight * colour(p, p + row + 1);
        if (x > 0 && useful(i + w - 1)) cost[c + 3] = Math.SQRT2 + edgeWeight * colour(p, p + row - 1);
      }
    }
  }
  return cost;
}

/**
 * One forward and one backward raster pass of a chamfer distance over the domain, for both distances at once,
 * with stepCosts' costs: distances shrink towards their geodesic values as passes repeat.
 * @param {Float32Array} a @param {Float32Array} d @param {Float32Array} cost @param {Uint8Array} inside
 * @param {number} w @param {number} h
 */
function sweep(a, d, cost, inside, w, h) {
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (inside[i] !== 1) continue;
      let ba = a[i];
      let bd = d[i];
      let j = i - 1;
      let c = x > 0 ? cost[j * STEPS] : Infinity;
      if (a[j] + c < ba) ba = a[j] + c;
      if (d[j] + c < bd) bd = d[j] + c;
      if (y > 0) {
        j = i - w;
        c = cost[j * STEPS + 1];
        if (a[j] + c < ba) ba = a[j] + c;
        if (d[j] + c < bd) bd = d[j] + c;
        j = i - w - 1;
        c = x > 0 ? cost[j * STEPS + 2] : Infinity;
        if (a[j] + c < ba) ba = a[j] + c;
        if (d[j] + c < bd) bd = d[j] + c;
        j = i - w + 1;
        c = x + 1 < w ? cost[j * STEPS + 3] : Infinity;
        if (a[j] + c < ba) ba = a[j] + c;
        if (d[j] + c < bd) bd = d[j] + c;
      }
      a[i] = ba;
      d[i] = bd;
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      const i = y * w + x;
      if (inside[i] !== 1) continue;
      let ba = a[i];
      let bd = d[i];
      const k = i * STEPS;
      let j = i + 1;
      let c = x + 1 < w ? cost[k] : Infinity;
      if (a[j] + c < ba) ba = a[j] + c;
      if (d[j] + c < bd) bd = d[j] + c;
      if (y + 1 < h) {
        j = i + w;
        c = cost[k + 1];
        if (a[j] + c < ba) ba = a[j] + c;
        if (d[j] + c < bd) bd = d[j] + c;
        j = i + w + 1;
        c = x + 1 < w ? cost[k + 2] : Infinity;
        if (a[j] + c < ba) ba = a[j] + c;
        if (d[j] + c < bd) bd = d[j] + c;
        j = i + w - 1;
        c = x > 0 ? cost[k + 3] : Infinity;
        if (a[j] + c < ba) ba = a[j] + c;
        if (d[j] + c < bd) bd = d[j] + c;
      }
      a[i] = ba;
      d[i] = bd;
    }
  }
}

/**
 * The bounds a run of strokes can touch, with `margin` pixels around its discs, clipped to the image.
 * Null when it lies wholly outside.
 * @param {Stroke[]} strokes @param {number} width @param {number} height @param {number} margin
 * @returns {Bounds | null}
 */
export function strokeBounds(strokes, width, height, margin) {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const s of strokes) {
    const r = s.size / 2 + margin;
    for (const [x, y] of s.points) {
      x0 = Math.min(x0, x - r);
      y0 = Math.min(y0, y - r);
      x1 = Math.max(x1, x + r);
      y1 = Math.max(y1, y + r);
    }
  }
  const b = {
    x0: Math.max(0, Math.floor(x0)),
    y0: Math.max(0, Math.floor(y0)),
    x1: Math.min(width, Math.ceil(x1) + 1),
    y1: Math.min(height, Math.ceil(y1) + 1),
  };
  return b.x0 < b.x1 && b.y0 < b.y1 ? b : null;
}

/**
 * Consecutive strokes of the same mode, as runs: a run is painted at once, and runs in order (a restore after
 * an erase over the same pixels restores them).
 * @param {Stroke[]} strokes
 * @returns {Stroke[][]}
 */
export function strokeRuns(strokes) {
  /** @type {Stroke[][]} */
  const runs = [];
  for (const s of strokes) {
    const last = runs[runs.length - 1];
    if (last && last[0].mode === s.mode) last.push(s);
    else runs.push([s]);
  }
  return runs;
}

/**
 * The pixels the strokes' runs will work over (each run's bounds, with what snap adds around them): a request
 * whose runs alternate erase and restore over a large photo would work over each run's bounds in turn.
 * @param {Stroke[]} strokes @param {number} width @param {number} height @param {SnapOptions | null} snap
 */
export function paintedArea(strokes, width, height, snap) {
  let area = 0;
  for (const run of strokeRuns(strokes)) {
    const b = strokeBounds(run, width, height, runMargin(run, snap));
    if (b) area += (b.x1 - b.x0) * (b.y1 - b.y0);
  }
  return area;
}

/**
 * The window of the cut-out a request's strokes can read the photo in: every run's bounds, with what snap looks
 * at around them. Null when every stroke lies outside the cut-out.
 * @param {Stroke[]} strokes @param {number} width @param {number} height @param {SnapOptions | null} snap
 * @returns {Bounds | null}
 */
export function strokesWindow(strokes, width, height, snap) {
  /** @type {Bounds | null} */
  let out = null;
  for (const run of strokeRuns(strokes)) {
    const b = strokeBounds(run, width, height, runMargin(run, snap));
    if (!b) continue;
    out = out
      ? {
          x0: Math.min(out.x0, b.x0),
          y0: Math.min(out.y0, b.y0),
          x1: Math.max(out.x1, b.x1),
          y1: Math.max(out.y1, b.y1),
        }
      : b;
  }
  return out;
}

/**
 * The photo over a window of the cut-out (strokesWindow's), copied out of the whole photo's RGB and its own
 * transparency: what a touch-up reads of the photo, handed to a thread without the rest.
 * @param {{ rgb: Uint8Array, alpha: Uint8Array | null, width: number }} photo @param {Bounds | null} window
 * @returns {PhotoWindow}
 */
export function photoWindow(photo, window) {
  const b = window ?? { x0: 0, y0: 0, x1: 0, y1: 0 };
  const w = b.x1 - b.x0;
  const h = b.y1 - b.y0;
  const rgb = new Uint8Array(w * h * 3);
  const alpha = photo.alpha ? new Uint8Array(w * h) : null;
  for (let y = 0; y < h; y++) {
    const from = (y + b.y0) * photo.width + b.x0;
    rgb.set(photo.rgb.subarray(from * 3, (from + w) * 3), y * w * 3);
    if (alpha && photo.alpha) alpha.set(photo.alpha.subarray(from, from + w), y * w);
  }
  return { rgb, alpha, x0: b.x0, y0: b.y0, width: w, height: h };
}

/** What snap looks at around a run's discs, in pixels. @param {Stroke[]} run @param {SnapOptions | null} snap */
function runMargin(run, snap) {
  if (!snap) return 0;
  const o = { ...SNAP_DEFAULTS, ...snap };
  const radius = Math.max(...run.map((s) => s.size / 2));
  return Math.max(o.ring, Math.round(o.reach * radius)) + o.ring;
}

/**
 * Applies strokes to a cut-out in place: its straight RGBA pixels, and the photo (its RGB, and its own
 * transparency, which caps a restore) over a window that holds strokesWindow's. An erased pixel becomes
 * transparent black, as the cut-out writer leaves the background; a restored one the photo's colour, opaque.
 * @param {{ rgba: Uint8Array, width: number, height: number }} cutout
 * @param {PhotoWindow} photo
 * @param {Stroke[]} strokes
 * @param {SnapOptions | null} snap null: plain discs
 * @returns {number} pixels changed
 */
export function applyStrokes(cutout, photo, strokes, snap) {
  const { rgba, width, height } = cutout;
  const o = snap ? { ...SNAP_DEFAULTS, ...snap } : null;
  let changed = 0;
  for (const run of strokeRuns(strokes)) {
    const radius = Math.max(...run.map((s) => s.size / 2));
    const b = strokeBounds(run, width, height, runMargin(run, o));
    if (!b) continue;
    if (b.x0 < photo.x0 || b.y0 < photo.y0 || b.x1 > photo.x0 + photo.width || b.y1 > photo.y0 + photo.height)
      throw new RangeError('applyStrokes: the photo window does not hold the strokes');
    const mode = run[0].mode;
    const change = changedPixels({ rgba, width, photo }, paintStrokes(run, b), mode, b, radius, o);
    const w = b.x1 - b.x0;
    for (let y = b.y0; y < b.y1; y++) {
      for (let x = b.x0; x < b.x1; x++) {
        if (!change[(y - b.y0) * w + x - b.x0]) continue;
        const q = (y * width + x) * 4;
        const p = at(photo, x, y);
        const a = mode === 'erase' ? 0 : (photo.alpha?.[p] ?? 255);
        if (rgba[q + 3] === a) continue;
        changed++;
        if (a === 0) rgba[q] = rgba[q + 1] = rgba[q + 2] = rgba[q + 3] = 0;
        else {
          rgba[q] = photo.rgb[p * 3];
          rgba[q + 1] = photo.rgb[p * 3 + 1];
          rgba[q + 2] = photo.rgb[p * 3 + 2];
          rgba[q + 3] = a;
        }
      }
    }
  }
  return changed;
}
