// A new user's first start, as the README has it: `npm start` on an empty DATA_DIR (so the model is optimised
// and its file written for the first time), at the default log level. What reaches the console is Matte's own:
// no third-party warning (onnxruntime's "Serializing optimized model …" among them, the AWS SDK's, Node's).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { E2E_TEST_TIMEOUT, freePort } from '../helpers/server.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });
const ROOT = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-first-start-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('npm start on a fresh DATA_DIR', () => {
  it("prints Matte's own lines only: no third-party warning while the model is made and loaded", async () => {
    const port = await freePort();
    const env: Record<string, string> = {};
    // A user's environment: none of the test runner's variables, nor its model cache.
    for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR']) if (process.env[name]) env[name] = process.env[name]!;
    const proc = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: npm starts bin/matte, which becomes the server; stopping the group stops it too.
      detached: true,
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const deadline = Date.now() + 150_000;
      while (!out.includes('the model is ready') && Date.now() < deadline && proc.exitCode === null)
        await new Promise((r) => setTimeout(r, 250));
      expect(out, out).toContain('the model is ready');
      // The optimised model was written now, for the first time: the moment onnxruntime warns about.
      expect(fs.readdirSync(path.join(dataDir, 'model-cache')).some((f) => f.endsWith('.onnx'))).toBe(true);
      const lines = out.split('\n').filter((l) => l.trim() !== '');
      const foreign = lines.filter((l) => !l.startsWith('{') && !/^> (matte@|bin\/matte serve)/.test(l));
      expect(foreign, out).toEqual([]);
      expect(out).not.toMatch(/onnxruntime|Warning|\[W:/);
      for (const line of lines.filter((l) => l.startsWith('{'))) expect(JSON.parse(line).level, line).toBeLessThan(40);
    } finally {
      const exited = new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)));
      try {
        process.kill(-proc.pid!, 'SIGTERM');
      } catch {
        // the group has already ended
      }
      await exited;
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
});
