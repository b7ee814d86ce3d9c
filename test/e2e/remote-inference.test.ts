// The server with its model on an inference server (MATTE_INFERENCE_URL) that fails: each protocol failure
// gives the photo its error code, charges nothing, and the message the seller reads names no backend.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type RunningServer, E2E_TEST_TIMEOUT } from '../helpers/server.ts';
import { productPhoto } from '../helpers/images.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

let server: RunningServer;
let stand: http.Server;
let inferStatus = 503;
/** What the stand answers its readiness and metadata at: 503 stands for a backend that is away. */
let readyStatus = 200;
let auth: Record<string, string>;

beforeAll(async () => {
  // Metadata and readiness as Triton answers them; /infer answers what the test sets.
  stand = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/v2/models/isnet/ready') return json(readyStatus, { ready: readyStatus === 200 });
      if (req.url === '/v2/models/isnet')
        return json(readyStatus, {
          name: 'isnet',
          inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 3, 1024, 1024] }],
          outputs: [{ name: 'output', datatype: 'FP32', shape: [1, 1, 1024, 1024] }],
        });
      if (req.url === '/v2/models/isnet/infer')
        return json(inferStatus, { error: 'triton-gpu-3.internal: overloaded' });
      json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((r) => stand.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(stand.address() as AddressInfo).port}/v2/models/isnet`;
  server = await startServer({ MATTE_INFERENCE_URL: url });
  const created = await server.createAccount('remote@example.com', 10);
  auth = { authorization: `Bearer ${created.apiKey}` };
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await new Promise<void>((r) => stand?.close(() => r()));
});

async function runOne(): Promise<any> {
  const call = (p: string, init: RequestInit = {}) =>
    fetch(`${server.base}${p}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
  const id = (await (await call('/v1/jobs', { method: 'POST' })).json()).id;
  const form = new FormData();
  form.append('files', new Blob([new Uint8Array(await productPhoto())]), 'a.jpg');
  await call(`/v1/jobs/${id}/items`, { method: 'POST', body: form });
  expect((await call(`/v1/jobs/${id}/start`, { method: 'POST' })).status).toBe(202);
  for (;;) {
    const job = await (await call(`/v1/jobs/${id}?wait=20`)).json();
    if (['done', 'failed'].includes(job.status)) return { job, account: await (await call('/v1/account')).json() };
  }
}

describe('remote inference failures, end to end', () => {
  it('gives each failure its photo error code, charges nothing, and never names the backend', async () => {
    for (const [status, code] of [
      [503, 'REMOTE_UNAVAILABLE'],
      [429, 'REMOTE_RATE_LIMIT'],
      [401, 'REMOTE_AUTH'],
      [402, 'REMOTE_CREDIT'],
      [400, 'REMOTE_BAD_INPUT'],
    ] as const) {
      inferStatus = status;
      const { job, account } = await runOne();
      expect(job.status, String(status)).toBe('failed');
      const [item] = job.items;
      expect(item.error.code, String(status)).toBe(code);
      expect(item.error.message).not.toMatch(/triton|internal|127\.0\.0\.1|isnet|http/i);
      expect(item.credits).toBe(0);
      expect(account.credits.plan).toBe(10);
    }
  });

  it('a backend away at start is asked again when a batch starts: once it is back, the batch is taken (no 503)', async () => {
    readyStatus = 503;
    const late = await startServer({
      MATTE_INFERENCE_URL: `http://127.0.0.1:${(stand.address() as AddressInfo).port}/v2/models/isnet`,
    });
    try {
      const key = (await late.createAccount('late@example.com', 10)).apiKey;
      const call = (p: string, init: RequestInit = {}) =>
        fetch(`${late.base}${p}`, { ...init, headers: { authorization: `Bearer ${key}` } });
      const batch = async () => {
        const id = (await (await call('/v1/jobs', { method: 'POST' })).json()).id;
        const form = new FormData();
        form.append('files', new Blob([new Uint8Array(await productPhoto())]), 'a.jpg');
        await call(`/v1/jobs/${id}/items`, { method: 'POST', body: form });
        return call(`/v1/jobs/${id}/start`, { method: 'POST' });
      };
      // Away: the start is refused as unavailable, nothing charged.
      for (let i = 0; i < 50 && (await batch()).status !== 503; i++) await new Promise((r) => setTimeout(r, 100));
      expect((await batch()).status).toBe(503);
      readyStatus = 200;
      expect((await batch()).status).toBe(202);
    } finally {
      readyStatus = 200;
      await late.stop();
    }
  });
});
