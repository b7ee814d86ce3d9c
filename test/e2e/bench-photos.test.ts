// npm run bench -- photos judges the shipped check on photos someone brings, with their masks: its verdicts must
// be the service's own. Two eval photos (one in a subfolder, masks named both ways the command reads) go
// through the command and through POST /v1/images on a real server with the real model (the default int8
// model); the score, the verdict and the IoU agree. With MATTE_MODEL_INT8=0 the command runs the float model, its
// masks cached apart. An operator's heavy model (MATTE_HEAVY_MODEL_PATH) is judged against light. A folder
// with no pair, or a heavy model that is not there, is refused with exit 2 and one line.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { E2E_TEST_TIMEOUT, MODEL_CACHE_DIR, type ServerHandle } from '../helpers/server.ts';
import { sharedServer } from '../helpers/shared-server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA, iou } from '../../tools/shared-data.ts';
import { readModel } from '../../src/adapters/model-session.mjs';
import { modelSource } from '../../src/adapters/mask-model.adapter.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });
const run = promisify(execFile);
const ROOT = path.join(import.meta.dirname, '..', '..');
const PHOTOS = ['grabcut-banana1', 'grabcut-llama'];

let server: ServerHandle;
let tmp: string;
beforeAll(async () => {
  if (!HAVE_EVAL_DATA) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-photos-'));
  server = sharedServer();
});
afterAll(async () => {
  await server?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const command = (folder: string, env: Record<string, string> = {}) =>
  run(process.execPath, ['--import', 'tsx', 'bench/photos.ts', folder], {
    cwd: ROOT,
    // The servers' model cache, made before any file starts (global-setup.ts): no model optimised again here.
    env: {
      ...process.env,
      PHOTOS_CACHE: path.join(tmp, 'cache'),
      MATTE_MODEL_CACHE_DIR: MODEL_CACHE_DIR || 'off',
      ...env,
    },
    maxBuffer: 16 * 1024 * 1024,
  });

/** Two eval photos: the first as name.jpg + name.mask.png, the second in a subfolder as name.jpg + name.gt.png. */
function photosFolder() {
  const entries = new Map(evalEntries().map((e) => [e.id, e]));
  const [first, second] = PHOTOS.map((id) => entries.get(id)!);
  const folder = path.join(tmp, 'photos');
  if (fs.existsSync(folder)) return { folder, first, second };
  fs.mkdirSync(path.join(folder, 'more'), { recursive: true });
  fs.writeFileSync(path.join(folder, `${first.id}.jpg`), evalFile(first.image));
  fs.writeFileSync(path.join(folder, `${first.id}.mask.png`), evalFile(first.mask));
  fs.writeFileSync(path.join(folder, 'more', `${second.id}.jpg`), evalFile(second.image));
  fs.writeFileSync(path.join(folder, 'more', `${second.id}.gt.png`), evalFile(second.mask));
  // A photo without a mask is no pair, and is left out.
  fs.writeFileSync(path.join(folder, 'lonely.jpg'), evalFile(first.image));
  return { folder, first, second };
}

interface Row {
  light: { iou: number };
  red: boolean;
  score: number;
}

let accounts = 0;
/** Each photo sent to `POST /v1/images` on the server: the command's rows have its score, verdict and IoU. */
async function expectServersVerdicts(on: ServerHandle, rows: Row[], entries: ReturnType<typeof evalEntries>) {
  const { apiKey } = await on.createAccount(`photos-${++accounts}@example.com`, 5);
  for (const [k, entry] of entries.entries()) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(evalFile(entry.image))]), `${entry.id}.jpg`);
    const res = await fetch(`${on.base}/v1/images`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: form,
    });
    expect(res.status).toBe(200);
    // The same calibrated score and verdict as the service's check on the same photo.
    expect(rows[k].score).toBe(Number(res.headers.get('x-matte-score')));
    expect(rows[k].red).toBe(res.headers.get('x-matte-review') === 'red');
    // The IoU of the model's mask at the photo's size; the service's cut-out adds edge refinement.
    const served = await iou(Buffer.from(await res.arrayBuffer()), entry);
    expect(Math.abs(rows[k].light.iou - served)).toBeLessThan(0.03);
  }
}

