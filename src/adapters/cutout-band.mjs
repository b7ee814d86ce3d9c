// The cut-out of an opaque photo's band of rows as PNG scanlines, in two steps, so that most of the
// work is done before the model's mask exists:
//  1. opaqueBand (the photo alone, while the model runs): the band's rows laid out as if every pixel
//     were opaque, "Up"-filtered as bandLines files them, and each row's block sums for the thumbnail.
//  2. cutoutBand (once the mask is known): the edge refinement's grid work for the band, then only the
//     pixels that differ from step 1 are written: the edge band, the background (zeros) and the rows
//     where the two meet. On a product photo that leaves most of the subject's bytes as they were.
// The result is bit for bit bandLines(refineRows(...)) for a photo without transparency of its own
// (test/unit/cutout-band.test.ts); photos with it take that general path. Plain JavaScript: it runs in
// the cut-out writer's worker threads (cutout-writer.worker.mjs).
import { edgePixelAt, refineBandGrid } from './edge-refine.mjs';
import { previewRow } from './png-strips.mjs';

/** Pixel classes along a row: background (alpha 0), subject (alpha 255, the photo's colour), edge (computed). */
const BACKGROUND = 0;
const SUBJECT = 1;
const EDGE = 2;
/** Byte order of this host: a pixel's four bytes are packed into one 32-bit number. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * @typedef {{ lines: Uint8Array, rowSums: Uint16Array }} OpaqueBand
 *   `lines`: PNG scanlines (filter byte, then RGBA) of the rows with alpha 255, the first unfiltered and
 *   the rest "Up"; `rowSums`: per row and thumbnail block, the sums of R, G and B across the block's columns
 */

/**
 * Step 1: the band's rows as if fully opaque (see OpaqueBand). Needs the photo only.
 * @param {Uint8Array} rgb the whole photo, RGB
 * @param {number} width @param {number} y0 @param {number} y1
 * @param {number} factor the thumbnail reduction (bandLines' `factor`)
 * @returns {OpaqueBand}
 */
export function opaqueBand(rgb, width, y0, y1, factor) {
  const rows = y1 - y0;
  const stride = 1 + width * 4;
  const pw = Math.ceil(width / factor);
  // A memory of its own (never Node's shared pool): it is handed between threads.
  const lines = Buffer.allocUnsafeSlow(stride * rows);
  // A block's sum is at most factor * 255: 16 bits hold it for any factor up to 257.
  const rowSums = new Uint16Array(rows * pw * 3);
  let above = new Uint32Array(width);
  let row = new Uint32Array(width);
  const up = new Uint32Array(width);
  const upBytes = new Uint8Array(up.buffer);
  for (let j = 0; j < rows; j++) {
    const from = (y0 + j) * width * 3;
    const sums = j * pw * 3;
    for (let x = 0, p = from; x < width; x++, p += 3) {
      const r = rgb[p], g = rgb[p + 1], b = rgb[p + 2];
      const c = LITTLE_ENDIAN ? (r | (g << 8) | (b << 16) | 0xff000000) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | 0xff) >>> 0;
      row[x] = c;
      // Each byte minus the one above it modulo 256, four at once (bandLines' arithmetic).
      const q = above[x];
      up[x] = ((c | 0x80808080) - (q & 0x7f7f7f7f)) ^ ((c ^ ~q) & 0x80808080);
      const s = sums + ((x / factor) | 0) * 3;
      rowSums[s] += r;
      rowSums[s + 1] += g;
      rowSums[s + 2] += b;
    }
    const o = j * stride;
    lines[o] = j === 0 ? 0 : 2;
    lines.set(upBytes, o + 1);
    const done = above;
    above = row;
    row = done;
  }
  return { lines, rowSums };
}

/**
 * Step 2: bandLines(refineRows(img, { low }, y0, y1)) for a photo without transparency of its own: the
 * band's PNG scanlines and its thumbnail reduction, `pre` (opaqueBand of the same rows) changed in place.
 * @param {{ rgb: Uint8Array, width: number, height: number }} img
 * @param {{ rgb: Uint8Array, alpha: Uint8Array }} low the photo and its mask at refineGrid's size
 * @param {number} y0 @param {number} y1 @param {number} factor
 * @param {OpaqueBand} [pre]
 * @returns {{ lines: Uint8Array, preview: { data: Uint8Array, width: number, height: number } }}
 */
