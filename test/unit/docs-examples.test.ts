// The TypeScript example of docs/quickstart.md is examples/quickstart.ts, word for word, and it type-checks
// under the project's strict settings as a user's file would (importing @matte/client by its package name),
// in `npm run check`.
// scripts/first-hour.ts runs it against a real server with the command the docs give.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EXAMPLE = path.join(ROOT, 'examples', 'quickstart.ts');

describe('the quickstart example', () => {
  it('is the TypeScript block of docs/quickstart.md', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'quickstart.md'), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBe(fs.readFileSync(EXAMPLE, 'utf8'));
  });

  it("is type-checked under strict TypeScript by npm run check, as a user's file would be", () => {
    // `tsc --noEmit` in `npm run check` (which CI runs before the tests) compiles examples/ with the
    // project's settings; type-checking it again here cost the unit tier six seconds.
    const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile).config;
    const { options, fileNames } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
    expect(options.strict).toBe(true);
    expect(fileNames).toContain(EXAMPLE);
    expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.check).toMatch(
      /(^|&& )tsc --noEmit( |$)/,
    );
  });
});
