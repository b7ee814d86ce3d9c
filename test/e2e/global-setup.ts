// Before any e2e file starts: bin/matte's JavaScript built, and the model as the test servers run it (the int8 model, optimised for this machine)
// made once into their shared cache (MODEL_CACHE_DIR), by `npm run model -- quantize`. Without it, the servers the
// first files start together each make it (about 3 s of quantizing and the optimisation, per process) while the
// other tiers' timed tests run beside them.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { MODEL_CACHE_DIR } from '../helpers/server.ts';

export default function setup(): void {
  const root = path.join(import.meta.dirname, '..', '..');
  // bin/matte's build, made once here rather than by each server the first files start (bin/matte builds where
  // a source is newer than dist/cli).
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-cli.mjs')], { cwd: root, stdio: 'ignore' });
  if (!MODEL_CACHE_DIR) return;
  execFileSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'model-quantize.ts')], {
    cwd: root,
    env: { ...process.env, MATTE_MODEL_CACHE_DIR: MODEL_CACHE_DIR },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
