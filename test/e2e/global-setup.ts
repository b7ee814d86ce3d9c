// Before any e2e file starts: the model as the test servers run it (the int8 model, optimised for this machine)
// made once into their shared cache (MODEL_CACHE_DIR), by `npm run model -- quantize`. Without it, the servers the
// first files start together each make it (about 3 s of quantizing and the optimisation, per process) while the
// other tiers' timed tests run beside them.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { MODEL_CACHE_DIR } from '../helpers/server.ts';

export default function setup(): void {
  if (!MODEL_CACHE_DIR) return;
  const root = path.join(import.meta.dirname, '..', '..');
  execFileSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'model-quantize.ts')], {
    cwd: root,
    env: { ...process.env, MATTE_MODEL_CACHE_DIR: MODEL_CACHE_DIR },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
