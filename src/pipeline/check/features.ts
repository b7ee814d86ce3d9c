// What the automatic check measures on a finished mask: figures that separate broken cut-outs from
// clean ones, and where on the photo each one points. Computed on a 256x256 grid (the model's
// 1024x1024 mask and input reduced by libvips off the event loop), in a few milliseconds.
import type { BBox } from '../../domain/batch.schemas.ts';
import { boundary, components, dilate } from '../../imaging/raster.mjs';
import { colourModels, looksLikeBackground, looksLikeSubject, RING } from './colour-model.ts';

export const CHECK_GRID = 256;
/** How far (grid pixels) past the subject's edge subject-coloured pixels count as a possibly missing part. */
const MISS_BAND = 12;
/** The model's mask values (0..255) it left out but did not rule out: 5 < v < 128. */
export const UNCERTAIN_FROM = 6;
/** An outline pixel lies on flat colour when no channel changes by this much across any pixel within one of it. */
const FLAT_EDGE = 20;
/** Outline pixels this close to the frame are not judged for weak edges (the frame cuts subjects). */
const FRAME_MARGIN = 2;
/** Subject pixels (of CHECK_GRID) on one side of the photo for the subject to touch that side: about 1% of it. */
const FRAME_TOUCH = 3;

export interface CheckFeatures {
  /** Share of the grid that is subject (alpha >= 128). */
  fill: number;
  /** Pixels neither clearly subject nor background (alpha 26..229), per subject pixel. */
  soft: number;
  /** Share of the subject outside its largest connected part. */
  fragmented: number;
  /** Transparent pixels near the subject whose colour is the subject's and not the background's, per subject pixel. */
  missing: number;
  /** Subject pixels whose colour is the background's, per subject pixel. */
  backgroundKept: number;
  /** Transparent areas enclosed by the subject, per subject pixel. */
  holes: number;
  /** Subject edge pixels coloured like the background, per edge pixel. */
  spill: number;
  /** Semi-transparent pixels just outside the edge coloured like the background, per edge pixel. */
  halo: number;
  /** Sides of the photo the subject runs along, FRAME_TOUCH grid pixels or more of it on the side (0..4). */
  edgesTouched: number;
  /**
   * Pixels the model left out without ruling them out (mask 6..127), per subject pixel: where it was unsure,
   * the part it left out is often a part of the subject.
   */
  uncertain: number;
  /**
   * The largest single area of such doubt joined to the subject (one 4-connected piece of mask 6..127 with a
   * subject pixel among its 8 neighbours), per subject pixel: a part the model half saw and left out. Doubt
   * spread in specks over the background, or apart from the subject, counts nothing here.
   */
  uncertainPart: number;
  /**
   * Every such piece of doubt joined to the subject, per subject pixel: the same pixels as uncertainPart's
   * and its smaller neighbours, counted whether or not a pixel of doubt splits one piece in two or joins two:
   * a JPEG re-save does that, and the largest piece's count jumps with it (docs/check.md).
   */
  uncertainJoined: number;
  /** Share of the outline (away from the frame) that runs over flat colour, where the photo shows no edge. */
  weakEdges: number;
}

export interface CheckEvidence {
  features: CheckFeatures;
  /** Where each finding is, in grid pixels (CHECK_GRID x CHECK_GRID). */
  boxes: {
    soft: BBox | null;
    fragment: BBox | null;
    missing: BBox | null;
    backgroundKept: BBox | null;
    hole: BBox | null;
    spill: BBox | null;
    halo: BBox | null;
    uncertainPart: BBox | null;
    weakEdges: BBox | null;
  };
}

/** A bounding box grown pixel by pixel. */
class BoxOf {
  private minX = Infinity;
  private minY = Infinity;
  private maxX = -1;
  private maxY = -1;
  add(x: number, y: number): void {
    if (x < this.minX) this.minX = x;
    if (x > this.maxX) this.maxX = x;
    if (y < this.minY) this.minY = y;
    if (y > this.maxY) this.maxY = y;
  }
  get box(): BBox | null {
    return this.maxX < 0
      ? null
      : { x: this.minX, y: this.minY, width: this.maxX - this.minX + 1, height: this.maxY - this.minY + 1 };
  }
}

