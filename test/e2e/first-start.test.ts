// A new user's first start, as the README has it: `npm start` on an empty DATA_DIR (so the model is optimised
// and its file written for the first time), at the default log level. What reaches the console is Matte's own:
// no third-party warning (onnxruntime's "Serializing optimized model …" among them, the AWS SDK's, Node's).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { E2E_TEST_TIMEOUT, freePort, MODEL_CACHE_DIR } from '../helpers/server.ts';
import { execFileSync } from 'node:child_process';

/** util-linux's `script`, which runs a command on a terminal of its own. */
const SCRIPT = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });
const ROOT = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-first-start-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/** Starts `command` in a process group of its own, gathering what it writes; stop() ends the group. */
function startGroup(command: string, args: string[], env: Record<string, string>) {
  const proc = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return {
    proc,
    output: () => out,
    async waitFor(text: string, ms: number): Promise<void> {
      const deadline = Date.now() + ms;
      while (!out.includes(text) && Date.now() < deadline && proc.exitCode === null)
        await new Promise((r) => setTimeout(r, 250));
    },
    async stop(): Promise<void> {
      const exited = new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)));
      try {
        process.kill(-proc.pid!, 'SIGTERM');
      } catch {
        // the group has already ended
      }
      await exited;
    },
  };
}

describe('npm start on a fresh DATA_DIR', () => {
  it("prints Matte's own lines only: no third-party warning while the model is made and loaded", async () => {
    const port = await freePort();
    const env: Record<string, string> = {};
    // A user's environment: none of the test runner's variables, nor its model cache.
    for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR']) if (process.env[name]) env[name] = process.env[name]!;
    // Its own process group: npm starts bin/matte, which becomes the server; stopping the group stops it too.
    const server = startGroup('npm', ['start'], { ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
    const proc = server.proc;
    try {
      await server.waitFor('the model is ready', 150_000);
      const out = server.output();
      expect(out, out).toContain('the model is ready');
      // The optimised model was written now, for the first time: the moment onnxruntime warns about.
      expect(fs.readdirSync(path.join(dataDir, 'model-cache')).some((f) => f.endsWith('.onnx'))).toBe(true);
      const lines = out.split('\n').filter((l) => l.trim() !== '');
      const foreign = lines.filter((l) => !l.startsWith('{') && !/^> (matte@|bin\/matte serve)/.test(l));
      expect(foreign, out).toEqual([]);
      expect(out).not.toMatch(/onnxruntime|Warning|\[W:/);
      for (const line of lines.filter((l) => l.startsWith('{'))) expect(JSON.parse(line).level, line).toBeLessThan(40);
    } finally {
      await server.stop();
      // Nothing of the group is left running (a server left behind would hold its port and memory): the server
      // finishes what it was doing and exits within its shutdown time.
      const alive = () => {
        try {
          process.kill(-proc.pid!, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 60 && alive(); i++) await new Promise((r) => setTimeout(r, 250));
      expect(alive()).toBe(false);
    }
  });

  it.skipIf(!SCRIPT)(
    'on a terminal, prints one plain line: where the API and the studio are and how to stop it',
    async () => {
      const port = await freePort();
      const terminalData = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-terminal-'));
      const env: Record<string, string> = { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: terminalData };
      for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR']) if (process.env[name]) env[name] = process.env[name]!;
      // The model this suite's servers share, so no optimisation runs here (the test above makes a first one).
      if (MODEL_CACHE_DIR) env.MATTE_MODEL_CACHE_DIR = MODEL_CACHE_DIR;
      // `script` gives npm start a terminal, as a person's shell does.
      const server = startGroup('script', ['-qfec', 'npm start', '/dev/null'], env);
      try {
        await server.waitFor('Matte is serving', 120_000);
        // The model loads after the line: whatever it logs would come within these seconds.
        const ready = Date.now() + 20_000;
        while (
          Date.now() < ready &&
          !(await fetch(`http://127.0.0.1:${port}/readyz`).then(
            (r) => r.ok,
            () => false,
          ))
        )
          await new Promise((r) => setTimeout(r, 250));
        await new Promise((r) => setTimeout(r, 1000));
        const out = server.output();
        const lines = out.split(/\r?\n/).filter((l) => l.trim() !== '' && !/^> (matte@|bin\/matte serve)/.test(l));
        expect(lines, out).toEqual([
          `Matte is serving: API http://localhost:${port}/v1 (reference: http://localhost:${port}/v1/openapi.json), studio http://localhost:${port}/studio/, with its photo worker on the int8 model (MATTE_MODEL_INT8=0 runs the float model); stop it with Ctrl-C or kill ${lines[0]?.match(/kill (\d+)$/)?.[1]}`,
        ]);
        expect(out.includes(String.fromCharCode(27)), 'no colour codes').toBe(false);
      } finally {
        await server.stop();
        fs.rmSync(terminalData, { recursive: true, force: true });
      }
    },
  );
});