export function cutoutBand(img, low, y0, y1, factor, pre = opaqueBand(img.rgb, img.width, y0, y1, factor)) {
  const { rgb, width: W, height: H } = img;
  const g = refineBandGrid({ rgb, alpha: null, width: W, height: H }, { low }, y0, y1);
  const { w, h, sy, g0, P, band } = g;
  const rows = y1 - y0;
  const stride = 1 + W * 4;
  const { lines, rowSums } = pre;
  const columns = columnCells(g);
  const { left, right, across } = columns;

  // Per row, at grid resolution: cells the edge band reaches (either grid row the row is interpolated
  // between) and subject cells (any grid row whose pixel span covers the row).
  const bandCells = new Uint8Array(w);
  const subjectCells = new Uint8Array(w);
  // The pixel classes of this row and the row above, and their spans (classSpans).
  let cls = new Uint8Array(W);
  let clsAbove = new Uint8Array(W);
  let spans = newSpans(w);
  let spansAbove = newSpans(w);
  // Edge pixels' final values (R | G << 8 | B << 16 | A << 24) of this row and the row above.
  let edge = new Uint32Array(W);
  let edgeAbove = new Uint32Array(W);
  const PIXEL = new Int32Array(4);

  const pw = Math.ceil(W / factor);
  const ph = Math.ceil(rows / factor);
  const preview = new Uint8Array(pw * ph * 4);
  const sums = new Float64Array(pw * 4);

  for (let j = 0; j < rows; j++) {
    const y = y0 + j;
    const first = j === 0;
    const gy = Math.min(h - 1, Math.max(0, (y + 0.5) / sy - 0.5));
    const ya = gy | 0;
    const down = gy - ya;
    const ka = (ya - g0) * w;
    const kb = (Math.min(h - 1, ya + 1) - g0) * w;
    // Grid rows whose pixel span covers row y (refineRows' fill): the one it falls in, and a neighbour
    // whose span reaches over it.
    const c = Math.min(h - 1, Math.floor(y / sy));
    const ca = (c > 0 && Math.ceil(c * sy) > y ? c - 1 : c) - g0;
    const cb = (c + 1 < h && Math.floor((c + 1) * sy) <= y ? c + 1 : c) - g0;
    for (let cx = 0; cx < w; cx++) {
      bandCells[cx] = band[ka + cx] | band[kb + cx];
      subjectCells[cx] = P[ca * w + cx] >= 0.5 || P[cb * w + cx] >= 0.5 ? 1 : 0;
    }
    classSpans(columns, bandCells, subjectCells, cls, spans);

    const o = j * stride + 1;
    const at = y * W * 3;
    const above = at - W * 3;
    // Walk this row's spans and the row above's together. Subject under subject (or on the band's
    // first row, which is unfiltered) keeps the opaque layout; background under background is zeros;
    // everything else is written pixel by pixel.
    const n = spans.count;
    const sa = first ? spans : spansAbove;
    for (let i = 0, k = 0, x = 0; x < W; ) {
      while (spans.end[i] <= x) i++;
      while (sa.end[k] <= x) k++;
      const end = Math.min(spans.end[i], sa.end[k]);
      const t = spans.kind[i], ta = sa.kind[k];
      if (t === SUBJECT && ta === SUBJECT) {
        x = end;
        continue;
      }
      if (t === BACKGROUND && ta === BACKGROUND) {
        lines.fill(0, o + x * 4, o + end * 4);
        x = end;
        continue;
      }
      for (; x < end; x++) {
        const c = cls[x];
        const ab = first ? c : clsAbove[x];
        if (c === SUBJECT && (first || ab === SUBJECT)) continue;
        let r = 0, gr = 0, b = 0, a = 0;
        if (c === SUBJECT) {
          r = rgb[at + x * 3];
          gr = rgb[at + x * 3 + 1];
          b = rgb[at + x * 3 + 2];
          a = 255;
        } else if (c === EDGE) {
          const p = at + x * 3;
          const q = edgePixelAt(g, ka, kb, down, left[x], right[x], across[x], rgb[p], rgb[p + 1], rgb[p + 2], 0, PIXEL);
          a = Math.round(q * 255);
          if (a !== 0) {
            if (PIXEL[3]) {
              r = PIXEL[0];
              gr = PIXEL[1];
              b = PIXEL[2];
            } else {
              r = rgb[p];
              gr = rgb[p + 1];
              b = rgb[p + 2];
            }
          }
          edge[x] = (r | (gr << 8) | (b << 16) | (a << 24)) >>> 0;
        }
        // The row above's bytes (none on the band's first row).
        let ra = 0, ga = 0, ba = 0, aa = 0;
        if (!first && ab === SUBJECT) {
          ra = rgb[above + x * 3];
          ga = rgb[above + x * 3 + 1];
          ba = rgb[above + x * 3 + 2];
          aa = 255;
        } else if (!first && ab === EDGE) {
          const v = edgeAbove[x];
          ra = v & 255;
          ga = (v >>> 8) & 255;
          ba = (v >>> 16) & 255;
          aa = v >>> 24;
        }
        const p = o + x * 4;
        lines[p] = (r - ra) & 255;
        lines[p + 1] = (gr - ga) & 255;
        lines[p + 2] = (b - ba) & 255;
        lines[p + 3] = (a - aa) & 255;
      }
    }

    // The thumbnail's sums for this row: whole blocks inside a subject span from the opaque sums, the
    // rest pixel by pixel.
    const sumsAt = j * pw * 3;
    for (let i = 0; i < n; i++) {
      const t = spans.kind[i];
      if (t === BACKGROUND) continue;
      const xs = i === 0 ? 0 : spans.end[i - 1];
      const xe = spans.end[i];
      let x = xs;
      if (t === SUBJECT) {
        // Whole blocks in [xs, xe): from the first block boundary at or after xs.
        const b0 = Math.ceil(xs / factor);
        const b1 = xe === W ? pw : Math.floor(xe / factor);
        for (; x < Math.min(xe, b0 * factor); x++) addSubject(x);
        for (let bx = b0; bx < b1; bx++) {
          const k = sumsAt + bx * 3;
          const s = bx * 4;
          sums[s] += rowSums[k] * 255;
          sums[s + 1] += rowSums[k + 1] * 255;
          sums[s + 2] += rowSums[k + 2] * 255;
          sums[s + 3] += 255 * (Math.min(W, (bx + 1) * factor) - bx * factor);
        }
        x = Math.max(x, b1 * factor);
        for (; x < xe; x++) addSubject(x);
        continue;
      }
      for (; x < xe; x++) {
        const cl = cls[x];
        if (cl === SUBJECT) addSubject(x);
        else if (cl === EDGE) {
          const v = edge[x];
          const a = v >>> 24;
          if (a === 0) continue;
          const s = ((x / factor) | 0) * 4;
          sums[s] += (v & 255) * a;
          sums[s + 1] += ((v >>> 8) & 255) * a;
          sums[s + 2] += ((v >>> 16) & 255) * a;
          sums[s + 3] += a;
        }
      }
    }

    const swapCls = cls;
    cls = clsAbove;
    clsAbove = swapCls;
    const swapSpans = spans;
    spans = spansAbove;
    spansAbove = swapSpans;
    const swapEdge = edge;
    edge = edgeAbove;
    edgeAbove = swapEdge;

    if ((j + 1) % factor === 0 || j === rows - 1) previewRow(sums, preview, W, factor, j);

    /** A subject pixel's share of the thumbnail's sums (alpha 255, the photo's colour). @param {number} x */
    function addSubject(x) {
      const s = ((x / factor) | 0) * 4;
      sums[s] += rgb[at + x * 3] * 255;
      sums[s + 1] += rgb[at + x * 3 + 1] * 255;
      sums[s + 2] += rgb[at + x * 3 + 2] * 255;
      sums[s + 3] += 255;
    }
  }
  return { lines, preview: { data: preview, width: pw, height: ph } };
}

