// The studio's boundary, enforced by eslint.config.js: it reaches the server through @matte/client only,
// and runs in the browser (no Node built-ins). A rule nobody has seen fire is not a rule.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: ROOT });

async function restricted(code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the studio boundary', () => {
  it("refuses the server's own modules and Node built-ins in studio/", async () => {
    const code =
      "import { AppError } from '../../src/errors.ts';\nimport fs from 'node:fs';\nexport const x = [AppError, fs];\n";
    const messages = await restricted(code, 'studio/src/pages/boundary-probe.tsx');
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/through @matte\/client only/);
    expect(messages[1]).toMatch(/no Node built-ins/);
  });

  it('lets the studio import @matte/client and its own modules', async () => {
    const code =
      "import { MatteClient } from '@matte/client';\nimport { ok } from '../api.ts';\nexport const x = [MatteClient, ok];\n";
    expect(await restricted(code, 'studio/src/pages/boundary-probe.tsx')).toEqual([]);
  });
});
