// A stand-in MaskModel for unit and HTTP tests: foreground = pixels clearly darker than a white
// background. Deterministic, instant, and meaningful for the pipeline (a dark square on white gives
// a square mask). The real model runs in the e2e tier.
import type { MaskModel, MaskPrediction, ModelInput } from '../../src/adapters/mask-model.adapter.ts';

export class ThresholdMaskModel implements MaskModel {
  calls = 0;
  failNext = false;
  /** A mask drawn here instead of the threshold (1024² coordinates, value 0-255): a soft or see-through result on demand. */
  shape: ((x: number, y: number) => number) | null = null;
  private gate: Promise<void> | null = null;

  /** Holds every prediction until the returned release is called: photos stay `processing`. */
  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((r) => (release = r));
    return () => {
      this.gate = null;
      release();
    };
  }

  async ready(): Promise<void> {}

  /** Square inputs only, as a model with fixed sizes (the real model's other sizes run in the e2e tier). */
  inputSize(): { width: number; height: number } {
    return { width: 1024, height: 1024 };
  }

  async predict({ rgb }: ModelInput): Promise<MaskPrediction> {
    this.calls++;
    if (this.gate) await this.gate;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('boom');
    }
    const size = 1024;
    const mask = Buffer.alloc(size * size);
    const histogram = new Uint32Array(256);
    let minX = size,
      minY = size,
      maxX = -1,
      maxY = -1;
    for (let i = 0, p = 0; i < mask.length; i++, p += 3) {
      const lum = (rgb[p] + rgb[p + 1] + rgb[p + 2]) / 3;
      const v = this.shape ? this.shape(i % size, Math.floor(i / size)) : lum < 200 ? 255 : 0;
      mask[i] = v;
      histogram[v]++;
      if (v >= 128) {
        const x = i % size,
          y = Math.floor(i / size);
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
    }
    return {
      mask,
      histogram,
      bbox: maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 },
      runMs: 1,
    };
  }

  /** In-process and instant: no threads of its own. */
  threadIds(): number[] {
    return [];
  }

  async close(): Promise<void> {}
}
