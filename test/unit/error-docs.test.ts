// The error pages come from the list the server answers with: docs/errors.md is current, every code has
// its section and its own page, and a problem's `type` points at a section that exists.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorsDoc, ERRORS_DOC } from '../../scripts/error-docs.ts';
import { ERROR_CODES, ITEM_ERROR_CODES } from '../../src/errors.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('error documentation', () => {
  it('docs/errors.md is generated from src/errors.ts (npm run generate)', async () => {
    expect((await errorsDoc()) === fs.readFileSync(ERRORS_DOC, 'utf8'), 'docs/errors.md is stale').toBe(true);
    const doc = fs.readFileSync(ERRORS_DOC, 'utf8');
    for (const code of [...Object.keys(ERROR_CODES), ...ITEM_ERROR_CODES]) expect(doc).toContain(code);
  });

  it('serves a section per code at /docs/errors and a page per code at /docs/errors/CODE', async () => {
    const index = await t.app.inject({ method: 'GET', url: '/docs/errors' });
    expect(index.headers['content-type']).toMatch(/text\/html/);
    for (const [code, { status, title }] of Object.entries(ERROR_CODES)) {
      expect(index.body).toContain(`<section id="${code}">`);
      const one = await t.app.inject({ method: 'GET', url: `/docs/errors/${code}` });
      expect(one.statusCode).toBe(200);
      expect(one.body).toContain(`(${status})`);
      expect(one.body).toContain(title);
    }
    for (const code of ITEM_ERROR_CODES) expect(index.body).toContain(`id="item-${code}"`);
    const unknown = await t.app.inject({ method: 'GET', url: '/docs/errors/NOPE' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it("links each problem's type to its section", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/jobs/job_nope' });
    const type = res.json().type as string;
    const anchor = type.split('#')[1];
    expect(anchor).toBe(res.json().code);
    expect((await t.app.inject({ method: 'GET', url: '/docs/errors' })).body).toContain(`id="${anchor}"`);
  });
});
