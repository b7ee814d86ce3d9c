// A solid product's inside comes out opaque, and what stays see-through inside is flagged (hole-in-subject), over
// the HTTP API with the stand-in model drawing the mask: the real pipeline, cut-out writer and check around it.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  t.model.shape = null;
  await t?.close();
});

/** A disc of radius 300 (of the model's 1024²) at the centre, `inside` within and a soft 8-cell outline. */
const disc = (inside: (r: number) => number) => (x: number, y: number) => {
  const r = Math.hypot(x - 512, y - 512);
  const d = r - 300;
  return d > 4 ? 0 : d < -4 ? inside(r) : Math.round((inside(r) * (4 - d)) / 8);
};

/** POST /v1/images with an 800x800 product photo: the cut-out, and the photo as its batch answers it. */
async function oneImage(auth: Record<string, string>) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(await productPhoto(800, 800))]), 'p.jpg');
  const request = new Request('http://matte.test/v1/images', { method: 'POST', body: form });
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/images',
    headers: { ...auth, 'content-type': request.headers.get('content-type')! },
    payload: Buffer.from(await request.arrayBuffer()),
  });
  expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
  const job = (
    await t.app.inject({ method: 'GET', url: `/v1/jobs/${res.headers['x-matte-job-id']}`, headers: auth })
  ).json();
  return { png: res.rawPayload, item: job.items[0] };
}

describe('the inside of a subject', () => {
  it("comes out opaque where the model's mask fell short of 255 inside (a white product on white), the outline soft", async () => {
    const { auth } = await t.account(10);
    t.model.shape = disc(() => 200);
    const { png, item } = await oneImage(auth);
    const { data, info } = await sharp(png).extractChannel(3).raw().toBuffer({ resolveWithObject: true });
    const at = (fx: number, fy: number) =>
      data[Math.round(fy * info.height) * info.width + Math.round(fx * info.width)];
    // Deep inside, opaque: the mask said 200.
    expect(at(0.5, 0.5)).toBe(255);
    expect(at(0.5, 0.3)).toBe(255);
    // The outline keeps its soft alpha; the background stays clear.
    let soft = 0;
    for (const v of data) if (v > 0 && v < 255) soft++;
    expect(soft).toBeGreaterThan(100);
    expect(at(0.02, 0.02)).toBe(0);
    expect(item.quality.flags.map((f: { code: string }) => f.code)).not.toContain('hole-in-subject');
  });

  it('is flagged hole-in-subject where it stays see-through: a large unsure hole is left as the model made it', async () => {
    const { auth } = await t.account(10);
    // A ring: inside radius 120, the model was unsure (90): too large a hole to fill.
    t.model.shape = disc((r) => (r < 120 ? 90 : 255));
    const { png, item } = await oneImage(auth);
    const { data, info } = await sharp(png).extractChannel(3).raw().toBuffer({ resolveWithObject: true });
    expect(data[Math.round(info.height / 2) * info.width + Math.round(info.width / 2)]).toBeLessThan(128);
    const flag = item.quality.flags.find((f: { code: string }) => f.code === 'hole-in-subject');
    expect(flag).toMatchObject({ label: 'The cut-out is transparent or see-through inside the subject' });
    expect(flag.severity).toBeGreaterThan(0.5);
    // Its box is the see-through middle, in cut-out pixels.
    expect(flag.bbox.x + flag.bbox.width / 2).toBeCloseTo(info.width / 2, -1);
    expect(flag.bbox.width).toBeGreaterThan(100);
    expect(flag.bbox.width).toBeLessThan(300);
  });
});
