// The occasional jobs behind npm run bench / calibrate / model / generate (scripts/jobs.ts): every job's
// file exists, a family with no name lists its jobs, an unknown name is refused with the list and exit 2.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const jobs = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'scripts/jobs.ts', ...args], { cwd: root, encoding: 'utf8' });

describe('npm run bench, calibrate, model and generate', () => {
  it('name files that exist, and the package has few scripts', () => {
    const text = fs.readFileSync(path.join(root, 'scripts/jobs.ts'), 'utf8');
    const files = [...text.matchAll(/file: '([^']+)'/g)].map((m) => m[1]);
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) expect(fs.existsSync(path.join(root, file)), file).toBe(true);
    const scripts = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts;
    expect(Object.keys(scripts).length).toBeLessThanOrEqual(15);
    for (const family of ['bench', 'calibrate', 'model', 'generate'])
      expect(scripts[family]).toBe(`node --import tsx scripts/jobs.ts ${family}`);
  });

  it('lists a family given no name, and refuses a name it does not have', () => {
    const listed = jobs('bench');
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(/^npm run bench -- <name> \[args\]/);
    expect(listed.stdout).toMatch(/^ {2}stage-cpu +a 2000x2000/m);
    const wrong = jobs('calibrate', 'nope');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(/no job named "nope"/);
    expect(wrong.stderr).toMatch(/^ {2}figures /m);
    expect(jobs('nothing').status).toBe(2);
  });
});