/**
 * @param grid the model's mask and input reduced to CHECK_GRID x CHECK_GRID (CheckRasters.checkGrid)
 */
export function measure(grid: { mask: Uint8Array; rgb: Uint8Array }): CheckEvidence {
  const m = grid.mask;
  const w = CHECK_GRID;
  const h = CHECK_GRID;
  const n = w * h;

  const opaque = new Uint8Array(n);
  const unsure = new Uint8Array(n);
  let subject = 0;
  let soft = 0;
  const softBox = new BoxOf();
  let uncertain = 0;
  for (let i = 0; i < n; i++) {
    if (m[i] >= 128) {
      opaque[i] = 1;
      subject++;
    } else if (m[i] >= UNCERTAIN_FROM) {
      uncertain++;
      unsure[i] = 1;
    }
    if (m[i] > 25 && m[i] < 230) {
      soft++;
      softBox.add(i % w, (i / w) | 0);
    }
  }
  const per = Math.max(subject, 1);
  const parts = components(opaque, w, h);
  let largest = 0;
  for (let k = 1; k < parts.sizes.length; k++) if (parts.sizes[k] > parts.sizes[largest]) largest = k;
  let second = 0;
  for (let k = 1; k < parts.sizes.length; k++)
    if (k !== largest && (second === 0 || parts.sizes[k] > parts.sizes[second])) second = k;

  const transparent = new Uint8Array(n);
  for (let i = 0; i < n; i++) transparent[i] = opaque[i] ? 0 : 1;
  const gaps = components(transparent, w, h);
  let holeArea = 0;
  let biggestHole = 0;
  for (let k = 1; k < gaps.sizes.length; k++) {
    if (gaps.touchesBorder[k]) continue;
    holeArea += gaps.sizes[k];
    if (biggestHole === 0 || gaps.sizes[k] > gaps.sizes[biggestHole]) biggestHole = k;
  }

  const model = colourModels(grid.rgb, 3, opaque, w, h);
  const near = dilate(opaque, w, h, MISS_BAND);
  const edge = boundary(opaque, w, h);
  const outerEdge = dilate(opaque, w, h, 2);
  let missing = 0;
  let kept = 0;
  let edgeCount = 0;
  let spill = 0;
  let halo = 0;
  const boxes = { missing: new BoxOf(), kept: new BoxOf(), spill: new BoxOf(), halo: new BoxOf() };
  for (let y = 0, i = 0; y < h; y++) {
    const ringRow = y < RING || y >= h - RING;
    for (let x = 0; x < w; x++, i++) {
      if (opaque[i]) {
        const bgLike = looksLikeBackground(model, i);
        if (bgLike && !ringRow && x >= RING && x < w - RING) {
          kept++;
          boxes.kept.add(x, y);
        }
        if (edge[i]) {
          edgeCount++;
          if (bgLike) {
            spill++;
            boxes.spill.add(x, y);
          }
        }
      } else {
        if (near[i] && looksLikeSubject(model, i)) {
          missing++;
          boxes.missing.add(x, y);
        }
        if (outerEdge[i] && m[i] > 25 && looksLikeBackground(model, i)) {
          halo++;
          boxes.halo.add(x, y);
        }
      }
    }
  }
  const weak = weakOutline(grid.rgb, edge, w, h);
  const doubt = largestPartJoined(unsure, opaque, w, h);

  // A side is touched where the subject runs along it, not where a speck of it does: `n` cells from `start`,
  // `step` apart.
  const touches = (start: number, step: number, n: number) => {
    let count = 0;
    for (let k = 0, i = start; k < n; k++, i += step) count += opaque[i];
    return count >= FRAME_TOUCH;
  };
  const sides = [touches(0, 1, w), touches((h - 1) * w, 1, w), touches(0, w, h), touches(w - 1, w, h)];
  const edgesTouched = sides.filter(Boolean).length;

  const round = (v: number) => Math.round(v * 10000) / 10000;
  return {
    features: {
      fill: round(subject / n),
      soft: round(soft / per),
      fragmented: round(subject ? 1 - (parts.sizes[largest] ?? 0) / subject : 0),
      missing: round(missing / per),
      backgroundKept: round(kept / per),
      holes: round(holeArea / per),
      spill: round(spill / Math.max(edgeCount, 1)),
      halo: round(halo / Math.max(edgeCount, 1)),
      edgesTouched,
      uncertain: round(uncertain / per),
      uncertainPart: round(doubt.size / per),
      uncertainJoined: round(doubt.joined / per),
      weakEdges: round(weak.share),
    },
    boxes: {
      soft: softBox.box,
      fragment: second ? parts.boxes[second] : null,
      missing: boxes.missing.box,
      backgroundKept: boxes.kept.box,
      hole: biggestHole ? gaps.boxes[biggestHole] : null,
      spill: boxes.spill.box,
      halo: boxes.halo.box,
      uncertainPart: doubt.box,
      weakEdges: weak.box,
    },
  };
}

