// npm install runs this (postinstall): builds the native cut-out kernels (the C files in native/) into
// build/cutout-kernels.node with the machine's C compiler ($CC, else cc) against Node's own headers.
// Without a compiler or headers it says so and stops without failing the install: the service then
// runs the same kernels in JavaScript (src/adapters/cutout-kernels.mjs), with the same results, slower.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const sourceDir = path.join(root, 'native');
const target = path.join(root, 'build', 'cutout-kernels.node');

/** Node's headers: beside this node (a packaged install), or where npm's `nodedir` points. */
function headerDir() {
  const candidates = [path.join(path.dirname(process.execPath), '..', 'include', 'node')];
  if (process.env.npm_config_nodedir) candidates.push(path.join(process.env.npm_config_nodedir, 'include', 'node'));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'node_api.h')));
}

function build() {
  const include = headerDir();
  if (!include) return 'Node.js headers (node_api.h) were not found beside this node';
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const temp = `${target}.${process.pid}.tmp`;
  const sources = fs.readdirSync(sourceDir).filter((f) => f.endsWith('.c')).sort().map((f) => path.join(sourceDir, f));
  // No contraction into fused multiply-adds and no fast-math: the same rounding as the JavaScript.
  // Hidden visibility: only the module's entry is exported, so no name of ours meets one of Node's (zlib's adler32).
  const args = ['-std=c11', '-O3', '-fPIC', '-shared', '-fvisibility=hidden', '-ffp-contract=off', '-Wall', '-I', include, ...sources, '-o', temp, '-lm'];
  const cc = process.env.CC || 'cc';
  const run = spawnSync(cc, args, { encoding: 'utf8' });
  if (run.error || run.status !== 0) {
    fs.rmSync(temp, { force: true });
    return `${cc} failed: ${(run.error?.message ?? run.stderr).trim()}`;
  }
  fs.renameSync(temp, target);
  return null;
}

const failure = build();
if (failure) {
  console.warn(`matte: the native cut-out kernels were not built (${failure}); the JavaScript ones will be used, with the same results, slower.`);
} else {
  console.log(`matte: built ${path.relative(root, target)}`);
}
