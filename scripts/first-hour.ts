// The first hour of a newcomer, followed literally: clones the committed main into a temporary folder and runs
// the README's and docs/quickstart.md's shell blocks in order, as written (the only change: `mk_…` becomes
// the key `accounts create` printed), against the server `npm start` runs there. It checks what each block
// should leave behind and prints one line a step; exit 1 on the first step that fails.
//
//   npm run first-hour            (about 5 minutes: a fresh npm install, the model's first optimisation)
//
// Photos: from ../shared/eval-data when it is there, else made here (a dark product on white).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

const ROOT = path.resolve(import.meta.dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-first-hour-'));
const repo = path.join(work, 'matte');
let server: ChildProcess | undefined;

function step(ok: boolean, what: string, detail = ''): void {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? `: ${detail}` : ''}\n`);
  if (!ok) finish(1);
}

function finish(code: number): never {
  server?.kill('SIGKILL');
  if (code === 0) fs.rmSync(work, { recursive: true, force: true });
  else process.stdout.write(`left for a look: ${work}\n`);
  process.exit(code);
}

/** The ```sh blocks of a Markdown file, in order. */
function shellBlocks(file: string): string[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const port = await freePort();
// The caller's own environment (npm's settings, toolchains), less what would point the clone elsewhere; its
// own configuration folder, so `matte login` writes there.
const env: Record<string, string> = {
  ...(Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(npm_|MATTE_|INIT_CWD$|DATA_DIR$|DATABASE_URL$|PORT$|HOST$|PUBLIC_BASE_URL$)/.test(k),
    ),
  ) as Record<string, string>),
  XDG_CONFIG_HOME: path.join(work, 'config'),
  PORT: String(port),
};
fs.mkdirSync(env.XDG_CONFIG_HOME, { recursive: true });

