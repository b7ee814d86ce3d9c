// `npm install` on a fresh clone should print nothing a user would have to wonder about: every
// dependency with an install script is decided in package.json's allowScripts (npm >= 11.16 warns
// about the rest, npm 12 skips them), and no installed package declares an engine this Node lacks.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import semver from 'semver';

const ROOT = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

function installed(): { name: string; dir: string; json: Record<string, unknown> }[] {
  const out: { name: string; dir: string; json: Record<string, unknown> }[] = [];
  const walk = (modules: string) => {
    if (!fs.existsSync(modules)) return;
    for (const entry of fs.readdirSync(modules)) {
      if (entry.startsWith('.')) continue;
      const names = entry.startsWith('@')
        ? fs.readdirSync(path.join(modules, entry)).map((n) => `${entry}/${n}`)
        : [entry];
      for (const name of names) {
        const dir = path.join(modules, name);
        const file = path.join(dir, 'package.json');
        if (!fs.existsSync(file)) continue;
        out.push({ name, dir, json: JSON.parse(fs.readFileSync(file, 'utf8')) });
        walk(path.join(dir, 'node_modules'));
      }
    }
  };
  walk(path.join(ROOT, 'node_modules'));
  return out;
}

const satisfies = (version: string, range: string) => semver.satisfies(version, range);

describe('install hygiene', () => {
  const packages = installed();

  it('decides every install script in allowScripts', () => {
    expect(packages.length).toBeGreaterThan(100);
    const scripted = packages.filter(({ json, dir }) => {
      const scripts = (json.scripts ?? {}) as Record<string, string>;
      return (
        ['preinstall', 'install', 'postinstall'].some((s) => scripts[s]) ||
        (fs.existsSync(path.join(dir, 'binding.gyp')) && !scripts.install)
      );
    });
    expect(scripted.map((p) => p.name).sort()).toEqual(expect.arrayContaining(['better-sqlite3', 'onnxruntime-node']));
    for (const { name } of scripted)
      expect(
        Object.keys(pkg.allowScripts),
        `${name} has an install script that allowScripts does not decide`,
      ).toContain(name);
    // onnxruntime-node's script only downloads CUDA binaries; its CPU binaries ship in the package.
    expect(pkg.allowScripts['onnxruntime-node']).toBe(false);
  });

  it('installs nothing whose engines exclude this Node', () => {
    const node = process.version;
    const refusing = packages.filter(({ json }) => {
      const engines = json.engines as Record<string, string> | undefined;
      return typeof engines?.node === 'string' && !satisfies(node, engines.node);
    });
    expect(
      refusing.map((p) => `${p.name}@${p.json.version} wants node ${(p.json.engines as Record<string, string>).node}`),
    ).toEqual([]);
  });
});
