// The model's input and mask reduced to the automatic check's grid, the same on any thread: the pipeline's
// check thread (pipeline/check/check-run.ts), CheckRasters, the calibration and the benches.
import { reduceArea, reduceBlocks } from './mask-reduce.mjs';

/**
 * The model's input (RGB) reduced to `edge` x `edge` for the check; it needs no mask, so it is made while
 * the model runs. A square input by blocks (mask-reduce.mjs reduceBlocks: each grid cell the mean of the
 * pixels it covers); one at the photo's own aspect ratio by area averages (the same figures where the
 * blocks are whole), so each grid cell covers the same part of the photo either way. The check was
 * calibrated on grids made so: libvips' linear reduction spreads every edge over more cells, which blurs
 * the model's own doubt into its edges (held out, the check caught 75% of broken results on linear grids
 * against 88% on block averages: docs/research/quality-history.md).
 */
export function gridColours(input: { rgb: Uint8Array; width: number; height: number }, edge: number): Uint8Array {
  const { rgb, width, height } = input;
  if (width === height && width % edge === 0) return reduceBlocks(rgb, width, 3, width / edge);
  return reduceArea(rgb, width, height, edge, edge, 3);
}

/** The model's mask (`size` square) reduced for the check, by blocks as the colours. */
export function gridMask(mask: Uint8Array, size: number, edge: number): Uint8Array {
  return reduceBlocks(mask, size, 1, size / edge);
}
