// Before any e2e file starts: bin/matte's JavaScript built, and the model as the test servers run it (the int8
// model, optimised for this machine) made once into their shared cache (MODEL_CACHE_DIR), by `npm run model --
// quantize`. Without it, the servers the first files start together each make it (about 3 s of quantizing and the
// optimisation, per process) while the other tiers' timed tests run beside them. Then the server on the defaults
// that the files share (helpers/shared-server.ts), stopped at the end.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { MODEL_CACHE_DIR, startServer } from '../helpers/server.ts';
import type { SharedServerInfo } from '../helpers/shared-server.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = path.join(import.meta.dirname, '..', '..');
  // bin/matte's build, made once here rather than by each server the first files start (bin/matte builds where
  // a source is newer than dist/cli).
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-cli.mjs')], { cwd: root, stdio: 'ignore' });
  if (MODEL_CACHE_DIR) {
    execFileSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'model-quantize.ts')], {
      cwd: root,
      env: { ...process.env, MATTE_MODEL_CACHE_DIR: MODEL_CACHE_DIR },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  }
  // The server on the defaults that files share (helpers/shared-server.ts), with the tier's one model thread.
  const server = await startServer({ MATTE_MODEL_THREADS: '1' });
  const env = Object.fromEntries(
    Object.entries(server.env).filter((e): e is [string, string] => e[1] !== undefined && process.env[e[0]] !== e[1]),
  );
  const shared: SharedServerInfo = { base: server.base, dataDir: server.dataDir, env };
  project.provide('sharedServer', shared);
  return () => server.stop();
}