describe.skipIf(!HAVE_EVAL_DATA)('npm run bench -- photos', () => {
  it("gives the service's own verdicts and IoU on a folder of photos with masks", async () => {
    const { folder, first, second } = photosFolder();

    const json = path.join(tmp, 'figures.json');
    const { stdout } = await command(folder, { PHOTOS_JSON: json });
    expect(stdout).toContain('## the check on 2 photos (light results of the int8 model, the default;');
    expect(stdout).toContain('## reports on these results');
    const { rows } = JSON.parse(fs.readFileSync(json, 'utf8')) as { rows: (Row & { id: string })[] };
    expect(rows.map((r) => r.id)).toEqual([first.id, `more/${second.id}`]);
    expect(fs.readdirSync(path.join(tmp, 'cache')).filter((f) => f.includes('.int8-'))).toHaveLength(2);

    await expectServersVerdicts(server, rows, [first, second]);
  });

  it("with MATTE_MODEL_INT8=0 runs the float model, its masks cached apart from the int8 model's", async () => {
    const { folder } = photosFolder();
    const json = path.join(tmp, 'float.json');
    const { stdout } = await command(folder, { PHOTOS_JSON: json, MATTE_MODEL_INT8: '0' });
    expect(stdout).toContain('## the check on 2 photos (light results of the float model, MATTE_MODEL_INT8=0;');
    // Neither model's masks are read for the other's, and they are not the same masks.
    const cached = fs.readdirSync(path.join(tmp, 'cache'));
    const int8Masks = cached.filter((f) => f.includes('.int8-'));
    expect(int8Masks).toHaveLength(2);
    for (const file of int8Masks) {
      const float = path.join(tmp, 'cache', file.replace(/\.int8-[0-9a-f]+\.mask$/, '.light.mask'));
      expect(fs.readFileSync(path.join(tmp, 'cache', file)).equals(fs.readFileSync(float))).toBe(false);
    }
    const { rows } = JSON.parse(fs.readFileSync(json, 'utf8')) as { rows: Row[] };
    expect(rows).toHaveLength(2);
  });

  it("judges the operator's heavy model (MATTE_HEAVY_MODEL_PATH) against light", async () => {
    // The light model's own weights as the "heavy" model: the same masks, so the same IoU on every photo; without
    // a heavy model the heavy tier is the light model itself, as on the server, and no second pass is run.
    const weights = path.join(tmp, 'heavy.onnx');
    fs.writeFileSync(weights, readModel(modelSource()));
    const { folder } = photosFolder();
    const figures = async (env: Record<string, string>) => {
      const json = path.join(tmp, `heavy-${Object.keys(env).length}.json`);
      // The light model in float, as the heavy file runs (a model set by path runs in float).
      const { stdout } = await command(folder, { PHOTOS_JSON: json, MATTE_MODEL_INT8: '0', ...env });
      const { rows } = JSON.parse(fs.readFileSync(json, 'utf8')) as {
        rows: { light: { iou: number }; heavy: { iou: number } }[];
      };
      return { stdout, rows };
    };
    const withModel = await figures({ MATTE_HEAVY_MODEL_PATH: weights });
    expect(withModel.stdout).toContain(`## heavy tier: ${weights} (MATTE_HEAVY_MODEL_PATH), against light`);
    for (const r of withModel.rows) expect(r.heavy.iou).toBe(r.light.iou);
    expect(fs.readdirSync(path.join(tmp, 'cache')).filter((f) => f.includes('.heavy-'))).toHaveLength(2);
    const none = await figures({});
    expect(none.stdout).toContain('## heavy tier without a stronger model: the light model itself');
    for (const r of none.rows) expect(r.heavy.iou).toBe(r.light.iou);

    const missing = await command(folder, { MATTE_HEAVY_MODEL_PATH: path.join(tmp, 'none.onnx') }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(missing?.code).toBe(2);
    expect(missing?.stderr.trim()).toBe(`MATTE_HEAVY_MODEL_PATH: no file at ${path.join(tmp, 'none.onnx')}`);
  });

  it('refuses a folder with no photo and mask pair: exit 2, one line', async () => {
    const empty = fs.mkdtempSync(path.join(tmp, 'empty-'));
    fs.writeFileSync(path.join(empty, 'photo.jpg'), evalFile(evalEntries()[0].image));
    const err = await command(empty).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr.trim().split('\n')).toHaveLength(1);
    expect(err?.stderr).toContain('no photo with a mask beside it');
    const missing = await command(path.join(tmp, 'not-there')).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(missing?.code).toBe(2);
    expect(missing?.stderr).toMatch(/^usage: npm run bench -- photos/);
  });
});
