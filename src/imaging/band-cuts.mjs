// Where a photo's rows are cut into bands for the cut-out writer's threads (cutout-writer.ts), from the
// model's mask on the edge refinement's grid. Plain JavaScript: the threads cut a photo's bands themselves,
// off the event loop, once they have reduced its mask (cutout-writer.worker.mjs).
import { refineGrid } from './edge-refine.mjs';

/**
 * A band's work, per cell of edge-refine's grid, in relative units: every cell is laid out; a visible one
 * costs more (its colours summed for the thumbnail), an edge one most (refined at full resolution). Fitted
 * on the C passes (native/cutout.c): 96 bands of 12 eval products at 2000x2000 with the int8 model's masks,
 * 11, 5 and 80 ns a cell's pixel row more (mean error 23%; the JavaScript's weights before, 2, 3 and 6: 36%).
 */
const CELL_COST = { base: 2, visible: 1, edge: 15 };

/**
 * The whole factor a cut-out is reduced by for its thumbnail (bandRgba's preview), whose long edge is at most
 * `edge`: the smallest factor that fits, so that the preview is the thumbnail and no resize is needed, unless
 * that leaves it under 7/8 of `edge` (a 1200 px photo: 400 px), when the largest factor that keeps it at least
 * `edge` is taken and the preview resized. Usual photo sizes are whole multiples (1000, 1500, 2000, 3000 and
 * 4000 px give 500): a 2000x2000 cut-out's thumbnail then costs 26.1 → 18.5 ms of CPU on an AVX2 EPYC (no
 * 667 px preview resized to 512; npm run bench -- stage-cpu).
 * @param {number} long the photo's long edge @param {number} edge the thumbnail's long edge
 */
export function thumbnailFactor(long, edge) {
  const fits = Math.max(1, Math.ceil(long / edge));
  return long / fits >= (edge * 7) / 8 ? fits : Math.max(1, Math.floor(long / edge));
}

/**
 * Where a photo's rows are cut into `count` bands (fewer when it has fewer thumbnail blocks): at whole
 * blocks (`reduce` rows), so that each band's work (CELL_COST, read from the mask on the refinement's
 * grid) is as even as that allows, never an empty band. The threads then finish together: a cut at
 * half the rows left one band 28% longer than the other on the bench photo.
 * @param {number} width @param {number} height @param {number} reduce @param {number} bands
 * @param {Uint8Array} lowAlpha the mask on the refinement's grid
 * @returns {number[]} a row number for each band's start, and height
 */
export function bandCuts(width, height, reduce, bands, lowAlpha) {
  const grid = refineGrid(width, height);
  const blocks = Math.ceil(height / reduce);
  const count = Math.min(bands, blocks);
  // Each block's work: the grid rows it covers, in proportion.
  const rowCost = new Float64Array(grid.h);
  for (let gy = 0; gy < grid.h; gy++) {
    let cost = 0;
    for (let i = gy * grid.w, end = i + grid.w; i < end; i++) {
      const a = lowAlpha[i];
      cost += CELL_COST.base + (a !== 0 ? CELL_COST.visible : 0) + (a !== 0 && a !== 255 ? CELL_COST.edge : 0);
    }
    rowCost[gy] = cost;
  }
  const cumulative = new Float64Array(blocks + 1);
  for (let b = 0; b < blocks; b++) {
    let cost = 0;
    for (let y = b * reduce, end = Math.min(height, (b + 1) * reduce); y < end; y++)
      cost += rowCost[Math.min(grid.h - 1, Math.floor((y * grid.h) / height))];
    cumulative[b + 1] = cumulative[b] + cost;
  }
  const cuts = [0];
  for (let i = 1; i < count; i++) {
    const target = (cumulative[blocks] * i) / count;
    let b = cuts[i - 1] / reduce + 1;
    // The block boundary nearest the target, leaving a block at least for each band still to come.
    while (b < blocks - (count - i) && cumulative[b + 1] <= target) b++;
    if (b < blocks - (count - i) && target - cumulative[b] > cumulative[b + 1] - target) b++;
    cuts.push(b * reduce);
  }
  cuts.push(height);
  return cuts;
}
