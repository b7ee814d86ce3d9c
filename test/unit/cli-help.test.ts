// bin/matte's help, as a user meets it: `--help` and `-h` on the command itself, on every noun and on every
// verb print usage on standard output and exit 0; mistakes still exit 2 with one line. No server is needed.
// Every help answer is asked of main() in this process, and a few of the real command too, which must give the
// same; each mistake is asked of the real command (its verbs' modules load their own libraries).
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { SECTIONS } from '../../src/cli/help.ts';
import { main } from '../../src/cli/main.ts';

const MATTE = path.resolve(import.meta.dirname, '../../bin/matte');

function matte(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(MATTE, args, { env: { PATH: process.env.PATH, HOME: '/nonexistent' } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs `jobs` at most `n` at a time (each is a Node process). */
async function limited<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

describe('bin/matte --help', () => {
  const commands = SECTIONS.flatMap((s) => s.commands.map((c) => c.name));
  const nouns = [...new Set(commands.map((c) => c.split(' ')[0]!))];

  it('answers --help and -h on the command, every noun and every verb: its usage on stdout, exit 0', async () => {
    const asks = [
      ['--help'],
      ['-h'],
      ['help'],
      ...nouns.map((n) => [n, '--help']),
      ...commands.map((c) => [...c.split(' '), '-h']),
      ['remove', 'photos/', '-o', 'out', '--help'],
    ];
    const answers = await Promise.all(
      asks.map(async (args) => {
        let stdout = '';
        const code = await main(args, { write: (text: string) => (stdout += text) });
        return { code, stdout, stderr: '' };
      }),
    );
    // The real command answers as main() does, on the command, a noun, a verb, and help after other words.
    const real = [['--help'], ['accounts', '--help'], ['batches', 'list', '-h'], asks.at(-1)!];
    const spawned = await limited(
      real.map((args) => () => matte(args)),
      4,
    );
    for (const [i, args] of real.entries())
      expect(spawned[i], args.join(' ')).toEqual(answers[asks.findIndex((a) => a.join(' ') === args.join(' '))]);
    for (const [i, args] of asks.entries()) {
      const { code, stdout, stderr } = answers[i]!;
      const what = `matte ${args.join(' ')}`;
      expect(code, `${what}: ${stderr}`).toBe(0);
      expect(stderr, what).toBe('');
      expect(stdout, what).toMatch(/^usage:/);
      const named = args.filter((a) => !a.startsWith('-') && a !== 'help').slice(0, 2);
      if (named.length) expect(stdout, what).toContain(`matte ${named[0]}`);
      if (named.length === 2 && commands.includes(named.join(' ')))
        expect(
          stdout.split('\n').filter((l) => l.startsWith('  matte ')),
          what,
        ).toHaveLength(1);
    }
    // The whole list names every command.
    for (const c of commands) expect(answers[0]!.stdout).toContain(`matte ${c}`);
  });

  it('names the presets and the --pattern tokens on remove, and PORT and the other variables on serve', async () => {
    let remove = '';
    await main(['remove', '--help'], { write: (t: string) => (remove += t) });
    expect(remove).toMatch(/--preset ID: .*one of: amazon-main, .*, original, square-white-2000, transparent-png/);
    expect(remove).toMatch(/--pattern P: .*\{name\}.*\{preset\}/);
    let serve = '';
    await main(['serve', '--help'], { write: (t: string) => (serve += t) });
    expect(serve).toMatch(/PORT \(default 8080\)/);
    expect(serve).toContain('DATA_DIR');
    expect(serve).toContain('docs/configuration.md');
  });

  it('suggests the command meant for a mistyped one; exit 2, one line', async () => {
    const typo = await matte(['remvoe', 'photos', '-o', 'out']);
    expect(typo).toEqual({
      code: 2,
      stdout: '',
      stderr: 'matte: unknown command "remvoe"; did you mean "remove"? (matte --help lists them)\n',
    });
    const batches = await matte(['batchse', 'list']);
    expect(batches.stderr).toContain('did you mean "batches"?');
  });

  it('still refuses mistakes with one line and exit 2', async () => {
    for (const args of [
      ['frobnicate'],
      ['accounts'],
      ['accounts', 'frob'],
      ['remove', '--bogus'],
      ['nothing', '--help'],
    ]) {
      const { code, stdout, stderr } = await matte(args);
      expect(code, args.join(' ')).toBe(2);
      expect(stdout).toBe('');
      expect(stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(stderr).toMatch(/^matte: /);
    }
  });

  it('names the closest known option for a mistyped one, on every kind of command; exit 2, one line', async () => {
    const cases: [string[], string][] = [
      [['remove', '--outptu', 'x'], 'unknown option --outptu; did you mean --out?'],
      [['batches', 'list', '--limt', '5'], 'unknown option --limt; did you mean --limit?'],
      [['accounts', 'create', '--emial', 'a@b.c'], 'unknown option --emial; did you mean --email?'],
      [['inference-server', '--prot', '9000'], 'unknown option --prot; did you mean --port?'],
      [['account', '--jsno'], 'unknown option --jsno; did you mean --json?'],
      [['remove', 'a', '-o'], '--out needs a value'],
    ];
    const answers = await limited(
      cases.map(
        ([args]) =>
          () =>
            matte(args),
      ),
      4,
    );
    for (const [i, [args, line]] of cases.entries()) {
      expect(answers[i], args.join(' ')).toEqual({ code: 2, stdout: '', stderr: `matte: ${line}\n` });
    }
    // Nothing close: the known options are listed instead of a guess.
    const far = await matte(['remove', '--zzzzzz']);
    expect(far.code).toBe(2);
    expect(far.stderr).toMatch(/^matte: unknown option --zzzzzz \(known: --url, .*--out, .*--json\)\n$/);
  });

  it('loads, before a verb is chosen, none of the libraries a verb loads itself (help answers in a third of a second)', () => {
    // The modules bin/matte loads at once: static imports of values from src/cli/matte.ts on (type-only imports
    // and import() load nothing up front).
    const eager = new Set<string>();
    const packages = new Set<string>();
    const walk = (file: string) => {
      if (eager.has(file)) return;
      eager.add(file);
      const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
      for (const node of source.statements) {
        if (!ts.isImportDeclaration(node) || node.importClause?.isTypeOnly) continue;
        const named = node.importClause?.namedBindings;
        if (node.importClause && !node.importClause.name && named && ts.isNamedImports(named))
          if (named.elements.every((e) => e.isTypeOnly)) continue;
        const spec = (node.moduleSpecifier as ts.StringLiteral).text;
        if (spec.startsWith('.')) walk(path.resolve(path.dirname(file), spec));
        else packages.add(spec);
      }
    };
    walk(path.resolve(import.meta.dirname, '../../src/cli/matte.ts'));
    expect(eager.size).toBeGreaterThan(2);
    for (const heavy of ['@sinclair/typebox', 'kysely', 'fastify', 'sharp', 'onnxruntime-node', 'pg', 'better-sqlite3'])
      expect(
        [...packages].filter((p) => p.startsWith(heavy)),
        heavy,
      ).toEqual([]);
  });
});

describe('what matte remove says when it is done', () => {
  it('names every photo not cut out as sent, one line each, after a line of totals', async () => {
    const { removeSummaryLines } = await import('../../src/cli/client/commands.ts');
    const lines = removeSummaryLines(
      {
        written: ['out/mug.png', 'out/lamp.png'],
        skipped: 1,
        unreadable: [{ origin: 'in/notes.txt', reason: 'not a photo' }],
        resumed: [],
        rejected: [],
        failed: [],
        flagged: [{ name: 'lamp.jpg', reason: 'The photo is too dark', file: 'out/lamp.png' }],
        scaled: [{ name: 'banner.jpg', from: '6000×300', to: '4096×205' }],
        held: 0,
        batches: ['bat_1'],
        interrupted: false,
      },
      'out',
    );
    expect(lines).toEqual([
      '2 written to out, 1 already there; 1 not cut out (below)',
      'skipped: in/notes.txt: not a photo',
      'flagged by the check (not charged): lamp.jpg: The photo is too dark',
      'scaled down: banner.jpg: cut out at 4096×205, the largest side Matte works at being 4096 px, from 6000×300',
    ]);
  });
});
