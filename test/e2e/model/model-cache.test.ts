// The optimised model's cache (model-session.mjs): made once, read afterwards, made again when unreadable,
// and computing what the model optimised at load computes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession, readModel } from '../../../src/adapters/model-session.mjs';
import { modelSource } from '../../../src/adapters/mask-model.adapter.ts';
import { letTheRunnerIn } from '../../helpers/runner.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-model-cache-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const bytes = readModel(modelSource());
const input = new Float32Array(3 * 1024 * 1024).map((_, i) => Math.sin(i / 997) * 0.5);
const files = () => fs.readdirSync(dir);
/** createSession, after a turn of the event loop: a load optimises on this thread (helpers/runner.ts). */
const loaded = async (...args: Parameters<typeof createSession>) => {
  await letTheRunnerIn();
  return createSession(...args);
};

async function output(session: ort.InferenceSession): Promise<Float32Array> {
  await letTheRunnerIn();
  const result = await session.run({ input: new ort.Tensor('float32', input, [1, 3, 1024, 1024]) }, ['output']);
  await session.release();
  return result.output.data as Float32Array;
}

describe('the optimised model cache', () => {
  /** The file the first test makes (extended), which the second spoils. */
  let extended = '';
  it('writes the model once, reads it afterwards, and computes what the model optimised at load does', async () => {
    const options = { threads: 1, optimization: 'extended' as const };
    const first = await loaded(ort, bytes, { ...options, cacheDir: dir });
    expect(files()).toHaveLength(1);
    expect(files()[0]).toMatch(/^model-[0-9a-f]{24}\.onnx$/);
    extended = files()[0];
    const file = path.join(dir, extended);
    const written = fs.statSync(file).mtimeMs;
    // The first session already reads the file it wrote (model-session.mjs): a second load reads it without
    // writing it again.
    const cached = await output(first);
    await (await loaded(ort, bytes, { ...options, cacheDir: dir })).release();
    expect(fs.statSync(file).mtimeMs).toBe(written);
    const atLoad = await output(await loaded(ort, bytes, options));
    let worst = 0;
    for (let i = 0; i < atLoad.length; i++) worst = Math.max(worst, Math.abs(atLoad[i] - cached[i]));
    expect(worst).toBeLessThan(1e-3);
    // Another level is another file.
    await (await loaded(ort, bytes, { threads: 1, optimization: 'basic', cacheDir: dir })).release();
    expect(files()).toHaveLength(2);
  }, 120_000);

  it('makes the file again when it cannot be read', async () => {
    // The first test's file, spoilt (a cut-short write, another build's): the next load makes it again.
    const options = { threads: 1, optimization: 'extended' as const, cacheDir: dir };
    if (!extended) {
      await (await loaded(ort, bytes, options)).release(); // this test alone: make it first
      extended = files()[0];
    }
    const name = extended;
    const before = files();
    fs.writeFileSync(path.join(dir, name), 'not a model');
    const session = await loaded(ort, bytes, options);
    expect(session.outputNames).toContain('output');
    await session.release();
    expect(files()).toEqual(before); // made again in its place, no partial file left
    expect(fs.statSync(path.join(dir, name)).size).toBeGreaterThan(50_000_000);
  }, 120_000);

  it('makes the file in a child process: this one neither quantizes nor optimises, so keeps none of that memory', async () => {
    // The int8 model: widened, cut down, quantized and optimised (seconds of CPU). Made in a child, this
    // process only writes the model's bytes for it and loads the file; optimised here (no cache), it does it all.
    const options = { threads: 1, int8: true };
    const own = () => {
      const u = process.resourceUsage();
      return (u.userCPUTime + u.systemCPUTime) / 1000;
    };
    let t = own();
    await (await loaded(ort, bytes, { ...options, cacheDir: dir })).release();
    const withChild = own() - t;
    t = own();
    await (await loaded(ort, bytes, options)).release();
    const here = own() - t;
    expect(files().filter((f) => !/^model-[0-9a-f]{24}\.onnx$/.test(f))).toEqual([]); // no source or partial file left
    expect(withChild).toBeLessThan(here / 2);
  }, 120_000);
});
