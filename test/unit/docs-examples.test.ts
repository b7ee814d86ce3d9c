// The TypeScript example of docs/quickstart.md is examples/quickstart.ts, word for word, and it type-checks
// under the project's strict settings as a user's file would (importing @matte/client by its package name).
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

  it('type-checks under strict TypeScript', () => {
    const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile).config;
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
    expect(options.strict).toBe(true);
    const program = ts.createProgram([EXAMPLE], options);
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? path.relative(ROOT, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
      );
    expect(errors).toEqual([]);
  }, 60_000);
});