/**
 * @typedef {{ left: Int32Array, right: Int32Array, across: Float64Array, coverFirst: Int32Array, coverLast: Int32Array,
 *   interiorFrom: Int32Array, interiorTo: Int32Array, width: number, cells: number }} ColumnCells
 *   per pixel column: the two grid columns it is interpolated between and how far across, and the first and last grid
 *   column whose pixel span covers it (refineRows fills a pixel with the subject when any covering cell
 *   is subject; neighbouring cells' spans may share a column). A run of grid columns [c0, c1) decides
 *   alone the class of the pixel columns [interiorFrom[c0], interiorTo[c1]): every cell they read is in it.
 */

/**
 * @param {import('./edge-refine.mjs').BandGrid} g
 * @returns {ColumnCells}
 */
function columnCells(g) {
  const { W, w, sx } = g;
  const coverFirst = new Int32Array(W).fill(-1);
  const coverLast = new Int32Array(W);
  for (let cx = 0; cx < w; cx++) {
    for (let x = Math.floor(cx * sx), end = Math.min(W, Math.ceil((cx + 1) * sx)); x < end; x++) {
      if (coverFirst[x] < 0) coverFirst[x] = cx;
      coverLast[x] = cx;
    }
  }
  const left = new Int32Array(W);
  const right = new Int32Array(W);
  const across = new Float64Array(W);
  for (let x = 0; x < W; x++) {
    // edgePixel's arithmetic, once per column.
    const gx = Math.min(w - 1, Math.max(0, (x + 0.5) / sx - 0.5));
    left[x] = gx | 0;
    right[x] = Math.min(w - 1, left[x] + 1);
    across[x] = gx - left[x];
  }
  // All four indices never decrease along the row, so each bound is found in one sweep.
  const interiorFrom = new Int32Array(w + 1);
  const interiorTo = new Int32Array(w + 1);
  for (let c = 0, x = 0; c <= w; c++) {
    while (x < W && Math.min(left[x], coverFirst[x]) < c) x++;
    interiorFrom[c] = x;
  }
  for (let c = 0, x = 0; c <= w; c++) {
    while (x < W && Math.max(right[x], coverLast[x]) < c) x++;
    interiorTo[c] = x;
  }
  return { left, right, across, coverFirst, coverLast, interiorFrom, interiorTo, width: W, cells: w };
}

