// The Open Inference Protocol client: the real model behind `bin/matte inference-server` gives the same mask
// as the in-process model; a stand-in server answers each failure, which becomes its photo error code with
// a message that names no backend; the circuit opens after repeated failures and closes again.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { OipMaskModel, CircuitBreaker } from '../../../src/adapters/oip-mask-model.adapter.ts';
import { OnnxMaskModel, MODEL_INPUT_SIZE, squareInput } from '../../../src/adapters/mask-model.adapter.ts';
import { startInferenceServer } from '../../../src/main/inference-server.ts';
import { loadConfig, modelRunOptions } from '../../../src/config.ts';
import { PhotoError } from '../../../src/errors.ts';
import { productPhoto } from '../../helpers/images.ts';

const SIZE = MODEL_INPUT_SIZE;
async function modelInput(): Promise<Buffer> {
  return sharp(await productPhoto(800, 600))
    .resize(SIZE, SIZE, { fit: 'fill' })
    .removeAlpha()
    .raw()
    .toBuffer();
}

describe('bin/matte inference-server and the OIP client, with the real model', () => {
  let server: Awaited<ReturnType<typeof startInferenceServer>>;
  beforeAll(async () => {
    server = await startInferenceServer(0, '127.0.0.1');
  }, 120_000);
  afterAll(async () => {
    await server?.app.close();
    await server?.session.release();
  });

  it('checks metadata, runs binary tensors, and gives the in-process model’s mask', async () => {
    const remote = new OipMaskModel({ url: `http://127.0.0.1:${server.port}/v2/models/isnet` });
    await remote.ready();
    const rgb = await modelInput();
    const got = await remote.predict(squareInput(rgb));
    // The model as the inference server runs it by default (the int8 one, MATTE_MODEL_INT8), from the same cache.
    const local = new OnnxMaskModel({ modelPath: '', ...modelRunOptions(loadConfig()) });
    try {
      await local.ready();
      const want = await local.predict(squareInput(rgb));
      let differing = 0;
      for (let i = 0; i < want.mask.length; i++) if (Math.abs(want.mask[i] - got.mask[i]) > 1) differing++;
      expect(differing / want.mask.length).toBeLessThan(0.001);
      expect(got.bbox).toEqual(want.bbox);
    } finally {
      await local.close();
    }
    // An input of the wrong shape is the protocol's 400.
    const res = await fetch(`http://127.0.0.1:${server.port}/v2/models/isnet/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 3, 2, 2], data: [0, 0, 0] }] }),
    });
    expect(res.status).toBe(400);
    // A header that is JSON but not an infer request (inputs not a list, a tensor without a name) as well.
    for (const header of [{ inputs: 'input' }, { inputs: [{ datatype: 'FP32' }] }]) {
      const refused = await fetch(`http://127.0.0.1:${server.port}/v2/models/isnet/infer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(header),
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: 'the inference header is not an infer request' });
    }
    await expect(new OipMaskModel({ url: `http://127.0.0.1:${server.port}/v2/models/nope` }).ready()).rejects.toThrow();
  }, 120_000);
});

describe('the OIP client on failures (a stand-in server)', () => {
  let status = 200;
  let calls = 0;
  let base: string;
  const stand = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') calls++;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'stand-in says no at backend-7.internal' }));
    });
  });
  beforeAll(async () => {
    await new Promise<void>((r) => stand.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(stand.address() as AddressInfo).port}/v2/models/isnet`;
  });
  afterAll(() => new Promise<void>((r) => stand.close(() => r())));

  const rgb = Buffer.alloc(SIZE * SIZE * 3, 128);
  const failure = async (model: OipMaskModel) => {
    const err = await model.predict(squareInput(rgb)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PhotoError);
    expect((err as PhotoError).message).not.toMatch(/127\.0\.0\.1|backend|isnet|http/i);
    return (err as PhotoError).code;
  };

  it('maps each answer to its photo error code, retrying only what the backend may get over', async () => {
    const model = new OipMaskModel({ url: base, retries: 2, sleep: async () => undefined, breakerThreshold: 100 });
    for (const [answer, code, tries] of [
      [429, 'REMOTE_RATE_LIMIT', 1],
      [401, 'REMOTE_AUTH', 1],
      [403, 'REMOTE_AUTH', 1],
      [402, 'REMOTE_CREDIT', 1],
      [400, 'REMOTE_BAD_INPUT', 1],
      [500, 'REMOTE_UNAVAILABLE', 3],
      [503, 'REMOTE_UNAVAILABLE', 3],
    ] as const) {
      status = answer;
      calls = 0;
      expect(await failure(model), String(answer)).toBe(code);
      expect(calls, String(answer)).toBe(tries);
    }
    const refused = new OipMaskModel({ url: 'http://127.0.0.1:9/v2/models/isnet', retries: 0 });
    expect(await failure(refused)).toBe('REMOTE_UNAVAILABLE');
  });

  it('times out a call that does not answer', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as AddressInfo).port;
      const model = new OipMaskModel({ url: `http://127.0.0.1:${port}/v2/models/isnet`, timeoutMs: 200, retries: 0 });
      expect(await failure(model)).toBe('REMOTE_UNAVAILABLE');
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('opens the circuit after repeated failures (no call reaches the backend), and closes it once a trial succeeds', async () => {
    let now = 0;
    const model = new OipMaskModel({
      url: base,
      retries: 0,
      breakerThreshold: 3,
      breakerCooldownMs: 10_000,
      clock: () => now,
      sleep: async () => undefined,
    });
    status = 503;
    calls = 0;
    for (let i = 0; i < 3; i++) await failure(model);
    expect(model.circuit).toBe('open');
    expect(await failure(model)).toBe('REMOTE_UNAVAILABLE');
    expect(calls).toBe(3);
    now += 10_001;
    expect(model.circuit).toBe('half-open');
    await failure(model); // the trial fails: open again
    expect(calls).toBe(4);
    expect(model.circuit).toBe('open');
    const breaker = new CircuitBreaker(1, 1000, () => now);
    breaker.failure();
    expect(breaker.allow()).toBe(false);
    now += 1001;
    expect(breaker.allow()).toBe(true);
    expect(breaker.allow()).toBe(false); // one trial at a time
    breaker.success();
    expect(breaker.state).toBe('closed');
  });
});
