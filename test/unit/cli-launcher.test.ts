// bin/matte runs the sources built into JavaScript (scripts/build-cli.mjs), and never stale code: it builds when
// there is no build or a source is newer than it, runs the build as it is otherwise, and runs the sources
// through tsx where it cannot build. Each case builds into a folder of its own (MATTE_CLI_DIST, inside the
// project, where a build finds its dependencies), so the project's own build, which the other tests' servers run,
// is left alone.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { helpFor, SECTIONS } from '../../src/cli/help.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MATTE = path.join(ROOT, 'bin/matte');
fs.mkdirSync(path.join(ROOT, 'dist'), { recursive: true });
const tmp = fs.mkdtempSync(path.join(ROOT, 'dist', 'launcher-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const help = (dist: string) =>
  promisify(execFile)(MATTE, ['--help'], { env: { PATH: process.env.PATH, MATTE_CLI_DIST: dist } });

describe('bin/matte and its build', () => {
  it('builds when there is none, runs the build while it is newer than every source, and builds again when not', async () => {
    const dist = path.join(tmp, 'cli');
    const entry = path.join(dist, 'matte.js');
    const first = await help(dist);
    expect(first.stdout).toBe(`${helpFor(SECTIONS, [])}\n`);
    expect(first.stderr).toBe('');
    expect(fs.existsSync(entry)).toBe(true);
    expect(fs.existsSync(`${entry}.map`)).toBe(true);

    // Not built again: the build's time is when it began, which no source is newer than.
    const built = fs.statSync(entry).mtimeMs;
    await help(dist);
    expect(fs.statSync(entry).mtimeMs).toBe(built);

    // A build from before the sources were last written is stale: it is built again, and the answer is the same.
    fs.utimesSync(entry, new Date(0), new Date(0));
    const again = await help(dist);
    expect(again.stdout).toBe(first.stdout);
    expect(fs.statSync(entry).mtimeMs).toBeGreaterThan(0);
    // The builds' staging folders are gone.
    expect(fs.readdirSync(tmp)).toEqual(['cli']);
  });

  it('runs the sources through tsx where it cannot build, with the same answers', async () => {
    const dist = path.join(tmp, 'not-a-folder', 'cli');
    fs.writeFileSync(path.join(tmp, 'not-a-folder'), 'a file where the build would go');
    const { stdout, stderr } = await help(dist);
    expect(stdout).toBe(`${helpFor(SECTIONS, [])}\n`);
    expect(stderr).toBe('');
  });
});
