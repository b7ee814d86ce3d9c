// Builds the real app (real database, real files, real sharp) around a fake model, for app.inject tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { ThresholdMaskModel } from './fake-model.ts';

export interface TestApp {
  app: FastifyInstance;
  c: Container;
  model: ThresholdMaskModel;
  dataDir: string;
  account(
    plan?: number,
    pack?: number,
    password?: string,
  ): Promise<{ accountId: string; apiKey: string; email: string; auth: { authorization: string } }>;
  close(): Promise<void>;
}

let n = 0;

export async function createTestApp(
  overrides: Partial<Config> = {},
  opts: { runWorker?: boolean; clock?: () => number } = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-test-'));
  const config = loadConfig(
    {},
    { dataDir, publicBaseUrl: 'http://matte.test', logLevel: 'silent', leaseMs: 5000, ...overrides },
  );
  const model = new ThresholdMaskModel();
  const c = await createContainer(config, {
    model,
    log: pino({ level: 'silent' }),
    runWorker: opts.runWorker ?? true,
    clock: opts.clock,
  });
  const app = await buildApp(c);
  await app.ready();
  c.worker?.start();
  c.dispatcher.start();
  return {
    app,
    c,
    model,
    dataDir,
    async account(plan = 100, pack = 0, password?: string) {
      const email = `user${++n}-${Date.now()}@example.com`;
      const out = await c.accounts.createAccount({ email, plan, pack, password });
      return { ...out, email, auth: { authorization: `Bearer ${out.apiKey}` } };
    },
    async close() {
      await app.close();
      await c.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** multipart/form-data body for app.inject. */
export function multipart(parts: { name: string; filename?: string; data: Buffer | string; type?: string }[]): {
  payload: Buffer;
  headers: Record<string, string>;
} {
  const boundary = `----matte${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    const type = p.filename !== undefined ? `\r\nContent-Type: ${p.type ?? 'application/octet-stream'}` : '';
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`),
      Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** POST /v1/jobs/{id}/items with `files` as the form's `files` parts, through app.inject. */
export function addFiles(
  app: FastifyInstance,
  auth: Record<string, string>,
  jobId: string,
  files: { filename: string; data: Buffer; type?: string }[],
) {
  const form = multipart(files.map((f) => ({ name: 'files', ...f })));
  return app.inject({
    method: 'POST',
    url: `/v1/jobs/${jobId}/items`,
    headers: { ...auth, ...form.headers },
    payload: form.payload,
  });
}

/** Waits until the batch is no longer queued or running. */
export async function waitForBatch(
  app: FastifyInstance,
  auth: Record<string, string>,
  jobId: string,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/v1/jobs/${jobId}?wait=5`, headers: auth });
    const job = res.json();
    if (!['queued', 'running'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`batch ${jobId} still ${job.status}`);
  }
}
