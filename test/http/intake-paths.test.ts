import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import sharp from 'sharp';
import { createTestApp, multipart, waitForBatch, type TestApp } from '../helpers/test-app.ts';
import { makeZip, productPhoto } from '../helpers/images.ts';

let open: TestApp; // MATTE_ALLOW_PRIVATE_NETWORKS=1
let closed: TestApp; // the default: private networks refused
let server: http.Server;
let base: string;

beforeAll(async () => {
  open = await createTestApp({ allowPrivateNetworks: true });
  closed = await createTestApp();
  const photo = await productPhoto();
  const zip = makeZip([{ name: 'in/zip.jpg', data: photo }]);
  server = http.createServer((req, res) => {
    if (req.url === '/shoe.jpg') return res.end(photo);
    if (req.url === '/all.zip') return res.end(zip);
    if (req.url === '/moved') return res.writeHead(302, { location: '/shoe.jpg' }).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.close();
  await open.close();
  await closed.close();
});

describe('adding photos by link', () => {
  it('fetches links and ZIP links server-side; failures land in rejected', async () => {
    const { auth } = await open.account();
    const jobId = (await open.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth })).json().id;
    const res = await open.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items`,
      headers: auth,
      payload: {
        urls: [`${base}/shoe.jpg`, `${base}/moved`, `${base}/missing.jpg`, 'ftp://x/y.jpg'],
        zipUrl: `${base}/all.zip`,
      },
    });
    const body = res.json();
    expect(res.statusCode).toBe(200);
    expect(body.items.map((i: { name: string }) => i.name)).toEqual(['shoe.jpg', 'moved', 'in/zip.jpg']);
    expect(body.rejected.map((r: { reason: string }) => r.reason)).toEqual([
      expect.stringMatching(/HTTP 404/),
      expect.stringMatching(/http and https/),
    ]);
  });

  it('refuses loopback and private hosts by default', async () => {
    const { auth } = await closed.account();
    const jobId = (await closed.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth })).json().id;
    const body = (
      await closed.app.inject({
        method: 'POST',
        url: `/v1/jobs/${jobId}/items`,
        headers: auth,
        payload: { urls: [`${base}/shoe.jpg`, 'http://10.0.0.1/x.jpg', 'http://localhost:1/x.jpg'] },
      })
    ).json();
    expect(body.added).toBe(0);
    expect(body.rejected).toHaveLength(3);
    for (const r of body.rejected) expect(r.reason).toMatch(/Private and loopback/);
  });
});

describe('multipart batch creation', () => {
  it('takes options and a background image; photos are composed onto it', async () => {
    const { auth } = await open.account();
    const red = await sharp({ create: { width: 50, height: 50, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const form = multipart([
      { name: 'options', data: JSON.stringify({ background: { mode: 'image' } }) },
      { name: 'background', filename: 'bg.png', data: red },
    ]);
    const created = await open.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    expect(created.statusCode).toBe(201);
    const job = created.json();
    expect(job.options.defaults.background).toEqual({ mode: 'image', hasImage: true });
    const files = multipart([{ name: 'files', filename: 'a.jpg', data: await productPhoto(400, 300) }]);
    await open.app.inject({
      method: 'POST',
      url: `/v1/jobs/${job.id}/items`,
      headers: { ...auth, ...files.headers },
      payload: files.payload,
    });
    await open.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
    const done = await waitForBatch(open.app, auth, job.id);
    const item = (done.items as Array<Record<string, any>>)[0];
    const out = await open.app.inject({ method: 'GET', url: item.outputUrl, headers: auth });
    const { data } = await sharp(out.rawPayload).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([data[0], data[1], data[2], data[3]]).toEqual([255, 0, 0, 255]); // the background image shows where the photo's background was
  });

  it('refuses mode image without an image, and bad options JSON', async () => {
    const { auth } = await open.account();
    const noImage = multipart([{ name: 'options', data: JSON.stringify({ background: { mode: 'image' } }) }]);
    const res = await open.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { ...auth, ...noImage.headers },
      payload: noImage.payload,
    });
    expect(res.json()).toMatchObject({ code: 'VALIDATION' });
    const badJson = multipart([{ name: 'options', data: '{nope' }]);
    const bad = await open.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { ...auth, ...badJson.headers },
      payload: badJson.payload,
    });
    expect(bad.json().errors[0].path).toBe('body/options');
  });
});

describe('animated input', () => {
  it('takes the first frame', async () => {
    const { auth } = await open.account();
    const frame = (colour: string) =>
      sharp({ create: { width: 120, height: 100, channels: 3, background: colour } })
        .png()
        .toBuffer();
    const animated = await sharp(
      [await productPhoto(120, 100, 'png'), await frame('#ffffff'), await frame('#f0f0f0')],
      { join: { animated: true } },
    )
      .webp()
      .toBuffer();
    expect((await sharp(animated).metadata()).pages).toBe(3);
    const jobId = (await open.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth })).json().id;
    const form = multipart([{ name: 'files', filename: 'anim.webp', data: animated }]);
    await open.app.inject({
      method: 'POST',
      url: `/v1/jobs/${jobId}/items`,
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    await open.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/start`, headers: auth });
    const done = await waitForBatch(open.app, auth, jobId);
    const item = (done.items as Array<Record<string, any>>)[0];
    // The first frame has the product (the others are blank and would be NO_SUBJECT).
    expect(item.status).toBe('done');
    expect(item.meta.output).toMatchObject({ width: 120, height: 100 });
  });
});