/**
 * The 4-connected pieces of `part` with a pixel of `subject` among their 8 neighbours: the largest one's size
 * and box (0 and null if none), and `joined`, the size of them all together.
 */
export function largestPartJoined(
  part: Uint8Array,
  subject: Uint8Array,
  w: number,
  h: number,
): { size: number; box: BBox | null; joined: number } {
  const pieces = components(part, w, h);
  const isJoined = new Uint8Array(pieces.sizes.length);
  let best = 0;
  let joined = 0;
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      const k = pieces.label[i];
      if (!k || isJoined[k]) continue;
      // A subject pixel among the 8 neighbours (inside the grid) joins this piece to the subject.
      for (let dy = y > 0 ? -1 : 0; dy <= (y < h - 1 ? 1 : 0) && !isJoined[k]; dy++)
        for (let dx = x > 0 ? -1 : 0; dx <= (x < w - 1 ? 1 : 0); dx++)
          if (subject[i + dy * w + dx]) {
            isJoined[k] = 1;
            joined += pieces.sizes[k];
            if (pieces.sizes[k] > pieces.sizes[best]) best = k;
            break;
          }
    }
  }
  return { size: best ? pieces.sizes[best] : 0, box: best ? pieces.boxes[best] : null, joined };
}

/**
 * The outline pixels (away from the frame) where the photo is flat: the largest change of any channel
 * between a pixel's neighbours (central differences, the gradient's length), over the 3x3 around it, is
 * under FLAT_EDGE. A cut along the subject's true edge follows a change of colour; one through the middle
 * of the subject or of the background does not.
 */
function weakOutline(rgb: Uint8Array, edge: Uint8Array, w: number, h: number): { share: number; box: BBox | null } {
  // The squared length of the colour's change at each pixel (the largest channel's), compared squared.
  const gradient = new Int32Array(w * h);
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1, i = y * w + 1; x < w - 1; x++, i++) {
      let best = 0;
      for (let c = 0; c < 3; c++) {
        const gx = rgb[(i + 1) * 3 + c] - rgb[(i - 1) * 3 + c];
        const gy = rgb[(i + w) * 3 + c] - rgb[(i - w) * 3 + c];
        const g = gx * gx + gy * gy;
        if (g > best) best = g;
      }
      gradient[i] = best;
    }
  }
  const box = new BoxOf();
  let outline = 0;
  let flat = 0;
  for (let y = FRAME_MARGIN; y < h - FRAME_MARGIN; y++) {
    for (let x = FRAME_MARGIN; x < w - FRAME_MARGIN; x++) {
      const i = y * w + x;
      if (!edge[i]) continue;
      outline++;
      let near = 0;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) near = Math.max(near, gradient[i + dy * w + dx]);
      if (near < FLAT_EDGE * FLAT_EDGE) {
        flat++;
        box.add(x, y);
      }
    }
  }
  return { share: outline ? flat / outline : 0, box: box.box };
}
