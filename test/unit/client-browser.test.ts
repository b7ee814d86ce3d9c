// @matte/client runs in browsers (the studio uses it): its entry bundles for the browser platform with no
// Node built-in, and stays small.
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ENTRY = path.resolve(import.meta.dirname, '../../packages/client/src/index.ts');

describe('@matte/client in a browser', () => {
  it('bundles for the browser without Node built-ins', async () => {
    const out = await build({
      entryPoints: [ENTRY],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      minify: true,
      write: false,
      logLevel: 'silent',
    });
    const code = out.outputFiles[0].text;
    expect(code).not.toMatch(/from\s*["']node:/);
    expect(code).toContain('Last-Event-ID'.toLowerCase());
    // openapi-fetch, the SSE parser and our code: a few kilobytes.
    expect(gzipSync(code).length).toBeLessThan(12_000);
  });

  it('refuses to bundle the Node helpers for a browser', async () => {
    await expect(
      build({
        entryPoints: [path.join(path.dirname(ENTRY), 'node.ts')],
        bundle: true,
        platform: 'browser',
        write: false,
        logLevel: 'silent',
      }),
    ).rejects.toThrow(/node:fs|node:path/);
  });
});
