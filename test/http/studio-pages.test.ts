// The studio's files as Matte serves them: a strict Content-Security-Policy on every page (no inline code
// at all in the build), the app's routes answered with its page, hashed assets cached for good, a clear
// page where no build exists, and the first load's JavaScript within the 150 KB (gzipped) budget.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { registerStudio, STUDIO_CSP, STUDIO_DIR } from '../../src/http/studio.ts';

const BUDGET_GZIP_BYTES = 150 * 1024;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The files the page loads at once: its module scripts, module preloads and style sheets. */
function firstLoad(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)="(\/studio\/assets\/[^"]+)"/g)].map((m) => m[1]);
}

describe('the studio, served', () => {
  it('was built by npm install (prepare) into studio/dist', () => {
    expect(fs.existsSync(path.join(STUDIO_DIR, 'index.html')), 'run npm run prepare').toBe(true);
  });

  it('answers every app route with the page and a strict CSP, and the page has no inline code', async () => {
    for (const url of ['/studio/', '/studio/batches', '/studio/batches/job_x/photos/itm_y', '/studio/keys']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toBe(STUDIO_CSP);
      expect(res.headers['x-frame-options']).toBe('DENY');
      const html = res.body;
      // Every script is a file; no inline script, handler, style element or style attribute.
      for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\bsrc="/);
      expect(html).not.toMatch(/<script\b[^>]*>[^<\s]/);
      expect(html).not.toMatch(/\son[a-z]+=/i);
      expect(html).not.toMatch(/<style\b|\sstyle=/i);
    }
    expect(STUDIO_CSP).toContain("script-src 'self'");
    expect(STUDIO_CSP).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  it('serves the hashed assets for a year, 404s unknown ones, and sends / to the studio', async () => {
    const html = (await t.app.inject({ method: 'GET', url: '/studio/' })).body;
    const files = firstLoad(html);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const res = await t.app.inject({ method: 'GET', url: file });
      expect(res.statusCode, file).toBe(200);
      expect(res.headers['cache-control']).toMatch(/immutable/);
    }
    expect((await t.app.inject({ method: 'GET', url: '/studio/assets/missing.js' })).statusCode).toBe(404);
    const root = await t.app.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/studio/');
    expect((await t.app.inject({ method: 'GET', url: '/studio' })).headers.location).toBe('/studio/');
    // The pages are not API operations.
    const openapi = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(openapi.paths).filter((p) => !p.startsWith('/v1/'))).toEqual([]);
  });

  it('serves its icon at /favicon.ico and at the path the page links (an SVG), without a key', async () => {
    const page = (await t.app.inject({ method: 'GET', url: '/studio/' })).body;
    expect(page).toContain('<link rel="icon" type="image/svg+xml" href="/studio/favicon.svg"');
    for (const url of ['/favicon.ico', '/studio/favicon.svg']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('image/svg+xml');
      expect(res.body).toMatch(/^<svg /);
    }
  });

  it('loads at most 150 KB of JavaScript, gzipped, on first load (printed)', async () => {
    const html = (await t.app.inject({ method: 'GET', url: '/studio/' })).body;
    const scripts = firstLoad(html).filter((file) => file.endsWith('.js'));
    let total = 0;
    for (const file of scripts)
      total += gzipSync(fs.readFileSync(path.join(STUDIO_DIR, file.slice('/studio/'.length)))).length;
    console.log(
      `studio first load: ${scripts.length} script(s), ${(total / 1024).toFixed(1)} KB of JavaScript gzipped (budget 150 KB)`,
    );
    expect(total).toBeGreaterThan(1000);
    expect(total).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
  });

  it('says how to build it where no build exists, and the API still answers', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-no-studio-'));
    const app = Fastify();
    try {
      await registerStudio(app, empty);
      const res = await app.inject({ method: 'GET', url: '/studio/batches' });
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('npm run prepare');
      expect(res.headers['content-security-policy']).toBe(STUDIO_CSP);
    } finally {
      await app.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
