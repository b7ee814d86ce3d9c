// A JSON body over the limit, on every operation that takes JSON, over real sockets with Node's fetch:
// the answer is always a 413 problem+json the client can read, never a reset connection. The upload is
// sent in slow chunks, so an answer written (and the socket closed) before the body has arrived would
// fail the fetch every time; a 16 MB body (above every limit) goes in one piece. The server keeps answering after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let base: string;
let key: string;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  t = await createTestApp({ requestsPerMinute: 1_000_000, maxImageBytes: MAX_IMAGE_BYTES }, { runWorker: false });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const account = await t.account(10, 0, 'correct horse battery');
  key = account.apiKey;
  const signedIn = await t.app.inject({
    method: 'POST',
    url: '/v1/session',
    payload: { email: account.email, password: 'correct horse battery' },
  });
  session = { cookie: String(signedIn.headers['set-cookie']).split(';')[0]!, csrf: signedIn.json().csrfToken };
});
afterAll(async () => t.close());

/** POST /v1/images' own limit: a photo of MATTE_MAX_IMAGE_BYTES in base64, and room for the rest. */
const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
const IMAGES_LIMIT = Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 64 * 1024;

/** Every operation whose request body may be JSON, from the served OpenAPI document. */
async function jsonOperations(): Promise<{ method: string; path: string; studio: boolean }[]> {
  const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  const out: { method: string; path: string; studio: boolean }[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>))
    for (const [method, op] of Object.entries(methods))
      if (op.requestBody?.content?.['application/json'])
        out.push({
          method: method.toUpperCase(),
          path: path.replace(/\{[^}]+\}/g, 'x1'),
          studio: (op.tags ?? []).includes('studio'),
        });
  return out;
}

const made = new Map<number, Uint8Array<ArrayBuffer>>();
/** `bytes` of JSON, made once for every operation that is sent it (not a copy each: 20 of 16 MB under load). */
function jsonOf(bytes: number): Uint8Array<ArrayBuffer> {
  let json = made.get(bytes);
  if (!json) made.set(bytes, (json = new TextEncoder().encode(`{"pad":"${'x'.repeat(bytes - 10)}"}`)));
  return json;
}

/** `bytes` of JSON, in 64 KB chunks with a pause between them (a slow uplink), or all at once. */
function body(bytes: number, slow: boolean): BodyInit {
  const json = jsonOf(bytes);
  if (!slow) return json;
  let at = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= json.length) return controller.close();
      await new Promise((r) => setTimeout(r, 2));
      controller.enqueue(json.subarray(at, (at += 64 * 1024)));
    },
  });
}

async function send(op: { method: string; path: string; studio: boolean }, bytes: number, slow: boolean) {
  const auth: Record<string, string> = op.studio
    ? { cookie: session.cookie, 'x-csrf-token': session.csrf }
    : { authorization: `Bearer ${key}` };
  const res = await fetch(`${base}${op.path}`, {
    method: op.method,
    headers: { 'content-type': 'application/json', 'content-length': String(bytes), ...auth },
    body: body(bytes, slow),
    ...(slow ? { duplex: 'half' } : {}),
  } as RequestInit);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.json() };
}

describe('a JSON body over the limit', () => {
  it('gets 413 TOO_LARGE as problem+json on every JSON operation, sent slowly (4 MB) or at once (16 MB)', async () => {
    const ops = await jsonOperations();
    expect(ops.length).toBeGreaterThanOrEqual(12);
    const answers: string[] = [];
    for (const [bytes, slow] of [
      [4 * 1024 * 1024, true],
      [16 * 1024 * 1024, false], // above every limit, POST /v1/images' 10.7 MB among them
    ] as const) {
      const got = await Promise.all(
        ops.map(async (op) => {
          const a = await send(op, bytes, slow).catch((err: Error) => ({
            status: 0,
            type: null,
            body: { code: `${err.message}: ${(err.cause as Error | undefined)?.message}` },
          }));
          return `${op.method} ${op.path} ${bytes >> 20} MB: ${a.status} ${a.type?.split(';')[0]} ${a.body.code}`;
        }),
      );
      answers.push(...got);
    }
    // POST /v1/images takes a photo inline in JSON (base64): its limit is the photo limit's, 10.7 MB here.
    const expected = answers.map((a) =>
      a.includes('/v1/images') && IMAGES_LIMIT >= Number(/ (\d+) MB/.exec(a)![1]) << 20
        ? a.replace(/: .*$/, ': 400 application/problem+json VALIDATION')
        : a.replace(/: .*$/, ': 413 application/problem+json TOO_LARGE'),
    );
    expect(answers).toEqual(expected);
    // Still serving.
    const after = await fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
    expect(after.status).toBe(200);
  }, 180_000);

  it('is read to its end before an early refusal too (401, 404), so the client reads the answer', async () => {
    for (const [path, headers, status] of [
      ['/v1/jobs', {}, 401],
      ['/v1/nowhere', { authorization: `Bearer ${key}` }, 404],
    ] as const) {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: body(768 * 1024, true),
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
  });
});
