// The client's types are generated from the document the server serves: generating them again from
// today's routes must give the committed file, byte for byte.
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { clientTypes, SCHEMA_FILE, servedDocument } from '../../scripts/client-types.ts';

describe('@matte/client types', () => {
  let served: Record<string, unknown>;
  beforeAll(async () => {
    served = await servedDocument();
  });

  it('match the OpenAPI document the server serves (npm run generate regenerates them)', async () => {
    const doc = structuredClone(served);
    expect(doc.openapi).toBe('3.1.0');
    const fresh = await clientTypes(doc);
    expect(fresh).toContain("'/v1/jobs/{id}/start'");
    expect(fresh === fs.readFileSync(SCHEMA_FILE, 'utf8'), 'schema.ts is stale: run npm run generate').toBe(true);
  });

  it('change when the served document changes', async () => {
    const doc = structuredClone(served) as { paths: Record<string, unknown> };
    delete doc.paths['/v1/presets'];
    expect(await clientTypes(doc)).not.toBe(fs.readFileSync(SCHEMA_FILE, 'utf8'));
  });
});
