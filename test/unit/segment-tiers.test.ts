// Which model a tier runs on (segment.ts predictMask): heavy photos on the heavy model when the operator
// runs one, and on the light model otherwise; light photos always on the light model.
import { describe, expect, it } from 'vitest';
import { predictMask } from '../../src/pipeline/segment.ts';
import type { MaskModel, MaskPrediction, ModelInput } from '../../src/adapters/mask-model.adapter.ts';

const SQUARE = { width: 1024, height: 1024 };
const squareInput = (rgb: Buffer): ModelInput => ({ rgb, ...SQUARE });

function model(name: string, calls: string[]): MaskModel {
  return {
    async ready() {},
    inputSize: () => SQUARE,
    async predict(): Promise<MaskPrediction> {
      calls.push(name);
      return { mask: Buffer.alloc(4), histogram: new Uint32Array(256), bbox: null, runMs: 1 };
    },
    threadIds: () => [],
    async close() {},
  };
}

describe('the tiers', () => {
  it('runs heavy photos on the heavy model, light ones on the light model', async () => {
    const calls: string[] = [];
    const models = { light: model('light', calls), heavy: model('heavy', calls) };
    await predictMask(models, squareInput(Buffer.alloc(3)), 'heavy');
    await predictMask(models, squareInput(Buffer.alloc(3)), 'light');
    expect(calls).toEqual(['heavy', 'light']);
  });

  it('runs heavy photos on the light model when no heavy model is configured, one pass', async () => {
    const calls: string[] = [];
    await predictMask({ light: model('light', calls), heavy: null }, squareInput(Buffer.alloc(3)), 'heavy');
    expect(calls).toEqual(['light']);
  });
});
