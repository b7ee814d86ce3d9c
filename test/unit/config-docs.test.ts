// docs/configuration.md is generated from SETTINGS in src/config.ts, and SETTINGS names every variable the
// server reads: a setting added to loadConfig without a row, or a row left for a setting gone, fails here.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDoc, CONFIG_DOC } from '../../scripts/config-docs.ts';
import { loadConfig, SETTINGS } from '../../src/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Variable names a source reads: `env.NAME`, `env['NAME']`, and the names given to int() and flag(). */
function namesRead(file: string): Set<string> {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const found = [
    ...text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g),
    ...text.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g),
    ...text.matchAll(/\b(?:int|flag)\(env, '([A-Z][A-Z0-9_]+)'/g),
    ...text.matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g),
    ...text.matchAll(/\$\{?(MATTE_[A-Z0-9_]+)/g),
  ];
  return new Set(found.map((m) => m[1]!));
}

describe('configuration documentation', () => {
  it('docs/configuration.md is generated from src/config.ts (npm run docs:config)', async () => {
    expect((await configDoc()) === fs.readFileSync(CONFIG_DOC, 'utf8'), 'docs/configuration.md is stale').toBe(true);
  });

  it('lists every variable src/config.ts and bin/matte (malloc-tuning.sh) read, and none they do not', () => {
    const listed = new Set(SETTINGS.flatMap((s) => s.names));
    const read = new Set([...namesRead('src/config.ts'), ...namesRead('bin/malloc-tuning.sh')]);
    expect([...read].filter((n) => !listed.has(n)).sort(), 'read but not documented').toEqual([]);
    const elsewhere = new Set(SETTINGS.filter((s) => s.alsoReadBy).flatMap((s) => s.names));
    expect([...listed].filter((n) => !read.has(n) && !elsewhere.has(n)).sort(), 'documented but never read').toEqual(
      [],
    );
  });

  it('states the defaults loadConfig gives with an empty environment', () => {
    const config = loadConfig({});
    const row = (name: string) => SETTINGS.find((s) => s.names.includes(name))!.default;
    expect(row('PORT')).toContain(`\`${config.port}\``);
    expect(row('MATTE_WEBHOOK_RETRY_DELAYS_MS')).toBe(`\`${config.webhookRetryDelaysMs.join(',')}\``);
    expect(row('MATTE_RESULT_TTL_MS')).toBe(`\`${config.resultTtlMs}\``);
    expect(row('MATTE_MODEL_THREADS')).toBe(`\`${config.modelThreads}\``);
    expect(row('MATTE_WORKER_CONCURRENCY')).toBe(`\`${config.workerConcurrency}\``);
    expect(row('MATTE_CUTOUT_THREADS')).toBe(`\`${config.cutoutThreads}\``);
    expect(row('MATTE_HELPER_NICE')).toBe(`\`${config.helperNice}\``);
    expect(row('MATTE_WEBHOOK_TIMEOUT_MS')).toBe(`\`${config.webhookTimeoutMs}\``);
  });
});
