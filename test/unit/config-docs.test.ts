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
    ...text.matchAll(/\b(?:int|flag|oneOfEnv)\(env, '([A-Z][A-Z0-9_]+)'/g),
    ...text.matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g),
    ...text.matchAll(/\$\{?(MATTE_[A-Z0-9_]+)/g),
  ];
  return new Set(found.map((m) => m[1]!));
}

describe('configuration documentation', () => {
  it('docs/configuration.md is generated from src/config.ts (npm run generate)', async () => {
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

  it('refuses a value out of a closed list or not a number, naming the variable and what it takes', () => {
    expect(() => loadConfig({ MATTE_MODEL_OPTIMIZATION: 'fast' })).toThrow(
      'MATTE_MODEL_OPTIMIZATION must be one of basic, extended, all, got "fast"',
    );
    expect(() => loadConfig({ MATTE_MODEL_THREADS: 'two' })).toThrow('MATTE_MODEL_THREADS must be an integer');
    expect(loadConfig({ MATTE_MODEL_OPTIMIZATION: 'basic' }).modelOptimization).toBe('basic');
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

  it('states every whole-number default as loadConfig gives it, found by setting each variable in turn', () => {
    const base = loadConfig({}) as unknown as Record<string, unknown>;
    const units: Record<string, number> = { MiB: 2 ** 20, GiB: 2 ** 30 };
    let checked = 0;
    for (const row of SETTINGS) {
      const parts = row.default.split(', ');
      if (parts.length !== row.names.length) continue;
      row.names.forEach((name, i) => {
        const m = /^`?([\d ]+)`?(?: (MiB|GiB))?$/.exec(parts[i]!);
        if (!m) return;
        const stated = Number(m[1]!.replace(/ /g, '')) * (m[2] ? units[m[2]]! : 1);
        // The setting the variable moves: the one number (or switch) that changes when it is set to another
        // valid value; a switch's `1` and `0` read as on and off.
        let key: string | undefined;
        for (const value of ['7', '3000', '123457', '0']) {
          let moved: Record<string, unknown>;
          try {
            moved = loadConfig({ [name]: value }) as unknown as Record<string, unknown>;
          } catch {
            continue;
          }
          const changed = Object.keys(base).filter(
            (k) => ['number', 'boolean'].includes(typeof base[k]) && moved[k] !== base[k],
          );
          if (changed.length === 1) key = changed[0];
          if (key) break;
        }
        expect(key, `${name}: no setting moves when it is set`).toBeDefined();
        expect(base[key!], `${name} (${key})`).toBe(typeof base[key!] === 'boolean' ? stated !== 0 : stated);
        checked++;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(18);
  });
});
