// The automatic check's work on one photo, the same on any thread: the model's input and mask reduced to
// the check's grid (imaging/check-grid.ts), then `diagnose`. photo-check.ts runs it in a worker thread
// (check.worker.mjs), off the event loop.
import { gridColours, gridMask } from '../../imaging/check-grid.ts';
import { maskStatistics } from '../../imaging/model-io.mjs';
import type { BBox } from '../../domain/batch.schemas.ts';
import { diagnose, type Diagnosis } from '../diagnose.ts';
import { CHECK_GRID } from './features.ts';

/** The model's input on the check's grid: made while the model runs, as it needs no mask. */
export function checkColours(input: { rgb: Uint8Array; width: number; height: number }): Uint8Array {
  return gridColours(input, CHECK_GRID);
}

/** One photo's check: the model's mask with its figures, and the colours already on the grid. */
export interface CheckRequest {
  /** The model's mask, `maskSize` square, values 0..255. */
  mask: Uint8Array;
  maskSize: number;
  histogram: Uint32Array;
  /** The box of mask pixels >= 128, in mask pixels. */
  bbox: BBox | null;
  /** gridColours of the model's input. */
  colours: Uint8Array;
  /** The cut-out's size, which the flags' boxes are given in. */
  cutout: { width: number; height: number };
}

export function checkPhoto(r: CheckRequest): Diagnosis {
  return diagnose(r, { mask: gridMask(r.mask, r.maskSize, CHECK_GRID), rgb: r.colours }, r.maskSize, r.cutout);
}

/**
 * The check's code run on a synthetic photo (a soft disc), `rounds` times: until the JavaScript engine has
 * optimised it, the first photos' check took 190-360 ms of CPU, against 40-75 ms afterwards (wall time with
 * the model's threads on both cores).
 */
export function warmUpCheck(rounds: number, size = 1024): void {
  const mask = new Uint8Array(size * size);
  const rgb = new Uint8Array(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x - size / 2, y - size / 2) - size / 3;
      mask[y * size + x] = Math.max(0, Math.min(255, Math.round(128 - d * 16)));
      rgb.set([x % 256, y % 256, mask[y * size + x]], (y * size + x) * 3);
    }
  }
  const { histogram, bbox } = maskStatistics(mask, size);
  const photo = { width: 2000, height: 1500 };
  for (let i = 0; i < rounds; i++) {
    checkPhoto({
      mask,
      maskSize: size,
      histogram,
      bbox,
      colours: checkColours({ rgb, width: size, height: size }),
      cutout: photo,
    });
  }
}
