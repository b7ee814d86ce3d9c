// The inside of a subject the model has found, made opaque. The model's mask falls short of 255 inside some solid
// products (a white mug on a white backdrop: 199-255 inside), and a cut-out that shows its background through the
// product is wrong on any background but white. Done on the edge refinement's grid mask, before the refinement
// (the cut-out writer's grid task), so the refinement finds nothing to refine inside:
//  - cells deep inside the subject (its cells >= 128) are raised towards 255 with their depth, so the outline,
//    where soft alpha belongs (anti-aliasing, hair and fur, a glass's rim), is left as the model made it;
//  - small enclosed specks under 128 that the model was never sure of (none under HOLE_FILL.minAlpha) are filled: a
//    patterned product's specks, not a hole that shows the background (a handle's gap is larger, or clear).
// What is still see-through inside afterwards is measured (`seeThrough` of the answer) and the check flags it.
// Plain JavaScript: the cut-out writer's threads run it. The work is done within the subject's box (and a cell
// around it): everything outside it is background.

/**
 * Where the raising starts and where it is whole, in the grid's long side: a cell at `start` or less from the
 * subject's outline (and at least `minStart` cells) is left as it is, one at `full` or more becomes 255, and those
 * between are raised in proportion. Chosen against the drawn masks (npm run bench -- edges).
 */
const SOLID_INTERIOR = Object.freeze({ start: 0.0025, full: 0.005, minStart: 2 });

/** Enclosed specks under 128 that are filled: at most `area` of the grid's cells, none of their cells under `minAlpha`. */
const HOLE_FILL = Object.freeze({ area: 0.002, minAlpha: 64 });

/** Chamfer weights of a step to a side and to a corner neighbour (3-4: within 8% of the Euclidean distance). */
const SIDE = 3;
const CORNER = 4;

/** Cell kinds of the padded working grid. */
const OUTSIDE = 1;
const SUBJECT = 2;
const HOLE = 3;
/** Padding beyond the grid's border: background for the flood, but no outline (the frame cuts the subject). */
const FRAME = 4;

/**
 * Two chamfer distances (3-4) over a padded grid at once, in one forward and one backward pass: `inner` from the
 * nearest cell that is not subject (the subject's outline, holes included; the frame is none), `outer` from the
 * nearest background outside the silhouette. Only the box's cells are computed; the padding is read as it is.
 * @param {Uint8Array} kind @param {number} W @param {number} H
 */
function chamfers(kind, W, H) {
  const inner = new Uint16Array(W * H);
  const outer = new Uint16Array(W * H);
  for (let i = 0; i < kind.length; i++) {
    const k = kind[i];
    inner[i] = k === SUBJECT || k === FRAME ? 0xffff : 0;
    outer[i] = k === OUTSIDE ? 0 : 0xffff;
  }
  for (let y = 1; y < H - 1; y++) {
    for (let i = y * W + 1, end = y * W + W - 1; i < end; i++) {
      const up = i - W;
      let v = inner[i];
      if (v !== 0) {
        if (inner[i - 1] + SIDE < v) v = inner[i - 1] + SIDE;
        if (inner[up] + SIDE < v) v = inner[up] + SIDE;
        if (inner[up - 1] + CORNER < v) v = inner[up - 1] + CORNER;
        if (inner[up + 1] + CORNER < v) v = inner[up + 1] + CORNER;
        inner[i] = v;
      }
      v = outer[i];
      if (v !== 0) {
        if (outer[i - 1] + SIDE < v) v = outer[i - 1] + SIDE;
        if (outer[up] + SIDE < v) v = outer[up] + SIDE;
        if (outer[up - 1] + CORNER < v) v = outer[up - 1] + CORNER;
        if (outer[up + 1] + CORNER < v) v = outer[up + 1] + CORNER;
        outer[i] = v;
      }
    }
  }
  for (let y = H - 2; y >= 1; y--) {
    for (let i = y * W + W - 2, end = y * W; i > end; i--) {
      const down = i + W;
      let v = inner[i];
      if (v !== 0) {
        if (inner[i + 1] + SIDE < v) v = inner[i + 1] + SIDE;
        if (inner[down] + SIDE < v) v = inner[down] + SIDE;
        if (inner[down + 1] + CORNER < v) v = inner[down + 1] + CORNER;
        if (inner[down - 1] + CORNER < v) v = inner[down - 1] + CORNER;
        inner[i] = v;
      }
      v = outer[i];
      if (v !== 0) {
        if (outer[i + 1] + SIDE < v) v = outer[i + 1] + SIDE;
        if (outer[down] + SIDE < v) v = outer[down] + SIDE;
        if (outer[down + 1] + CORNER < v) v = outer[down + 1] + CORNER;
        if (outer[down - 1] + CORNER < v) v = outer[down - 1] + CORNER;
        outer[i] = v;
      }
    }
  }
  return { inner, outer };
}

/**
 * Fills the grid mask's small unsure specks and raises the cells deep inside its subject towards 255, in place (see
 * the file's header), and measures what stays see-through inside: of the cells of the subject's silhouette (all but
 * the background that reaches beyond its box) at least `full` deep from that background, the share at 16-239 (clear
 * holes, under 16, are meant to show the background), and their box on the grid.
 * @param {Uint8Array} alpha the grid mask, one byte a cell @param {number} w @param {number} h
 * @returns {{ changed: number, seeThrough: { share: number, box: { x: number, y: number, width: number, height: number } | null } }}
 */
