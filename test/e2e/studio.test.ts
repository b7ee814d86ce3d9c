// The studio in a real browser (Debian's Chromium driven by playwright-core) against a real server with the
// real model: sign in, make a key and use it, run a batch of three real photos live, review and report one,
// apply a preset, download the ZIP, the refusals a seller meets (402, 429, an ended session) and signing
// out. axe-core checks every page; each page is photographed at 1280 and 375 px wide.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';
import { E2E_TEST_TIMEOUT, type ServerHandle } from '../helpers/server.ts';
import { sharedServer } from '../helpers/shared-server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';
import { unzip } from '../helpers/unzip.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

const CHROMIUM = process.env.MATTE_CHROMIUM ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
const ROOT = path.resolve(import.meta.dirname, '../..');
/** Screenshots are kept under artifacts/studio (CI's artefact); MATTE_UPDATE_SCREENSHOTS=1 also refreshes docs/studio. */
const SHOTS = path.join(ROOT, 'artifacts', 'studio');
const DOCS_SHOTS = path.join(ROOT, 'docs', 'studio');
const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'studio password 1234';

let server: ServerHandle;
let browser: Browser;
let photoDir: string;
const cspViolations: string[] = [];
const a11y: Record<string, string[]> = {};

async function account(email: string, plan: number) {
  const out = await server.run(
    ['accounts', 'create', '--email', email, '--plan', String(plan), '--pack', '0', '--json', '--password-stdin'],
    PASSWORD,
  );
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as { accountId: string; apiKey: string };
}

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/Content[- ]Security[- ]Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return { context, page };
}

async function signIn(page: Page, email: string) {
  await page.goto(`${server.base}/studio/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** axe-core on the page as it is (WCAG 2 A and AA and best practice); keeps serious and critical findings. */
async function audit(page: Page, name: string) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await (
      globalThis as unknown as {
        axe: { run: (context: unknown, options: unknown) => Promise<{ violations: any[] }> };
      }
    ).axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).join(', ')})`);
  });
  a11y[name] = violations;
}

