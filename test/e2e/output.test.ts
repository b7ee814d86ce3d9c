// End to end, real server and real model: every preset renders to its canvas with the product at its
// fill and alignment; an Amazon export is pure white and under its limit, and its compliance report
// says so; apply re-renders without a model call or a charge; downloads with their options.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import sharp from 'sharp';
import { E2E_TEST_TIMEOUT, type ServerHandle } from '../helpers/server.ts';
import { sharedServer } from '../helpers/shared-server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';
import { unzip } from '../helpers/unzip.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

let server: ServerHandle;
let api: (path: string, init?: RequestInit & { json?: unknown }) => Promise<Response>;
let jobId: string;
let photo: Record<string, any>;
const entries = new Map(evalEntries().map((e) => [e.id, e]));

beforeAll(async () => {
  if (!HAVE_EVAL_DATA) return;
  server = sharedServer();
  const { apiKey } = await server.createAccount('output@example.com', 5);
  api = (path, init = {}) =>
    fetch(`${server.base}${path}`, {
      ...init,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
  const job = await (await api('/v1/jobs', { method: 'POST', json: { name: 'output' } })).json();
  jobId = job.id;
  const form = new FormData();
  form.append('files', new Blob([new Uint8Array(evalFile(entries.get('grabcut-ceramic')!.image))]), 'vase.jpg');
  await api(`/v1/jobs/${jobId}/items`, { method: 'POST', body: form });
  await api(`/v1/jobs/${jobId}/start`, { method: 'POST' });
  for (let i = 0; i < 30; i++) {
    const state = await (await api(`/v1/jobs/${jobId}?wait=20`)).json();
    if (!['queued', 'running'].includes(state.status)) break;
  }
  photo = (await (await api(`/v1/jobs/${jobId}`)).json()).items[0];
}, 120_000);
afterAll(async () => server?.stop());

/** Box of the product in a rendered image: opaque pixels that are not pure white. */
async function productBox(image: Buffer) {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let minX = info.width,
    minY = info.height,
    maxX = -1,
    maxY = -1;
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      const i = (y * info.width + x) * 4;
      const product = data[i + 3] > 128 && (data[i] < 235 || data[i + 1] < 235 || data[i + 2] < 235);
      if (!product) continue;
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
      minY = Math.min(minY, y);
      maxY = Math.max(maxY, y);
    }
  }
  return { width: info.width, height: info.height, box: { x: minX, y: minY, w: maxX - minX + 1, h: maxY - minY + 1 } };
}

describe.skipIf(!HAVE_EVAL_DATA)('output with the real model', () => {
  it('every preset renders to its canvas with the product at its fill and alignment', async () => {
    expect(photo).toMatchObject({ status: 'done', review: 'none' });
    const presets = (await (await api('/v1/presets')).json()).presets as Array<{
      id: string;
      width: number;
      height: number;
      fillPercent: number;
      align: string;
    }>;
    expect(presets.length).toBeGreaterThan(20);
    for (const preset of presets) {
      const res = await api(`/v1/jobs/${jobId}/items/${photo.id}/preview`, {
        method: 'POST',
        json: { settings: { presetId: preset.id } },
      });
      expect(res.status, preset.id).toBe(200);
      const { width, height, box } = await productBox(Buffer.from(await res.arrayBuffer()));
      expect(res.headers.get('x-output-size'), preset.id).toBe(`${width}x${height}`);
      if (preset.width > 0) expect([width, height], preset.id).toEqual([preset.width, preset.height]);
      else if (preset.fillPercent === 0)
        expect([width, height], preset.id).toEqual([photo.meta.source.width, photo.meta.source.height]);
      if (preset.fillPercent > 0) {
        const spans = Math.max(box.w / width, box.h / height);
        expect(Math.abs(spans - preset.fillPercent / 100), `${preset.id} fill ${spans}`).toBeLessThan(0.03);
        const centreX = (box.x + box.w / 2) / width;
        expect(Math.abs(centreX - 0.5), `${preset.id} centred`).toBeLessThan(0.03);
        if (preset.align === 'bottom')
          expect(
            Math.abs((box.y + box.h) / height - (1 - (1 - preset.fillPercent / 100) / 2)),
            `${preset.id} bottom`,
          ).toBeLessThan(0.03);
        else expect(Math.abs((box.y + box.h / 2) / height - 0.5), `${preset.id} centred`).toBeLessThan(0.03);
      }
    }
  });

  it('an Amazon export: 1600x1600, pure white, under its upload limit, and its compliance report says so; apply costs nothing', async () => {
    const before = await (await api('/v1/account')).json();
    const res = await api(`/v1/jobs/${jobId}/apply`, {
      method: 'POST',
      json: { settings: { presetId: 'amazon-main' } },
    });
    expect(res.status).toBe(200);
    const item = (await res.json()).items[0];
    expect(item.rev).toBe(photo.rev + 1);
    expect(item.meta.timings).toEqual(photo.meta.timings); // no model run
    const report = await (await api(`/v1/jobs/${jobId}/items/${item.id}/compliance`)).json();
    expect(report.compliance).toMatchObject({ presetId: 'amazon-main', meets: true });
    expect((await (await api('/v1/account')).json()).credits).toEqual(before.credits);
    const file = Buffer.from(await (await api(`${item.outputUrl}&download=1`)).arrayBuffer());
    expect(file.length).toBeLessThanOrEqual(10_000_000);
    const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.format ?? 'raw']).toEqual([1600, 1600, 'raw']);
    for (const [x, y] of [
      [0, 0],
      [1599, 0],
      [0, 1599],
      [1599, 1599],
      [800, 5],
      [5, 800],
    ]) {
      const i = (y * 1600 + x) * info.channels;
      expect([...data.subarray(i, i + 3)], `${x},${y}`).toEqual([255, 255, 255]);
    }
  });

  it('downloads with every group, an extra preset, a pattern and SKUs', async () => {
    const query = `?include=rendered,cutouts,originals&presets=ebay&items=${photo.id}&skus=${encodeURIComponent('["VASE-01"]')}&pattern=${encodeURIComponent('{sku}_{preset}_{w}x{h}')}`;
    const res = await api(`/v1/jobs/${jobId}/download${query}`);
    expect(res.status).toBe(200);
    const files = await unzip(Buffer.from(await res.arrayBuffer()));
    expect([...files.keys()].sort()).toEqual([
      'cutouts/VASE-01_amazon-main_640x480.png',
      'ebay/VASE-01_ebay_1600x1600.png',
      'originals/VASE-01_original_640x480.jpg',
      'rendered/VASE-01_amazon-main_1600x1600.jpg',
    ]);
    expect((await sharp(files.get('cutouts/VASE-01_amazon-main_640x480.png')!).metadata()).channels).toBe(4);
    expect(
      files.get('originals/VASE-01_original_640x480.jpg')!.equals(evalFile(entries.get('grabcut-ceramic')!.image)),
    ).toBe(true);
  });
});