export function solidInterior(alpha, w, h) {
  // The subject's box, and a working grid over it with a cell of background all around (the padding).
  let x0 = w;
  let y0 = h;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      if (alpha[i] < 128) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  if (x1 < 0) return { changed: 0, seeThrough: { share: 0, box: null } };
  const W = x1 - x0 + 3;
  const H = y1 - y0 + 3;
  const kind = new Uint8Array(W * H).fill(OUTSIDE);
  for (let y = y0; y <= y1; y++) {
    for (let k = (y - y0 + 1) * W + 1, i = y * w + x0, end = y * w + x1; i <= end; i++, k++)
      kind[k] = alpha[i] >= 128 ? SUBJECT : 0;
  }
  // Where the box reaches the grid's border, its padding is beyond the frame.
  for (let Y = 0; Y < H; Y++) {
    if (x0 === 0) kind[Y * W] = FRAME;
    if (x1 === w - 1) kind[Y * W + W - 1] = FRAME;
  }
  for (let X = 0; X < W; X++) {
    if (y0 === 0) kind[X] = FRAME;
    if (y1 === h - 1) kind[(H - 1) * W + X] = FRAME;
  }
  // Background reached from around the box is outside; what is left under 128 is a hole.
  const stack = new Int32Array(W * H);
  let top = 0;
  for (let i = 0; i < W * H; i++) if (kind[i] === OUTSIDE || kind[i] === FRAME) stack[top++] = i;
  /** Marks cell j as `k` and queues it. @param {number} j @param {number} k */
  const mark = (j, k) => {
    kind[j] = k;
    stack[top++] = j;
  };
  // The padding's own cells are outside already, so a flood from them never steps past the grid: only the box's
  // cells, which have all four neighbours, are ever queued after the first.
  while (top) {
    const i = stack[--top];
    const x = i % W;
    if (x > 0 && kind[i - 1] === 0) mark(i - 1, OUTSIDE);
    if (x < W - 1 && kind[i + 1] === 0) mark(i + 1, OUTSIDE);
    if (i >= W && kind[i - W] === 0) mark(i - W, OUTSIDE);
    if (i + W < kind.length && kind[i + W] === 0) mark(i + W, OUTSIDE);
  }
  let changed = 0;
  const most = HOLE_FILL.area * w * h;
  const cells = new Int32Array(W * H);
  for (let start = 0; start < kind.length; start++) {
    if (kind[start] !== 0) continue;
    // One hole: its cells, how many, and its lowest alpha.
    let n = 0;
    let lowest = 255;
    kind[start] = HOLE;
    stack[top++] = start;
    while (top) {
      const i = stack[--top];
      cells[n++] = i;
      const gx = (i % W) - 1 + x0;
      const gy = ((i / W) | 0) - 1 + y0;
      const a = alpha[gy * w + gx];
      if (a < lowest) lowest = a;
      if (kind[i - 1] === 0) mark(i - 1, HOLE);
      if (kind[i + 1] === 0) mark(i + 1, HOLE);
      if (kind[i - W] === 0) mark(i - W, HOLE);
      if (kind[i + W] === 0) mark(i + W, HOLE);
    }
    if (n > most || lowest < HOLE_FILL.minAlpha) continue;
    for (let k = 0; k < n; k++) {
      const i = cells[k];
      kind[i] = SUBJECT;
      const gx = (i % W) - 1 + x0;
      const gy = ((i / W) | 0) - 1 + y0;
      alpha[gy * w + gx] = 255;
      changed++;
    }
  }
  const long = Math.max(w, h);
  const d0 = Math.max(SOLID_INTERIOR.minStart, SOLID_INTERIOR.start * long) * SIDE;
  const d1 = Math.max(d0 + SIDE, SOLID_INTERIOR.full * long * SIDE);
  const { inner, outer } = chamfers(kind, W, H);
  for (let y = y0; y <= y1; y++) {
    for (let k = (y - y0 + 1) * W + 1, i = y * w + x0, end = y * w + x1; i <= end; i++, k++) {
      const v = inner[k];
      if (v <= d0 || alpha[i] === 255) continue;
      const s = v >= d1 ? 1 : (v - d0) / (d1 - d0);
      const a = Math.round(alpha[i] + (255 - alpha[i]) * s);
      if (a !== alpha[i]) {
        alpha[i] = a;
        changed++;
      }
    }
  }
  // What stays see-through inside the silhouette.
  let inside = 0;
  let seen = 0;
  let bx0 = w;
  let by0 = h;
  let bx1 = -1;
  let by1 = -1;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0, k = (y - y0 + 1) * W + 1; x <= x1; x++, k++) {
      if (outer[k] < d1) continue;
      inside++;
      const a = alpha[y * w + x];
      if (a < 16 || a > 239) continue;
      seen++;
      if (x < bx0) bx0 = x;
      if (x > bx1) bx1 = x;
      if (y < by0) by0 = y;
      if (y > by1) by1 = y;
    }
  }
  return {
    changed,
    seeThrough: {
      share: inside ? seen / inside : 0,
      box: bx1 < 0 ? null : { x: bx0, y: by0, width: bx1 - bx0 + 1, height: by1 - by0 + 1 },
    },
  };
}