/** The page at 1280 and at 375 px wide, audited at both; nothing may scroll sideways at 375. */
async function shoot(page: Page, name: string) {
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: width === 375 ? 812 : 900 });
    await page.waitForTimeout(150);
    const file = path.join(SHOTS, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    if (process.env.MATTE_UPDATE_SCREENSHOTS === '1') {
      fs.mkdirSync(DOCS_SHOTS, { recursive: true });
      fs.copyFileSync(file, path.join(DOCS_SHOTS, `${name}-${width}.png`));
    }
    await audit(page, `${name} at ${width} px`);
    if (width === 375) {
      const { overflow, widest } = await page.evaluate(() => ({
        overflow: document.documentElement.scrollWidth - window.innerWidth,
        widest: [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
          .slice(0, 5)
          .map((e) => `${e.tagName.toLowerCase()}.${e.className}#${e.id}`),
      }));
      expect(overflow, `${name} scrolls sideways at 375 px: ${widest.join(', ')}`).toBeLessThanOrEqual(1);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** A saved cut-out's alpha, one byte a pixel. */
async function cutoutAlpha(key: string, url: string) {
  const png = Buffer.from(
    await (await fetch(`${server.base}${url}`, { headers: { authorization: `Bearer ${key}` } })).arrayBuffer(),
  );
  const { data, info } = await sharp(png).ensureAlpha().extractChannel(3).raw().toBuffer({ resolveWithObject: true });
  return { alpha: data, width: info.width, height: info.height };
}

/**
 * The touch-up on the photo page, with real pointer drags: an Erase drag along a row of the product leaves that
 * row transparent in the saved cut-out; Undo and Redo (Ctrl-Z, Ctrl-Shift-Z) and ] change what Save sends;
 * Revert brings back the model's cut-out.
 */
async function touchUpInBrowser(page: Page, key: string, batchId: string, name: string) {
  const find = async () =>
    (await api(key, `/v1/jobs/${batchId}`)).body.items.find((i: any) => i.name === name) as Record<string, any>;
  const before = await find();
  const { alpha, width, height } = await cutoutAlpha(key, before.cutoutUrl);
  // The row with the longest run of opaque product, and the middle half of that run.
  let best = { y: 0, from: 0, to: -1 };
  for (let y = Math.round(height * 0.2); y < height * 0.8; y++) {
    for (let x = 0; x < width; x++) {
      if (alpha[y * width + x] !== 255) continue;
      const from = x;
      while (x + 1 < width && alpha[y * width + x + 1] === 255) x++;
      if (x - from > best.to - best.from) best = { y, from, to: x };
    }
  }
  const quarter = Math.round((best.to - best.from) / 4);
  const [x0, x1, y] = [best.from + quarter, best.to - quarter, best.y];
  expect(x1 - x0, 'an opaque stretch of product to erase').toBeGreaterThan(10);

  const canvas = page.getByRole('application', { name: /^Cut-out of .* to paint on/ });
  // Painting starts once the cut-out and the photo are loaded into it.
  await page.locator('canvas[data-ready]').waitFor();
  await page.getByRole('radio', { name: 'Erase' }).check();
  // ] makes the brush larger; the slider says so.
  const size = Number(await page.getByLabel(/^Brush size/).inputValue());
  await canvas.focus();
  await page.keyboard.press(']');
  expect(Number(await page.getByLabel(/^Brush size/).inputValue())).toBeGreaterThan(size);
  // Where the canvas is once nothing else will scroll the page.
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox())!;
  const at = (px: number, py: number) => [
    box.x + ((px + 0.5) / width) * box.width,
    box.y + ((py + 0.5) / height) * box.height,
  ];
  // A stray dab, undone with Ctrl-Z, redone with Ctrl-Shift-Z, undone again: Save sends only the drag.
  const save = page.locator('.touch-actions button').nth(2);
  await page.mouse.click(at(5, 5)[0], at(5, 5)[1]);
  await expect.poll(() => save.innerText()).toBe('Save (1 stroke)');
  await page.keyboard.press('Control+z');
  await expect.poll(() => save.innerText()).toBe('Save');
  await page.keyboard.press('Control+Shift+z');
  await expect.poll(() => save.innerText()).toBe('Save (1 stroke)');
  await page.keyboard.press('Control+z');
  await expect.poll(() => save.innerText()).toBe('Save');
  const [sx, sy] = at(x0, y);
  const [ex, ey] = at(x1, y);
  await page.mouse.move(sx, sy);
  await page.mouse.down();
  await page.mouse.move(ex, ey, { steps: 12 });
  await page.mouse.up();
  await page.getByRole('button', { name: 'Save (1 stroke)' }).click();
  await page.getByText('Saved: the touched-up cut-out').waitFor();
  const after = await find();
  expect(after.touchUp).toMatchObject({ strokes: 1 });
  const saved = await cutoutAlpha(key, after.cutoutUrl);
  for (let x = x0 + 2; x <= x1 - 2; x += Math.max(1, Math.round((x1 - x0) / 10)))
    expect(saved.alpha[y * width + x], `alpha at ${x}, ${y}`).toBe(0);
  // The stray dab was undone: the corner is as the model left it.
  expect(saved.alpha[5 * width + 5]).toBe(alpha[5 * width + 5]);
  await shoot(page, 'touch-up');

  await page.getByRole('button', { name: 'Revert to the model’s cut-out' }).click();
  await page.getByText('Back to the model’s cut-out.').waitFor();
  const reverted = await find();
  expect(reverted.touchUp).toBeUndefined();
  expect((await cutoutAlpha(key, reverted.cutoutUrl)).alpha.equals(alpha)).toBe(true);
}

async function api(key: string, url: string) {
  const response = await fetch(`${server.base}${url}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as any };
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM || !HAVE_EVAL_DATA) return;
  server = sharedServer();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
  // Three real photos of the eval set, the smallest JPEGs, under their own names.
  photoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-studio-photos-'));
  const picked = evalEntries()
    .filter((e) => e.image.endsWith('.jpg'))
    .sort((x, y) => x.width * x.height - y.width * y.height)
    .slice(0, 3);
  picked.forEach((entry, i) => fs.writeFileSync(path.join(photoDir, `product-${i + 1}.jpg`), evalFile(entry.image)));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (photoDir) fs.rmSync(photoDir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_CHROMIUM || !HAVE_EVAL_DATA)(
  `the studio in Chromium${HAVE_CHROMIUM ? '' : ` (skipped: no ${CHROMIUM}; apt-get install -y chromium)`}`,
  () => {
    it('signs in, makes a key, runs a batch live, reviews, applies a preset, downloads and signs out', async () => {
      const email = `seller-${Date.now()}@example.com`;
      await account(email, 50);
      const { context, page } = await newPage();

      await page.goto(`${server.base}/studio/`);
      await page.getByLabel('Email').waitFor();
      await shoot(page, 'sign-in');
      await signIn(page, email);

      // The session cookie is HttpOnly and SameSite=Strict.
      const cookie = (await context.cookies()).find((c) => c.name.startsWith('matte'));
      expect(cookie?.httpOnly).toBe(true);
      expect(cookie?.sameSite).toBe('Strict');

      // Keys: create one, read its secret once, use it from outside the browser.
      await page.getByRole('link', { name: 'Keys' }).click();
      await page.getByLabel('Key name').fill('Shop sync');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = await page.getByLabel('Secret').inputValue();
      expect(secret).toMatch(/^mk_/);
      const me = await api(secret, '/v1/account');
      expect(me.status).toBe(200);
      expect(me.body.auth.via).toBe('key');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      // The key the admin command made with the account, and this one.
      await expect.poll(() => page.getByRole('button', { name: 'Revoke' }).count()).toBe(2);
      await shoot(page, 'keys');

      // A batch: three real photos through the file input, started, followed live.
      await page.getByRole('link', { name: 'Batches' }).click();
      await page.getByLabel('Name of the new batch').fill('Spring shoes');
      await page.getByRole('button', { name: 'New batch' }).click();
      await page.getByRole('heading', { name: 'Spring shoes' }).waitFor();
      await page
        .getByLabel('Photos', { exact: true })
        .setInputFiles(fs.readdirSync(photoDir).map((name) => path.join(photoDir, name)));
      await page.getByText('3 photos added').waitFor();
      const batchId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
      await page.getByRole('button', { name: 'Start' }).click();
      // Live: the progress line counts up and each photo's cut-out thumbnail appears as it finishes,
      // without reloading the page.
      const navigations: string[] = [];
      page.on('framenavigated', (frame) => navigations.push(frame.url()));
      await page.getByText('3 of 3 photos finished').waitFor({ timeout: 240_000 });
      await expect.poll(() => page.getByRole('img', { name: /, cut out$/ }).count(), { timeout: 20_000 }).toBe(3);
      expect(navigations).toEqual([]);
      // The last photo's event comes before the batch's own ending.
      await expect.poll(async () => (await api(secret, `/v1/jobs/${batchId}`)).body.status).toBe('done');
      await shoot(page, 'batch');

      // The list names the batch, and tells a one-photo call of the API apart (and can hide it).
      const single = new FormData();
      single.append('file', new Blob([fs.readFileSync(path.join(photoDir, 'product-1.jpg'))]), 'mug.jpg');
      const one = await fetch(`${server.base}/v1/images`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}` },
        body: single,
      });
      expect(one.status).toBe(200);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Batches' }).click();
      await page.getByRole('link', { name: 'Spring shoes' }).waitFor();
      await page.getByRole('link', { name: 'One photo: mug.jpg' }).waitFor();
      await shoot(page, 'batches');
      await page.getByLabel('Hide one-photo calls made through the API').check();
      await expect.poll(() => page.getByRole('link', { name: 'One photo: mug.jpg' }).count()).toBe(0);
      await page.getByRole('link', { name: 'Spring shoes' }).click();
      await page.getByRole('heading', { name: 'Spring shoes' }).waitFor();
      // The browser's icon is there.
      const icon = await fetch(`${server.base}/favicon.ico`);
      expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);

      // Apply a preset to the finished photos: re-rendered, no model, no charge.
      const presets = (await api(secret, '/v1/presets')).body.presets as { id: string; width: number }[];
      const preset = presets.find((p) => p.width > 0)!;
      const before = (await api(secret, '/v1/account')).body.credits.plan;
      await page.getByLabel('Preset').selectOption(preset.id);
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('Re-rendered 3 photos.').waitFor();
      await expect
        .poll(async () => (await api(secret, `/v1/jobs/${batchId}`)).body.items.map((i: any) => i.settings.presetId))
        .toEqual([preset.id, preset.id, preset.id]);
      expect((await api(secret, '/v1/account')).body.credits.plan).toBe(before);
      // Opened again, "Apply settings" shows the look the photos have now, so applying without a change keeps it.
      await page.reload();
      await page.getByRole('heading', { name: 'Spring shoes' }).waitFor();
      await expect.poll(() => page.getByLabel('Preset').inputValue()).toBe(preset.id);

      // The ZIP, with a pattern: the preview shows the names the server then uses.
      await page.getByLabel('File name pattern').fill('{n}-{name}');
      await page.getByLabel('Format').selectOption('png');
      await page.getByText('1-product-1.png').waitFor();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download ZIP' }).click(),
      ]);
      const entries = [...(await unzip(fs.readFileSync(await download.path()))).keys()].sort();
      expect(entries).toEqual(['1-product-1.png', '2-product-2.png', '3-product-3.png']);

      // Review: open a photo, draw a region on the cut-out, pick a reason, report; the verdict is shown.
      await page.getByRole('link', { name: 'Open product-1.jpg' }).click();
      const stage = page.locator('.stage');
      await stage.waitFor();
      const box = (await stage.boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.05, box.y + box.height * 0.05);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.3, { steps: 5 });
      await page.mouse.up();
      expect(Number(await page.getByLabel('Width').inputValue())).toBeGreaterThan(0);
      await page.getByLabel('Reason').selectOption('background-kept');
      await page.getByRole('button', { name: 'Report problem' }).click();
      await page.getByText(/^Report (accepted|rejected)/).waitFor();
      const reported = (await api(secret, `/v1/jobs/${batchId}`)).body.items.find(
        (i: any) => i.name === 'product-1.jpg',
      );
      expect(reported.claims).toHaveLength(1);
      await touchUpInBrowser(page, secret, batchId, 'product-1.jpg');
      await page.getByLabel('Before / after').fill('20');
      await shoot(page, 'review');
      // The score on its scale, with what it means.
      await page
        .getByText(/the check: score \d+ of 100 \((50 or more passes|under 50: the cut-out is judged broken)\)/)
        .waitFor();
      // Before and after line up: the cut-out lies exactly over the original, on a phone and on a desktop.
      for (const width of [375, 1280]) {
        await page.setViewportSize({ width, height: 900 });
        const before = page.getByRole('img', { name: 'product-1.jpg, before' });
        const after = page.getByRole('img', { name: /^product-1\.jpg, after/ });
        await expect
          .poll(() => before.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0))
          .toBe(true);
        const [b, a] = [(await before.boundingBox())!, (await after.boundingBox())!];
        for (const k of ['x', 'y', 'width', 'height'] as const)
          expect(Math.abs(a[k] - b[k]), `${k} at ${width} px`).toBeLessThan(1);
        expect(b.width, `fits the page at ${width} px`).toBeLessThanOrEqual(width);
        // The stage keeps the photo's own proportions, so neither image is stretched.
        const natural = await before.evaluate((img: HTMLImageElement) => img.naturalWidth / img.naturalHeight);
        expect(Math.abs(b.width / b.height - natural)).toBeLessThan(0.02);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      // Without a heavy model of its own the heavy re-run is not the lead button: the light re-run is.
      const heavyButton = page.getByRole('button', { name: /^Re-run on heavy tier/ });
      expect(await heavyButton.getAttribute('class')).toBe('secondary');
      expect(await page.getByRole('button', { name: 'Re-run (1 credit)' }).getAttribute('class')).toBeNull();
      // A heavy re-run is confirmed first; on this server (no heavy model) the confirmation says it would run
      // the same model again.
      await page.getByRole('button', { name: 'Re-run on heavy tier' }).click();
      await page.getByText('This server runs no heavy model of its own').waitFor();
      await page.getByRole('button', { name: 'Cancel' }).click();

      // Credits: the ledger filtered by the batch shows its reservations.
      await page.getByRole('link', { name: 'Credits' }).click();
      await page.getByLabel('Batch').fill(batchId);
      await page.getByRole('button', { name: 'Filter' }).click();
      // The unfiltered ledger (with the pack's grant, batch "—") stays on screen until the filtered page
      // arrives, so wait for the rows to change rather than for any row.
      await expect
        .poll(async () => new Set(await page.locator('tbody tr td:last-child').allTextContents()), {
          // The whole suite's load on two cores: the filtered page has taken over the default 5 s there.
          timeout: 20_000,
        })
        .toEqual(new Set([batchId]));
      // Each row says what it means to a seller, the kind beneath.
      await page.getByText('Charged: the photo came out clean').first().waitFor();
      await shoot(page, 'credits');

      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByLabel('Password').waitFor();
      await shoot(page, 'account');

      // An ended session loses nothing: the typed key name stays, a sign-in dialog covers the page,
      // and after signing in the same click goes through.
      await page.getByRole('link', { name: 'Keys' }).click();
      await page.getByLabel('Key name').fill('After the session ended');
      await context.clearCookies();
      await page.getByRole('button', { name: 'Create key' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      expect(await page.getByLabel('Key name').inputValue()).toBe('After the session ended');
      await dialog.getByLabel('Email').fill(email);
      await dialog.getByLabel('Password').fill(PASSWORD);
      await dialog.getByRole('button', { name: 'Sign in' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByText('Your new key “After the session ended”').waitFor();

      // Signing out ends the session on the server too.
      const session = (await context.cookies()).find((c) => c.name.startsWith('matte'))!;
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      const after = await fetch(`${server.base}/v1/session`, {
        headers: { cookie: `${session.name}=${session.value}` },
      });
      expect(after.status).toBe(401);
      await context.close();
    }, 420_000);

    it('shows 402 NO_CREDITS next to Start and keeps the photos and settings', async () => {
      const email = `poor-${Date.now()}@example.com`;
      await account(email, 1);
      const { context, page } = await newPage();
      // Keyboard only: the fields in order, Enter submits.
      await page.goto(`${server.base}/studio/`);
      await page.getByLabel('Email').waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.getByRole('button', { name: 'New batch' }).focus();
      await page.keyboard.press('Enter');
      await page.getByLabel('Photos', { exact: true }).waitFor();
      await page
        .getByLabel('Photos', { exact: true })
        .setInputFiles(fs.readdirSync(photoDir).map((name) => path.join(photoDir, name)));
      await page.getByText('3 photos added').waitFor();
      await page.getByLabel('Background', { exact: true }).selectOption('white');
      await page.getByRole('button', { name: 'Start' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/NO_CREDITS/);
      expect(await alert.textContent()).toMatch(/Buy a pack or redeem a licence/);
      expect(await page.getByLabel('Background', { exact: true }).inputValue()).toBe('white');
      expect(await page.getByRole('img', { name: /, before$/ }).count()).toBe(3);
      await context.close();
    });

    it('runs a sample of one, previews a real cut-out with the chosen look, then continues the rest', async () => {
      const email = `sample-${Date.now()}@example.com`;
      await account(email, 10);
      const { context, page } = await newPage();
      await signIn(page, email);
      await page.getByRole('button', { name: 'New batch' }).click();
      await page
        .getByLabel('Photos', { exact: true })
        .setInputFiles(fs.readdirSync(photoDir).map((name) => path.join(photoDir, name)));
      await page.getByText('3 photos added').waitFor();
      await page.getByLabel('Sample (optional)').fill('1');
      await page.getByText('Starting reserves 1 credit').waitFor();
      await page.getByRole('button', { name: 'Start' }).click();
      await page.getByText('Paused with 2 photos held (not charged).').waitFor({ timeout: 120_000 });
      // The look picker renders the finished sample through the server (preview), as an image from a blob.
      await page.getByLabel('Background', { exact: true }).selectOption('white');
      const preview = page.getByRole('img', { name: /^Preview of .* with these settings$/ });
      await preview.waitFor({ timeout: 30_000 });
      expect(await preview.getAttribute('src')).toMatch(/^blob:/);
      await page.getByRole('button', { name: 'Continue (2 credits)' }).click();
      await page.getByText('3 of 3 photos finished').waitFor({ timeout: 240_000 });
      await context.close();
    }, 420_000);

    it('shows 429 on too many sign-in attempts and keeps the e-mail typed', async () => {
      const { context, page } = await newPage();
      await page.goto(`${server.base}/studio/`);
      await page.getByLabel('Email').fill('someone-else@example.com');
      await page.getByLabel('Password').fill('not the password');
      let text = '';
      for (let i = 0; i < 15 && !/RATE_LIMITED/.test(text); i++) {
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').waitFor();
        await expect.poll(() => page.getByRole('button', { name: 'Sign in' }).isEnabled()).toBe(true);
        text = (await page.getByRole('alert').textContent()) ?? '';
      }
      expect(text).toMatch(/RATE_LIMITED/);
      expect(text).toMatch(/Try again in \d+ s/);
      expect(await page.getByLabel('Email').inputValue()).toBe('someone-else@example.com');
      await context.close();
    });

    it('no page has a serious or critical axe-core finding, and the CSP refused nothing', () => {
      expect(Object.keys(a11y).length).toBeGreaterThanOrEqual(12);
      const findings = Object.entries(a11y).flatMap(([page, list]) => list.map((v) => `${page}: ${v}`));
      expect(findings).toEqual([]);
      expect(cspViolations).toEqual([]);
    });
  },
);
