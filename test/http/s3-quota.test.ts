// A bucket that refuses writes (over its quota): uploads answer 507 STORAGE_FULL, reads keep working, nothing
// is charged, and uploads work again when space returns. The store is s3rver behind a small proxy that
// answers writes as a full bucket does (403 QuotaExceeded, or 507) while `full` is set.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addFiles, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { startS3, type S3Server } from '../helpers/s3.ts';

let s3: S3Server;
let proxy: http.Server;
let t: TestApp;
let full: 'quota' | 'status' | null = null;

beforeAll(async () => {
  s3 = await startS3();
  const upstream = new URL(s3.endpoint);
  proxy = http.createServer((req, res) => {
    if (full && (req.method === 'PUT' || req.method === 'POST')) {
      req.resume();
      const code = full === 'quota' ? 'QuotaExceeded' : 'InsufficientStorage';
      res.writeHead(full === 'quota' ? 403 : 507, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><Error><Code>${code}</Code><Message>The bucket is full.</Message></Error>`);
      return;
    }
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
  t = await createTestApp({
    blobStore: `s3://${s3.bucket}/quota`,
    s3: { region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true },
  });
});
afterAll(async () => {
  await t?.close();
  proxy?.close();
  await s3?.close();
});

const upload = async (auth: Record<string, string>, id: string) =>
  addFiles(t.app, auth, id, [{ filename: 'a.jpg', data: await productPhoto(320, 240), type: 'image/jpeg' }]);

describe('a full bucket', () => {
  for (const kind of ['quota', 'status'] as const) {
    it(`answers uploads 507 STORAGE_FULL (${kind === 'quota' ? '403 QuotaExceeded' : '507'}), keeps reads, charges nothing, and recovers`, async () => {
      const { auth } = await t.account(5);
      const id = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json().id;
      expect((await upload(auth, id)).json().added).toBe(1);
      full = kind;
      try {
        const refused = await upload(auth, id);
        expect(refused.statusCode, refused.body).toBe(507);
        expect(refused.json().code).toBe('STORAGE_FULL');
        const read = await t.app.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: auth });
        expect(read.statusCode).toBe(200);
        expect(read.json().counts.total).toBe(1); // nothing half-added
        const account = (await t.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).json();
        expect(account.credits.plan).toBe(5);
      } finally {
        full = null;
      }
      expect((await upload(auth, id)).json().added).toBe(1);
    });
  }
});
