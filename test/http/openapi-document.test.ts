// The OpenAPI document as a product (issue 55): its shared objects named in components/schemas (so generated
// clients get named types and renderers a list of models), a description on every operation, examples on the
// main flow, at most 200 KB, and 0 findings from both Spectral's spectral:oas ruleset and Redocly's
// recommended rules, each run here as its real linter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';

// The packages are CommonJS; their named exports come through `default` under ESM.
const { Spectral, Document } = spectralCore as unknown as typeof import('@stoplight/spectral-core');
const { Json } = spectralParsers as unknown as typeof import('@stoplight/spectral-parsers');

let t: TestApp;
let body: string;
let doc: any;
beforeAll(async () => {
  // As `npm start` serves it without PUBLIC_BASE_URL: the server's own address is localhost.
  t = await createTestApp({ publicBaseUrl: 'http://localhost:8080' }, { runWorker: false });
  body = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body;
  doc = JSON.parse(body);
});
afterAll(async () => t.close());

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ what: `${method.toUpperCase()} ${path}`, op })),
  );

describe('the served OpenAPI document', () => {
  it('names its shared objects in components/schemas and refers to them: at most 200 KB', () => {
    expect(body.length).toBeLessThanOrEqual(200 * 1024);
    const names = Object.keys(doc.components.schemas);
    for (const name of [
      'Job',
      'JobSummary',
      'Item',
      'Account',
      'ReviewQueue',
      'ReviewEntry',
      'JobEvent',
      'Settings',
      'JobDefaults',
      'Counts',
      'Problem',
      'CreateJobRequest',
      'LedgerPage',
      'Preset',
    ])
      expect(names, name).toContain(name);
    // The batch answer is a reference, and so is each of its photos inside the component.
    expect(doc.paths['/v1/jobs/{id}/start'].post.responses['202'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Job',
    });
    expect(doc.components.schemas.Job.properties.items.items).toEqual({ $ref: '#/components/schemas/Item' });
    // No object of a model is written out again anywhere else.
    const models = new Set(names.map((n) => JSON.stringify(doc.components.schemas[n])));
    const inline: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (typeof node !== 'object' || node === null) return;
      if (models.has(JSON.stringify(node))) inline.push(at);
      for (const [k, v] of Object.entries(node)) if (k !== 'example' && k !== 'examples') walk(v, `${at}/${k}`);
    };
    walk(doc.paths, '#/paths');
    expect(inline).toEqual([]);
  });

  it('describes every operation, and shows examples on the main flow', () => {
    const bare = operations().filter(({ op }) => !op.description?.trim());
    expect(bare.map((o) => o.what)).toEqual([]);
    const example = (path: string, method = 'post') => {
      const media = doc.paths[path][method].requestBody.content['application/json'];
      return media.example ?? Object.values<{ value: unknown }>(media.examples ?? {})[0]?.value;
    };
    expect(example('/v1/jobs')).toMatchObject({ name: expect.any(String), defaults: { presetId: expect.any(String) } });
    expect(example('/v1/jobs/{id}/start')).toEqual({ sample: 1 });
    expect(example('/v1/images')).toMatchObject({ imageUrl: expect.stringMatching(/^https:/) });
    expect(example('/v1/jobs/{id}/items')).toMatchObject({
      urls: expect.arrayContaining([expect.stringMatching(/^https:/)]),
    });
    expect(doc.components.schemas.Counts.examples).toHaveLength(1);
    expect(doc.components.schemas.Problem.examples[0]).toMatchObject({ code: 'NO_CREDITS', status: 402 });
  });

  it("has no finding under Spectral's spectral:oas ruleset", async () => {
    const spectral = new Spectral();
    spectral.setRuleset(oas as never);
    const results = await spectral.run(new Document(body, Json, '/v1/openapi.json'));
    expect(results.map((r) => `${r.code}: ${r.message} at ${r.path.join('.')}`)).toEqual([]);
  });

  it("has no finding under Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: body, absoluteRef: '/v1/openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });
});
