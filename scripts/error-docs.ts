// Writes docs/errors.md from src/errors.ts (the codes the server answers with), formatted as the
// repository formats. `npm run generate`; test/unit/error-docs.test.ts checks it is current.
import fs from 'node:fs';
import path from 'node:path';
import { inRepoStyle } from '../tools/repo-style.ts';
import { errorsMarkdown } from '../src/http/error-pages.ts';

export const ERRORS_DOC = path.join(import.meta.dirname, '..', 'docs', 'errors.md');

export function errorsDoc(): Promise<string> {
  return inRepoStyle(ERRORS_DOC, errorsMarkdown());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  fs.writeFileSync(ERRORS_DOC, await errorsDoc());
  console.log(`written: ${path.relative(process.cwd(), ERRORS_DOC)}`);
}
