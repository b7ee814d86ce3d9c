// The simulated seller of issue 83's yardstick: up to three actions a photo, each a scribble over the largest
// wrong region of the cut-out against the mask a person drew. Written down exactly as the issue says:
//  - a wrong region: a 4-connected component of the pixels where the cut-out (alpha >= 128) and the drawn mask
//    (>= 128) disagree; the largest first;
//  - the scribble: horizontal strokes through the region's points at least r from its edge (the nearest pixel
//    of the photo not in the region), on rows r apart from the first such row; each run of such points on a row
//    is one stroke from its first to its last point; brush diameter 4r, so a stroke spills up to r past the
//    region; erase where the cut-out kept what the mask leaves out, restore where it left out what the mask keeps;
//  - r = 0.8% of the cut-out's long side, at least 3 px.
// One choice the issue leaves open: a region too thin to hold a point r from its edge cannot be scribbled
// over, and the seller takes the next largest instead (else the same region would be chosen three times).
import type { Stroke } from '../src/domain/touch-up.schemas.ts';
import { squaredDistance } from '../tools/masks.ts';

export function brushRadius(width: number, height: number): number {
  return Math.max(3, 0.008 * Math.max(width, height));
}

export interface WrongRegion {
  /** Pixels of the region (indices into the photo). */
  pixels: Int32Array;
  mode: Stroke['mode'];
  strokes: Stroke[];
}

/** 4-connected components of `inSet`, largest first, each as its pixel indices. */
function componentsBySize(inSet: Uint8Array, width: number, height: number): Int32Array[] {
  const label = new Int32Array(width * height);
  const stack = new Int32Array(width * height);
  const found: Int32Array[] = [];
  let next = 0;
  for (let start = 0; start < inSet.length; start++) {
    if (!inSet[start] || label[start]) continue;
    next++;
    let top = 0;
    stack[top++] = start;
    label[start] = next;
    const members: number[] = [];
    while (top) {
      const i = stack[--top];
      members.push(i);
      const x = i % width;
      for (const j of [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, i - width, i + width]) {
        if (j < 0 || j >= inSet.length || !inSet[j] || label[j]) continue;
        label[j] = next;
        stack[top++] = j;
      }
    }
    found.push(Int32Array.from(members));
  }
  return found.sort((a, b) => b.length - a.length);
}

/**
 * The seller's next action on a cut-out (its alpha) against the drawn mask: the largest wrong region that can be
 * scribbled over, and the scribble. Null when no region can.
 */
export function nextAction(alpha: Uint8Array, truth: Uint8Array, width: number, height: number): WrongRegion | null {
  const n = width * height;
  // Kept where the mask leaves out, and left out where the mask keeps: apart, so a region is one or the other.
  const kept = new Uint8Array(n);
  const missed = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    kept[i] = alpha[i] >= 128 && truth[i] < 128 ? 1 : 0;
    missed[i] = alpha[i] < 128 && truth[i] >= 128 ? 1 : 0;
  }
  const regions = [...componentsBySize(kept, width, height), ...componentsBySize(missed, width, height)].sort(
    (a, b) => b.length - a.length,
  );
  const r = brushRadius(width, height);
  for (const pixels of regions) {
    // Too small to hold a point r from its edge: a disc of radius r does not fit.
    if (pixels.length < Math.PI * r * r) break;
    const inRegion = new Uint8Array(n);
    for (const i of pixels) inRegion[i] = 1;
    const outside = new Uint8Array(n);
    for (let i = 0; i < n; i++) outside[i] = inRegion[i] ? 0 : 1;
    const d2 = squaredDistance(outside, width, height);
    const deep = new Uint8Array(n);
    let firstRow = -1;
    for (const i of pixels) {
      if (d2[i] >= r * r) {
        deep[i] = 1;
        const y = Math.floor(i / width);
        if (firstRow < 0 || y < firstRow) firstRow = y;
      }
    }
    if (firstRow < 0) continue;
    const first = pixels[0];
    const mode: Stroke['mode'] = alpha[first] >= 128 ? 'erase' : 'restore';
    const size = 4 * r;
    const strokes: Stroke[] = [];
    for (let k = 0; ; k++) {
      const y = Math.round(firstRow + k * r);
      if (y >= height) break;
      for (let x = 0; x < width; x++) {
        if (!deep[y * width + x]) continue;
        const start = x;
        while (x + 1 < width && deep[y * width + x + 1]) x++;
        strokes.push({
          mode,
          size,
          points:
            start === x
              ? [[start, y]]
              : [
                  [start, y],
                  [x, y],
                ],
        });
      }
    }
    return { pixels, mode, strokes };
  }
  return null;
}
