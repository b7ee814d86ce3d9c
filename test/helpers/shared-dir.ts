// Where ../shared (spec, eval-data) is: MATTE_SHARED_DIR if set, else beside this checkout, else beside the
// repository this one was cloned from (a fresh clone in a temp folder). Undefined when none exists:
// the suites that read it then skip and say so.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const ROOT = path.resolve(import.meta.dirname, '../..');

function originDir(): string | undefined {
  try {
    const url = execFileSync('git', ['config', '--get', 'remote.origin.url'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return url && fs.existsSync(url) ? path.resolve(url) : undefined;
  } catch {
    return undefined;
  }
}

function find(): string | undefined {
  // Set, MATTE_SHARED_DIR is the only place looked at (a path that does not exist stands for "absent").
  const candidates = process.env.MATTE_SHARED_DIR
    ? [process.env.MATTE_SHARED_DIR]
    : [path.join(ROOT, '..', 'shared'), originDir() && path.join(originDir()!, '..', 'shared')];
  return candidates.find((d): d is string => !!d && fs.existsSync(path.join(d, 'eval-data', 'manifest.json')));
}

export const SHARED_DIR = find();
if (!SHARED_DIR) {
  console.warn(
    '[matte tests] ../shared (spec and eval-data) not found: suites that read it are SKIPPED. Set MATTE_SHARED_DIR to its path.',
  );
}
