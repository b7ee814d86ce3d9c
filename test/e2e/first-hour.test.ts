// A new user's first hour, on a real server with the real model: the README's tour of the API run as written
// (with the photos of examples/, the key the operator printed, and nothing else changed), and the TypeScript
// quick start (examples/quickstart.ts) as docs/quickstart.md runs it. The tour's event stream ends by itself
// once the sample is done; the quick start prints real values and writes nothing into the repository.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { E2E_TEST_TIMEOUT, type ServerHandle } from '../helpers/server.ts';
import { sharedServer } from '../helpers/shared-server.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PHOTOS = ['bottle.jpg', 'espresso.jpg', 'mug.jpg'];

let server: ServerHandle;
let apiKey: string;
let work: string;
beforeAll(async () => {
  server = sharedServer();
  ({ apiKey } = await server.createAccount('first-hour@example.com', 20));
  // The tour runs "from the Matte folder": here a folder with its examples/, so that out/ lands in the temp folder.
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-tour-'));
  fs.symlinkSync(path.join(ROOT, 'examples'), path.join(work, 'examples'));
});
afterAll(async () => {
  await server?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** The README's ```sh block that `marker` names. */
function readmeBlock(marker: string): string {
  const blocks = [...fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)];
  return blocks.map((m) => m[1]!).find((b) => b.includes(marker))!;
}

describe('the first hour, as the README has it', () => {
  it('ships photos to try, named with their source and licence', () => {
    expect(fs.readdirSync(path.join(ROOT, 'examples', 'photos')).sort()).toEqual(PHOTOS);
    const readme = fs.readFileSync(path.join(ROOT, 'examples', 'README.md'), 'utf8');
    for (const photo of PHOTOS) expect(readme).toMatch(new RegExp(`\`photos/${photo}\`[^\\n]*(CC0|CC BY)`));
  });

  it("the tour's commands, as written: every step answers, the stream ends at the sample's job.paused", async () => {
    const tour = readmeBlock('until_status');
    expect(tour).toContain('examples/photos/');
    expect(tour).not.toContain('--max-time');
    const script = tour.replaceAll('mk_…', apiKey);
    const started = Date.now();
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: work,
      env: { ...process.env, PORT: new URL(server.base).port },
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const took = Date.now() - started;
    expect(stdout).toMatch(/^3$/m); // three photos added
    // The stream printed the sample's events and closed at job.paused, without waiting for a time limit.
    expect(stdout).toMatch(/^event: snapshot$[\s\S]*^event: item\.done$[\s\S]*^event: job\.paused$/m);
    const statuses = stdout.split('\n').filter((l) => /^(queued|running|paused|done)$/.test(l));
    expect(statuses).toContain('paused');
    expect(statuses.at(-1)).toBe('done');
    expect(stdout).not.toMatch(/"status":4\d\d|NOTHING_HELD/);
    const png = fs.readFileSync(path.join(work, 'out', 'mug.png'));
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(fs.readFileSync(path.join(work, 'out', 'batch.zip')).readUInt16BE(0)).toBe(0x504b);
    expect(took).toBeLessThan(240_000);
  });

  it('the quick start prints real values and writes its ZIP outside the repository', async () => {
    const before = fs.readdirSync(ROOT).sort();
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', 'examples/quickstart.ts', ...PHOTOS.map((p) => `examples/photos/${p}`)],
      { cwd: ROOT, env: { ...process.env, MATTE_URL: server.base, MATTE_API_KEY: apiKey }, timeout: 180_000 },
    );
    expect(stderr).toBe('');
    expect(stdout).not.toContain('undefined');
    for (const photo of PHOTOS)
      expect(stdout).toMatch(new RegExp(`^item\\.done: ${photo}, score \\d+(\\.\\d)? of 100$`, 'm'));
    expect(stdout).toMatch(/^job\.done: 3 of 3 done$/m);
    const zip = /^(\S+\.zip) written$/m.exec(stdout)?.[1];
    expect(zip && path.dirname(zip)).toBe(os.tmpdir());
    expect(fs.readFileSync(zip!).readUInt16BE(0)).toBe(0x504b);
    fs.rmSync(zip!);
    expect(stdout).toMatch(/^as expected: 404 NOT_FOUND: /m);
    expect(fs.readdirSync(ROOT).sort()).toEqual(before);
  });
});
