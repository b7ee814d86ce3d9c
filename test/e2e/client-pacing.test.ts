// End to end: `matte remove` keeps to the server's request rate from the rate-limit headers it is sent, on a real
// server with the real model whose key may make 8 requests a minute: the run takes more than that, waits where it
// must, writes every result, and the server answers no request of it with 429 (its own metrics say so).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { E2E_TEST_TIMEOUT, freePort, startServer, type RunningServer } from '../helpers/server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

const ROOT = path.resolve(import.meta.dirname, '../..');
let server: RunningServer;
let metrics: string;
let apiKey: string;
let work: string;

beforeAll(async () => {
  if (!HAVE_EVAL_DATA) return;
  const port = await freePort();
  metrics = `http://127.0.0.1:${port}/metrics`;
  server = await startServer({ MATTE_REQUESTS_PER_MINUTE: '8', MATTE_METRICS_PORT: String(port) });
  apiKey = (await server.createAccount('pacing@example.com', 10)).apiKey;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-pacing-'));
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!HAVE_EVAL_DATA)('matte remove and the rate limit', () => {
  it('keeps to 8 requests a minute without meeting a 429, and says nothing of the waits', async () => {
    const input = path.join(work, 'in');
    fs.mkdirSync(input);
    const small = evalEntries()
      .filter((e) => e.image.endsWith('.jpg'))
      .sort((a, b) => a.width * a.height - b.width * b.height)
      .slice(0, 4);
    for (const e of small) fs.writeFileSync(path.join(input, path.basename(e.image)), evalFile(e.image));
    const out = path.join(work, 'out');
    const ran = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(path.join(ROOT, 'bin/matte'), ['remove', input, '-o', out], {
        env: { PATH: process.env.PATH, HOME: work, MATTE_URL: server.base, MATTE_API_KEY: apiKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/^4 written to /);
    expect(ran.stderr).not.toMatch(/429|trying again/);
    const text = await (await fetch(metrics)).text();
    const answered = [...text.matchAll(/^matte_http_request_seconds_count\{[^}]*status="(\d+)"[^}]*\} (\d+)/gm)];
    const total = answered.reduce((n, m) => n + Number(m[2]), 0);
    // More requests than the minute allows were made (so the run had to wait), and none was refused.
    expect(total).toBeGreaterThan(8);
    expect(answered.filter((m) => m[1] === '429')).toEqual([]);
  });
});