/** Runs `script` with bash in the clone; stdin as given. */
function bash(script: string, input = '') {
  const run = spawnSync('bash', ['-c', script], { cwd: repo, env, input, encoding: 'utf8', timeout: 600_000 });
  return { code: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

async function photos(): Promise<void> {
  const evalDir = path.resolve(ROOT, '..', 'shared', 'eval-data');
  const manifest = path.join(evalDir, 'manifest.json');
  const jpegs: Buffer[] = [];
  if (fs.existsSync(manifest)) {
    const raw = JSON.parse(fs.readFileSync(manifest, 'utf8')) as unknown;
    const entries = (Array.isArray(raw) ? raw : ((raw as { entries?: unknown[] }).entries ?? [])) as {
      image: string;
    }[];
    for (const e of entries.filter((x) => x.image.endsWith('.jpg')).slice(0, 4))
      jpegs.push(fs.readFileSync(path.join(evalDir, e.image)));
  }
  while (jpegs.length < 4) {
    const side = 400 + jpegs.length * 40;
    const square = await sharp({
      create: { width: side / 2, height: side / 2, channels: 3, background: { r: 40, g: 60, b: 120 } },
    })
      .png()
      .toBuffer();
    jpegs.push(
      await sharp({ create: { width: side, height: side, channels: 3, background: '#ffffff' } })
        .composite([{ input: square, gravity: 'centre' }])
        .jpeg()
        .toBuffer(),
    );
  }
  const [a, b, c, d] = jpegs as [Buffer, Buffer, Buffer, Buffer];
  for (const [name, data] of [
    ['shoe.jpg', a],
    ['bag.jpg', b],
    ['hat.jpg', c],
    ['photos/one.jpg', b],
    ['photos/two.jpg', c],
  ] as const) {
    fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
    fs.writeFileSync(path.join(repo, name), data);
  }
  // more.zip: one photo, with the store's own ZIP writer.
  const yazl = await import('yazl');
  const zip = new yazl.ZipFile();
  zip.addBuffer(d, 'four.jpg');
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  fs.writeFileSync(path.join(repo, 'more.zip'), Buffer.concat(chunks));
}

const magic = (file: string, bytes: number[]) =>
  fs.existsSync(path.join(repo, file)) &&
  bytes.every((b, i) => fs.readFileSync(path.join(repo, file)).subarray(0, bytes.length)[i] === b);

// ---- README: Run it ------------------------------------------------------------------------------------
const clone = spawnSync('git', ['clone', '-q', ROOT, repo], { encoding: 'utf8' });
step(clone.status === 0, 'git clone of the committed main', clone.stderr.trim());
const readme = shellBlocks(path.join(repo, 'README.md'));
const quickstart = shellBlocks(path.join(repo, 'docs', 'quickstart.md'));
const [install, start] = readme[0]!.trim().split('\n');
step(install === 'npm install' && start === 'npm start', 'the README starts with npm install, npm start');
const installed = bash(`${install} --no-audit --no-fund`);
step(installed.code === 0, install!, installed.stderr.split('\n').slice(-5).join(' '));

server = spawn('bash', ['-c', `exec ${start}`], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
server.stdout!.on('data', (d) => (log += d));
server.stderr!.on('data', (d) => (log += d));
const serving = await new Promise<string | null>((resolve) => {
  const timer = setTimeout(() => resolve(null), 180_000);
  const check = () => {
    const line = log.split('\n').find((l) => l.includes('Matte is serving'));
    if (line) {
      clearTimeout(timer);
      resolve(line);
    }
  };
  server!.stdout!.on('data', check);
  server!.on('exit', () => resolve(null));
});
step(serving !== null, `${start} prints where it serves`, serving ? '' : log.slice(-400));
const pid = Number(/kill (\d+)/.exec(serving!)?.[1]);
step(serving!.includes(`http://localhost:${port}/studio/`) && pid > 0, 'the line names the studio and the pid');

const accounts = bash(readme[1]!);
const apiKey = /"apiKey":"(mk_[^"]+)"/.exec(accounts.stdout)?.[1];
step(accounts.code === 0 && apiKey !== undefined, 'bin/matte accounts create (both lines)', accounts.stderr);
const withKey = (block: string) => block.replaceAll('mk_…', apiKey!);

// ---- README: the tour ------------------------------------------------------------------------------------
await photos();
const tour = bash(withKey(readme[3]!));
const statuses = tour.stdout.split('\n').filter((l) => /^(draft|queued|running|paused|done)$/.test(l));
step(magic('out/mug.png', [0x89, 0x50, 0x4e, 0x47]), 'the tour: one photo in one call gives a PNG');
step(tour.stdout.includes('\n3\n') || tour.stdout.startsWith('3\n'), 'the tour: three photos added', tour.stdout);
step(
  statuses.includes('paused') && statuses.at(-1) === 'done',
  'the tour: sample, paused, continue, done',
  statuses.join(' '),
);
step(magic('out/batch.zip', [0x50, 0x4b]), 'the tour: the ZIP downloaded');
step(
  /^event: job\.paused$/m.test(tour.stdout),
  'the tour: the event stream ends at job.paused',
  tour.stdout.slice(0, 300),
);
step(!/NOTHING_HELD|"status":4\d\d/.test(tour.stdout), 'the tour: no refusals', tour.stdout.slice(0, 300));

// ---- README: the command ---------------------------------------------------------------------------------
const command = bash(readme[4]!, `${apiKey}\n`);
step(
  command.code === 0,
  'bin/matte login (key on standard input) and remove examples/photos',
  command.stderr.slice(-300),
);
step(fs.readdirSync(path.join(repo, 'out', 'cutouts')).length === 3, 'bin/matte remove wrote three cut-outs');

// ---- docs/quickstart.md ----------------------------------------------------------------------------------
fs.rmSync(path.join(repo, 'cutouts'), { recursive: true, force: true });
const quick = bash(quickstart[0]!.replace(/^# or, from a script:.*$/m, ''), `${apiKey}\n`);
step(quick.code === 0, 'quickstart: login, remove (twice)', quick.stderr.slice(-300));
const ts = bash(withKey(quickstart[1]!));
const written = /^(\S+\.zip) written$/m.exec(ts.stdout)?.[1];
step(
  ts.code === 0 &&
    written !== undefined &&
    !written.startsWith(repo) &&
    fs.readFileSync(written).readUInt16BE(0) === 0x504b,
  'quickstart: the TypeScript example, as the docs run it, writes its ZIP outside the repository',
  `${ts.stdout.slice(-400)} ${ts.stderr.slice(-400)}`,
);
step(!ts.stdout.includes('undefined') && /score \d/.test(ts.stdout), 'quickstart: prints real values', ts.stdout);
step(ts.stdout.includes('404 NOT_FOUND'), 'quickstart: the example shows a refusal as MatteApiError', ts.stdout);
const curl = bash(withKey(quickstart[2]!));
step(curl.stdout.includes('2\n') && magic('batch.zip', [0x50, 0x4b]), 'quickstart: curl', curl.stdout.slice(0, 300));
const python = fs.readFileSync(path.join(repo, 'docs', 'quickstart.md'), 'utf8').match(/```python\n([\s\S]*?)```/)?.[1];
if (bash('python3 -c "import requests"').code === 0) {
  fs.rmSync(path.join(repo, 'batch.zip'));
  const py = bash(`python3 - <<'PY'\n${withKey(python!)}PY`);
  step(py.code === 0 && magic('batch.zip', [0x50, 0x4b]), 'quickstart: Python', py.stderr.slice(-300));
} else process.stdout.write('skip quickstart: Python (python3 with requests is not installed here)\n');

// ---- stopping, as the README says ------------------------------------------------------------------------
process.kill(pid, 'SIGTERM');
const stopped = await new Promise<boolean>((resolve) => {
  const timer = setTimeout(() => resolve(false), 30_000);
  server!.on('exit', () => {
    clearTimeout(timer);
    resolve(true);
  });
});
step(stopped, `kill ${pid} (the pid the start line printed) stops the server`);
server = undefined;
process.stdout.write('the README and the quickstart work as written\n');
finish(0);