/**
 * @typedef {{ end: Int32Array, kind: Uint8Array, count: number }} Spans
 *   a row cut into spans [end[i - 1], end[i]) (the first from 0): BACKGROUND or SUBJECT when every pixel
 *   of it is, MIXED when its pixels' classes must be read one by one
 */
const MIXED = 3;

/** @param {number} cells */
function newSpans(cells) {
  // At most a uniform span and a mixed one per grid column, and one more.
  return { end: new Int32Array(2 * cells + 2), kind: new Uint8Array(2 * cells + 2), count: 0 };
}

/**
 * The classes of one row's pixels, into `cls`, and its spans, from the row's cells: runs of cells
 * away from the edge band give uniform spans (filled at once), and the pixels between them are
 * classed one by one.
 * @param {ColumnCells} columns @param {Uint8Array} bandCells @param {Uint8Array} subjectCells
 * @param {Uint8Array} cls @param {Spans} out
 */
function classSpans(columns, bandCells, subjectCells, cls, out) {
  const { left, right, coverFirst, coverLast, interiorFrom, interiorTo, width: W, cells: w } = columns;
  let count = 0;
  let x = 0;
  /** Classes the pixels [x, to) one by one, as one mixed span. @param {number} to */
  const mixed = (to) => {
    if (to <= x) return;
    for (; x < to; x++) {
      cls[x] = bandCells[left[x]] | bandCells[right[x]] ? EDGE : subjectCells[coverFirst[x]] | subjectCells[coverLast[x]] ? SUBJECT : BACKGROUND;
    }
    out.end[count] = to;
    out.kind[count++] = MIXED;
  };
  for (let c0 = 0; c0 < w; ) {
    if (bandCells[c0]) {
      c0++;
      continue;
    }
    const s = subjectCells[c0];
    let c1 = c0 + 1;
    while (c1 < w && !bandCells[c1] && subjectCells[c1] === s) c1++;
    const from = Math.max(x, interiorFrom[c0]);
    const to = interiorTo[c1];
    if (to > from) {
      mixed(from);
      const kind = s ? SUBJECT : BACKGROUND;
      cls.fill(kind, from, to);
      out.end[count] = to;
      out.kind[count++] = kind;
      x = to;
    }
    c0 = c1;
  }
  mixed(W);
  out.count = count;
}
