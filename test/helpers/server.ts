// Starts the real server (npm start's entry) on a free port with its own DATA_DIR, as users run it.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { promisify } from 'node:util';
import { modelCacheDir } from '../../src/config.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * How long one end-to-end test may take. These tests start real processes and run the real model on two
 * cores shared with the rest of the suite; under CI's load a test that takes a minute alone has taken
 * three. A test here fails on a wrong answer or a hang, not on a loaded machine.
 */
export const E2E_TEST_TIMEOUT = 300_000;

/** What `npm start` runs (package.json): `bin/matte serve`, which sets glibc's malloc tuning and execs node. */
export function startCommand(): { command: string; args: string[] } {
  const script = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start;
  const [command, ...args] = script.trim().split(/\s+/);
  if (command !== 'bin/matte') throw new Error(`npm start is expected to run bin/matte, not ${command}`);
  return { command: path.join(ROOT, command), args };
}

/** The node flags bin/matte starts node with (the V8 heap's), for in-process tests that should match. */
export function launcherNodeFlags(): string[] {
  const launcher = fs.readFileSync(path.join(ROOT, 'bin/matte'), 'utf8');
  return [...launcher.matchAll(/\s(--[a-z-]+-space-size=\d+)/g)].map((m) => m[1]);
}

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A server the test talks to: its address and folder, bin/matte run beside it, and its end. */
export interface ServerHandle {
  base: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  cli(...args: string[]): Promise<string>;
  /** `bin/matte accounts create … --json`, as an operator runs it: the new account's id and API key. */
  createAccount(
    email: string,
    plan: number | string,
    pack?: number | string,
  ): Promise<{ accountId: string; apiKey: string }>;
  /** Runs bin/matte with optional standard input; resolves with its exit code and output, whatever they are. */
  run(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

/** A server this test started: its process too. */
export interface RunningServer extends ServerHandle {
  proc: ChildProcess;
  /** SIGKILL, as a crash would: nothing is cleaned up, the data stays (start again with `dataDir`). */
  kill(): Promise<void>;
}

/**
 * The optimised model (model-session.mjs), shared by the test and bench servers and the benches' bare sessions,
 * read as the server reads MATTE_MODEL_CACHE_DIR (config.ts modelCacheDir): `off` is no cache ('').
 */
export const MODEL_CACHE_DIR = modelCacheDir({
  MATTE_MODEL_CACHE_DIR: process.env.MATTE_MODEL_CACHE_DIR || path.join(os.tmpdir(), 'matte-model-cache'),
});

export interface StartOptions {
  /** Use this DATA_DIR (kept by stop) instead of a fresh one (deleted by stop): a restart, or processes sharing files. */
  dataDir?: string;
}

export async function startServer(
  extraEnv: Record<string, string> = {},
  opts: StartOptions = {},
): Promise<RunningServer> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'matte-e2e-'));
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    MATTE_ALLOW_PRIVATE_NETWORKS: '1',
    // Every test server reads the model optimised for this machine from one cache, made once.
    MATTE_MODEL_CACHE_DIR: MODEL_CACHE_DIR || 'off',
    ...extraEnv,
  };
  const start = startCommand();
  // bin/matte execs node, so the child's pid is the server's (kill -9 reaches it).
  const proc = spawn(start.command, start.args, { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}`);
    try {
      if ((await fetch(`${base}/v1/openapi.json`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    ...commands(base, dataDir, env),
    proc,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        await new Promise((r) => proc.once('exit', r));
      }
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

/** What reaches a running server from outside: its address, its folder, and bin/matte run beside it. */
export function commands(base: string, dataDir: string, env: NodeJS.ProcessEnv): Omit<ServerHandle, 'stop'> {
  const cli = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(path.join(ROOT, 'bin/matte'), args, { env });
    return stdout;
  };
  return {
    base,
    dataDir,
    env,
    cli,
    async createAccount(email: string, plan: number | string, pack?: number | string) {
      const packArgs = pack === undefined ? [] : ['--pack', String(pack)];
      return JSON.parse(
        await cli('accounts', 'create', '--email', email, '--plan', String(plan), ...packArgs, '--json'),
      ) as { accountId: string; apiKey: string };
    },
    run(args: string[], input?: string) {
      return new Promise((resolve, reject) => {
        const child = spawn(path.join(ROOT, 'bin/matte'), args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
        child.stdin.end(input ?? '');
      });
    },
  };
}

/** The files under `dir` (relative paths), or none when it does not exist: what a process left on its disk. */
export function filesUnder(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    : [];
}
