// End to end: a server on the defaults runs the int8 model (made into the shared model cache by the tier's global
// setup, as a first start makes it) and cuts out held-out eval photos over real HTTP as well as the float server
// (MATTE_MODEL_INT8=0) does; with MATTE_MODEL_ASPECT=1 it runs each photo at its own aspect ratio, as well as the
// default server that squeezes them.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type ServerHandle, E2E_TEST_TIMEOUT } from '../helpers/server.ts';
import { sharedServer } from '../helpers/shared-server.ts';
import { evalEntries, evalFile, iou, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';
import { heldOutPhotos } from '../../tools/model-calibrate.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

// Held-out product photos: the int8 ranges were not taken from them.
const photos = heldOutPhotos(evalEntries())
  .filter((e) => e.kind === 'product')
  .slice(0, 3);
const servers: { float?: ServerHandle; int8?: ServerHandle; aspect?: ServerHandle } = {};
const keys: Record<string, string> = {};
/** The default server's cut-outs, by photo: the first test's, which the second compares with. */
const int8Cutouts = new Map<string, Buffer>();

beforeAll(async () => {
  if (!HAVE_EVAL_DATA) return;
  servers.int8 = sharedServer(); // the tier's server on the defaults
  servers.float = await startServer({ MATTE_MODEL_INT8: '0' });
  for (const name of ['float', 'int8'] as const) await account(name);
});
afterAll(async () => Promise.all(Object.values(servers).map((s) => s?.stop())));

async function account(name: keyof typeof servers): Promise<void> {
  keys[name] = (await servers[name]!.createAccount(`${name}@example.com`, 10, 0)).apiKey;
}

async function cutout(name: keyof typeof servers, file: Buffer): Promise<Buffer> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file)]), 'photo.jpg');
  form.append('format', 'png');
  const res = await fetch(`${servers[name]!.base}/v1/images`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${keys[name]}` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('x-matte-charged')).toBe('1');
  return Buffer.from(await res.arrayBuffer());
}

describe.skipIf(!HAVE_EVAL_DATA)('the default int8 model', () => {
  it('cuts out held-out photos within 0.03 IoU of the float server, each above 0.9', async () => {
    expect(photos).toHaveLength(3);
    for (const entry of photos) {
      const [f, q] = await Promise.all([cutout('float', evalFile(entry.image)), cutout('int8', evalFile(entry.image))]);
      int8Cutouts.set(entry.id, q);
      const [fIou, qIou] = [await iou(f, entry), await iou(q, entry)];
      expect(qIou, entry.id).toBeGreaterThanOrEqual(0.9);
      expect(qIou, entry.id).toBeGreaterThan(fIou - 0.03);
      // Not the float model under another name: its masks differ somewhere.
      expect(q.equals(f), entry.id).toBe(false);
    }
  });

  it('with MATTE_MODEL_ASPECT=1 runs each photo at its own aspect ratio (the eval photos are 4:3 to 3:2): above 0.9 IoU, within 0.03 of the photo squeezed square, and not the squeezed mask', async () => {
    // Two model servers at a time, as in the first test: the float one is done.
    await servers.float?.stop();
    servers.float = undefined;
    servers.aspect = await startServer({ MATTE_MODEL_ASPECT: '1' });
    await account('aspect');
    for (const entry of photos) {
      expect(entry.width / entry.height, entry.id).not.toBeCloseTo(1, 1);
      const [a, q] = await Promise.all([
        cutout('aspect', evalFile(entry.image)),
        int8Cutouts.get(entry.id) ?? cutout('int8', evalFile(entry.image)),
      ]);
      const [aIou, qIou] = [await iou(a, entry), await iou(q, entry)];
      expect(aIou, entry.id).toBeGreaterThanOrEqual(0.9);
      expect(aIou, entry.id).toBeGreaterThan(qIou - 0.03);
      expect(a.equals(q), entry.id).toBe(false);
    }
  });
});
