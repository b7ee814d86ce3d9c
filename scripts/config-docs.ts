// Writes docs/configuration.md from SETTINGS in src/config.ts, formatted as the repository formats.
// `npm run generate`; test/unit/config-docs.test.ts checks it is current.
import fs from 'node:fs';
import path from 'node:path';
import { inRepoStyle } from '../tools/repo-style.ts';
import { SETTINGS } from '../src/config.ts';

export const CONFIG_DOC = path.join(import.meta.dirname, '..', 'docs', 'configuration.md');

export function configMarkdown(): string {
  const row = (s: (typeof SETTINGS)[number]) =>
    `| ${s.names.map((n) => `\`${n}\``).join(', ')} | ${s.default} | ${s.meaning} |`;
  return [
    '# Configuration',
    '',
    '<!-- Generated from SETTINGS in src/config.ts by `npm run generate`; edit it there. -->',
    '',
    'Every setting is read once from the environment by `src/config.ts`, checked, and frozen; a bad value stops',
    'start-up with a line naming it. `bin/matte` reads the two that must act before Node.js starts (the malloc',
    'tuning).',
    '',
    '| variable | default | meaning |',
    '| --- | --- | --- |',
    ...SETTINGS.map(row),
    '',
    'The test suites also read `MATTE_TEST_PG_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`),',
    '`MATTE_SHARED_DIR` (where `../shared` is), `MATTE_CHROMIUM` (the browser the studio tests drive) and',
    '`MATTE_INVARIANT_SEED` (replays one history of the ledger invariant test).',
    '',
  ].join('\n');
}

export function configDoc(): Promise<string> {
  return inRepoStyle(CONFIG_DOC, configMarkdown());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  fs.writeFileSync(CONFIG_DOC, await configDoc());
  console.log(`written: ${path.relative(process.cwd(), CONFIG_DOC)}`);
}
