// npm run bench -- startup: what starting a bin/matte process costs, run as bin/matte runs it (the sources built
// into JavaScript, dist/cli) against the sources through tsx (what it ran before, and still runs where it
// cannot build). Three processes, each arm once a round, interleaved (BENCH_STARTUP_ROUNDS, default 5):
//   help     `matte --help`, to its exit
//   account  `matte accounts create … --json` on a fresh SQLite DATA_DIR, to its exit
//   serve    `matte serve` with MATTE_WORKER=0, until /healthz answers (the API's part of every start)
// The CPU is every thread's, user and system, of the process and its children (Linux: /proc's counts of the
// children waited for, or of the running server); the medians of the rounds.
// Written to bench/results/startup.json and startup.md.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, launcherNodeFlags } from '../test/helpers/server.ts';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5);
const ROOT = path.resolve(import.meta.dirname, '..');
const TICK_MS = 1000 / 100; // USER_HZ

/** user + system CPU ms of /proc/<pid>/stat: the process's own (fields 14, 15) and its waited-for children's (16, 17). */
function statCpu(pid: number | 'self', which: 'own' | 'children'): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const at = which === 'own' ? 11 : 13; // field 14 is the 12th after the command's closing parenthesis
  return (Number(fields[at]) + Number(fields[at + 1])) * TICK_MS;
}

// bin/matte's two ways of starting node, with its V8 heap flag.
const built = [...launcherNodeFlags(), '--enable-source-maps', path.join(ROOT, 'dist/cli/matte.js')];
const tsx = [
  ...launcherNodeFlags(),
  '--import',
  path.join(ROOT, 'node_modules/tsx/dist/esm/index.mjs'),
  '--no-warnings=ExperimentalWarning',
  path.join(ROOT, 'src/cli/matte.ts'),
];
const ARMS = { built, tsx } as const;
type Arm = keyof typeof ARMS;

/** A command to its exit: wall and CPU milliseconds. */
function command(arm: Arm, args: string[], env: NodeJS.ProcessEnv = {}) {
  const cpu0 = statCpu('self', 'children');
  const t0 = performance.now();
  const out = spawnSync(process.execPath, [...ARMS[arm], ...args], { env: { ...process.env, ...env }, cwd: ROOT });
  if (out.status !== 0) throw new Error(`${arm} ${args.join(' ')}: exit ${out.status}: ${out.stderr}`);
  return { wallMs: performance.now() - t0, cpuMs: statCpu('self', 'children') - cpu0 };
}

/** `matte serve`, API only, until /healthz answers: wall and the server's CPU to then. */
async function serve(arm: Arm) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-startup-'));
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...ARMS[arm], 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      MATTE_WORKER: '0',
      LOG_LEVEL: 'warn',
    },
    cwd: ROOT,
    stdio: 'ignore',
  });
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${arm} serve exited with ${proc.exitCode}`);
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) return { wallMs: performance.now() - t0, cpuMs: statCpu(proc.pid!, 'own') };
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-cli.mjs')], { cwd: ROOT, stdio: 'inherit' });
const figures: Record<string, Record<Arm, { wallMs: number; cpuMs: number }[]>> = {};
const add = (name: string, arm: Arm, f: { wallMs: number; cpuMs: number }) =>
  ((figures[name] ??= { built: [], tsx: [] })[arm] as { wallMs: number; cpuMs: number }[]).push(f);
let accounts = 0;
const accountsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-startup-accounts-'));
// A first run of each arm, not counted: the database made, files in the page cache, tsx's own cache written.
for (const arm of Object.keys(ARMS) as Arm[]) {
  command(arm, ['--help']);
  command(arm, ['accounts', 'create', '--email', `warm-${arm}@example.com`, '--plan', '1', '--json'], {
    DATA_DIR: accountsDir,
  });
}
for (let round = 0; round < ROUNDS; round++) {
  for (const arm of Object.keys(ARMS) as Arm[]) {
    add('help', arm, command(arm, ['--help']));
    add(
      'account',
      arm,
      command(arm, ['accounts', 'create', '--email', `a${++accounts}@example.com`, '--plan', '1', '--json'], {
        DATA_DIR: accountsDir,
      }),
    );
    add('serve', arm, await serve(arm));
  }
}
fs.rmSync(accountsDir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows = Object.entries(figures).map(([name, arms]) => {
  const m = (arm: Arm, k: 'wallMs' | 'cpuMs') => Math.round(median(arms[arm].map((f) => f[k])));
  return {
    name,
    built: { wallMs: m('built', 'wallMs'), cpuMs: m('built', 'cpuMs') },
    tsx: { wallMs: m('tsx', 'wallMs'), cpuMs: m('tsx', 'cpuMs') },
  };
});
const md = [
  `# Starting a bin/matte process: built (dist/cli) against the sources through tsx`,
  '',
  `${os.cpus()[0]?.model ?? 'CPU'}, ${os.cpus().length} cores; ${ROUNDS} interleaved rounds, medians; CPU of every thread, user and system.`,
  '',
  '| process | built: wall ms | built: CPU ms | tsx: wall ms | tsx: CPU ms | CPU, built / tsx |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.built.wallMs} | ${r.built.cpuMs} | ${r.tsx.wallMs} | ${r.tsx.cpuMs} | ${(r.built.cpuMs / r.tsx.cpuMs).toFixed(2)} |`,
  ),
  '',
].join('\n');
const out = path.join(ROOT, 'bench/results');
fs.writeFileSync(path.join(out, 'startup.json'), `${JSON.stringify({ rounds: ROUNDS, rows, figures }, null, 2)}\n`);
fs.writeFileSync(path.join(out, 'startup.md'), md);
process.stdout.write(md);
