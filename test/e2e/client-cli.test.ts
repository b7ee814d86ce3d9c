// End to end: `matte login`, `matte remove`, `matte batches` and `matte account` against the real server
// with the real model, on photos from ../shared/eval-data, as a seller runs them.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import zlib from 'node:zlib';
import { E2E_TEST_TIMEOUT, type ServerHandle } from '../helpers/server.ts';
import { sharedServer } from '../helpers/shared-server.ts';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../../tools/shared-data.ts';
import { makeZip } from '../helpers/images.ts';
import { unzip } from '../helpers/unzip.ts';
import { retryingFetch } from '@matte/client';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

const ROOT = path.resolve(import.meta.dirname, '../..');
let server: ServerHandle;
let apiKey: string;
let work: string;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** bin/matte as a user runs it: no server env, only MATTE_URL/MATTE_API_KEY or the login file. */
function matte(
  args: string[],
  opts: { env?: Record<string, string>; input?: string; onStderr?: (text: string, kill: () => void) => void } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(ROOT, 'bin/matte'), args, {
      env: { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      opts.onStderr?.(stderr, () => child.kill('SIGINT'));
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

const asUser = () => ({ MATTE_URL: server.base, MATTE_API_KEY: apiKey });
const photos = () => evalEntries().filter((e) => e.image.endsWith('.jpg'));

/** The test's own reads keep to the key's 60 requests a minute as a client should: a 429 waits out its Retry-After. */
const send = retryingFetch((request) => fetch(request));
const get = (p: string) => send(new Request(`${server.base}${p}`, { headers: { authorization: `Bearer ${apiKey}` } }));

async function credits(): Promise<number> {
  const account = await (await get('/v1/account')).json();
  return account.credits.plan + account.credits.pack;
}

beforeAll(async () => {
  if (!HAVE_EVAL_DATA) return;
  server = sharedServer();
  apiKey = (await server.createAccount('cli@example.com', 60)).apiKey;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-cli-'));
});
afterAll(async () => {
  await server?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!HAVE_EVAL_DATA)('matte, the client command', () => {
  it('logs in: the key is checked, stored 0600 in the config directory, and used by later commands', async () => {
    const bad = await matte(['login', '--url', server.base, '--api-key-stdin'], { input: 'mk_wrong\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/INVALID_KEY/);
    const ok = await matte(['login', '--url', `${server.base}/v1/`, '--api-key-stdin', '--json'], {
      input: `${apiKey}\n`,
    });
    expect(ok.code).toBe(0);
    const file = path.join(work, 'config', 'matte', 'config.json');
    expect(JSON.parse(ok.stdout).file).toBe(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ url: server.base, apiKey });
    const account = await matte(['account', '--json']);
    expect(account.code).toBe(0);
    expect(JSON.parse(account.stdout).limits.photosPerBatch).toBe(200);
    expect(JSON.parse(account.stdout).heavyModel).toBe('none');
    expect((await matte(['account'])).stdout).toContain(
      'tiers: light 1 credit, heavy 2 credits (the same model as light: this server runs no heavy model of its own)',
    );
    // MATTE_URL overrides the stored server: a closed port is a network failure, exit 1.
    const down = await matte(['account'], { env: { MATTE_URL: 'http://127.0.0.1:9' } });
    expect(down.code).toBe(1);
    // A line per retry of the safe GET, then one line that says what failed.
    expect(down.stderr.trim().split('\n').at(-1)).toMatch(/^matte: .*is the server running/);
  });

  it('on a terminal, login asks for the key without echoing it (as the README shows it: matte login --url URL)', async () => {
    // script(1) gives bin/matte a terminal; the key is typed only once the prompt is on the screen.
    const home = fs.mkdtempSync(path.join(work, 'tty-'));
    const child = spawn(
      'script',
      ['-qfec', `${path.join(ROOT, 'bin/matte')} login --url ${server.base}`, '/dev/null'],
      {
        env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), TERM: 'dumb' },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let screen = '';
    const closed = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => {
        screen += d;
        if (screen.includes('API key')) resolve();
      }),
    );
    child.stdin.write(`${apiKey}\r`);
    expect(await closed).toBe(0);
    expect(screen).toContain(`logged in to ${server.base} with key ${apiKey.slice(0, 11)}`);
    expect(screen).not.toContain(apiKey);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'config', 'matte', 'config.json'), 'utf8')).apiKey).toBe(apiKey);
  });

  it('removes backgrounds from a folder of 7 (one broken photo, a broken ZIP, a text file, one ZIP): 4 results, each file left out reported with its reason, exit 1; no heavy re-run without a heavy model, nothing new on a second run', async () => {
    const input = path.join(work, 'shop');
    fs.mkdirSync(path.join(input, 'shoes'), { recursive: true });
    const list = photos();
    for (const [i, e] of list.slice(0, 3).entries())
      fs.writeFileSync(path.join(input, i < 2 ? 'shoes' : '', path.basename(e.image)), evalFile(e.image));
    fs.writeFileSync(path.join(input, 'broken.jpg'), evalFile(list[3].image).subarray(0, 3000));
    fs.writeFileSync(path.join(input, 'more.zip'), makeZip([{ name: 'zipped.jpg', data: evalFile(list[4].image) }]));
    // Files the command cannot send: each is left out with its reason, and the rest is cut out.
    fs.writeFileSync(
      path.join(input, 'damaged.zip'),
      makeZip([{ name: 'x.jpg', data: Buffer.alloc(9) }]).subarray(0, 20),
    );
    fs.writeFileSync(path.join(input, 'notes.txt'), 'sizes: S M L');
    const before = await credits();
    const out = path.join(work, 'out');

    // --heavy: this server runs no heavy model of its own, so the command says so and re-runs nothing.
    const first = await matte(
      ['remove', input, '-o', out, '--background', 'white', '--format', 'jpeg', '--heavy', '--json'],
      { env: asUser() },
    );
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain('no heavy re-run: this server runs no heavy model of its own');
    const summary = JSON.parse(first.stdout);
    expect(summary.written).toHaveLength(4);
    expect(summary.unreadable).toEqual([
      { origin: path.join(input, 'damaged.zip'), reason: 'The file is not a readable ZIP archive.' },
      { origin: path.join(input, 'notes.txt'), reason: expect.stringMatching(/^not a photo Matte takes/) },
    ]);
    expect(summary.rejected).toEqual([
      { name: path.join(input, 'broken.jpg'), reason: expect.stringMatching(/not a readable/) },
    ]);
    expect(summary.failed).toEqual([]);
    const files = fs
      .readdirSync(out, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.jpg'))
      .sort();
    expect(files).toHaveLength(4);
    expect(files).toContain(path.join('more', 'zipped.jpg'));
    expect(files.filter((f) => f.startsWith(`shoes${path.sep}`))).toHaveLength(2);
    for (const f of files) expect((await sharp(path.join(out, f)).metadata()).format).toBe('jpeg');
    // What was charged is what the ledger says: one credit per clean result, none for flagged ones.
    expect(before - (await credits())).toBe(4 - summary.flagged.length);
    // A progress line per photo when stderr is not a terminal.
    expect(first.stderr).toMatch(/4\/4 /);

    const mtimes = files.map((f) => fs.statSync(path.join(out, f)).mtimeMs);
    // The second run, as a person reads it: one line per file left out, with its reason, under the summary.
    const second = await matte(['remove', input, '-o', out, '--background', 'white', '--format', 'jpeg'], {
      env: asUser(),
    });
    expect(second.code).toBe(1);
    expect(second.stdout.trim().split('\n')).toEqual([
      `0 written to ${out}, 4 already there; 3 not cut out (below)`,
      `skipped: ${path.join(input, 'damaged.zip')}: The file is not a readable ZIP archive.`,
      `skipped: ${path.join(input, 'notes.txt')}: not a photo Matte takes (JPEG, PNG or WebP, or a ZIP of them)`,
      expect.stringMatching(new RegExp(`^refused: ${path.join(input, 'broken.jpg')}: .*not a readable`)),
    ]);
    expect(files.map((f) => fs.statSync(path.join(out, f)).mtimeMs)).toEqual(mtimes);

    // The batch is listed, shown and downloadable by the client verbs too.
    const [id] = summary.batches;
    const shown = await matte(['batches', 'show', id, '--json'], { env: asUser() });
    expect(JSON.parse(shown.stdout).counts).toMatchObject({ total: 4, done: 4 });
    expect(JSON.parse(shown.stdout).items.map((i: { tier: string }) => i.tier)).toEqual(Array(4).fill('light'));
    const listed = await matte(['batches', 'list'], { env: asUser() });
    expect(listed.stdout).toContain(id);
    const zipFile = path.join(work, 'batch.zip');
    const downloaded = await matte(['batches', 'download', id, '-o', zipFile], { env: asUser() });
    expect(downloaded.code, downloaded.stderr).toBe(0);
    expect((await unzip(fs.readFileSync(zipFile))).size).toBe(4);
  });

  it('skips a damaged entry of a ZIP whose directory is intact with one line, cuts out the rest, exits 1 and leaves no draft', async () => {
    const input = path.join(work, 'damaged-entry');
    fs.mkdirSync(input);
    const list = photos();
    // The bottle's compressed bytes are garbled mid-stream: the directory reads, the entry does not inflate.
    const good = zlib.deflateRawSync(evalFile(list[6].image));
    const bad = Buffer.from(zlib.deflateRawSync(evalFile(list[7].image)));
    for (let i = 200; i < 260; i++) bad[i] ^= 0x5a;
    fs.writeFileSync(
      path.join(input, 'a.zip'),
      makeZip([
        { name: 'good.jpg', data: evalFile(list[6].image), compressed: good },
        { name: 'bottle.jpg', data: evalFile(list[7].image), compressed: bad },
      ]),
    );
    const out = path.join(work, 'out-damaged');
    const drafts = async () =>
      ((await (await get('/v1/jobs?limit=100')).json()).jobs as { status: string }[]).filter(
        (j) => j.status === 'draft',
      ).length;
    const draftsBefore = await drafts();
    const ran = await matte(['remove', input, '-o', out], { env: asUser() });
    expect(ran.code, ran.stderr).toBe(1);
    const lines = ran.stdout.trim().split('\n');
    expect(lines[0]).toBe(`1 written to ${out}; 1 not cut out (below)`);
    expect(lines.filter((l) => l.startsWith('skipped: '))).toEqual([
      expect.stringMatching(
        new RegExp(`^skipped: ${path.join(input, 'a.zip')}/bottle\\.jpg: the ZIP entry is damaged \\(.+\\)$`),
      ),
    ]);
    expect(fs.readdirSync(path.join(out, 'a'))).toEqual(['good.png']);
    expect(ran.stderr).not.toMatch(/^matte: /m);
    // Only the damaged entry left, on its own: nothing to send, so no batch is made at all.
    fs.writeFileSync(
      path.join(input, 'a.zip'),
      makeZip([{ name: 'bottle.jpg', data: evalFile(list[7].image), compressed: bad }]),
    );
    const alone = await matte(['remove', input, '-o', path.join(work, 'out-damaged-2')], { env: asUser() });
    expect(alone.code).toBe(1);
    expect(alone.stdout).toMatch(/^0 written to .*; 1 not cut out/);
    expect(await drafts()).toBe(draftsBefore);
  });

  it('Ctrl-C mid-batch stops the batch, releases the credits of photos not yet run, and the same command again continues that batch: none left paused or holding photos', async () => {
    const input = path.join(work, 'big');
    fs.mkdirSync(input);
    for (const e of photos().slice(10, 14))
      fs.writeFileSync(path.join(input, path.basename(e.image)), evalFile(e.image));
    const out = path.join(work, 'big-out');
    const before = await credits();
    let sent = false;
    const stopped = await matte(['remove', input, '-o', out, '--json'], {
      env: asUser(),
      onStderr: (text, kill) => {
        if (!sent && /1\/4 /.test(text)) {
          sent = true;
          kill();
        }
      },
    });
    expect(stopped.code).toBe(130);
    const summary = JSON.parse(stopped.stdout);
    expect(summary.interrupted).toBe(true);
    expect(summary.held).toBeGreaterThan(0);
    const batch = await (await get(`/v1/jobs/${summary.batches[0]}`)).json();
    expect(batch.status).toBe('paused');
    const done = batch.items.filter((i: any) => i.status === 'done');
    expect(done.length + batch.counts.held).toBe(4);
    // Only the photos that ran are charged (flagged ones not at all); the held ones cost nothing.
    const charged = done.filter((i: any) => !i.refunded).length;
    expect(before - (await credits())).toBe(charged);
    expect(summary.written).toHaveLength(done.length);

    const resumed = await matte(['remove', input, '-o', out, '--json'], { env: asUser() });
    expect(resumed.code, resumed.stderr).toBe(0);
    const again = JSON.parse(resumed.stdout);
    expect(again).toMatchObject({ skipped: done.length, resumed: [summary.batches[0]], batches: [summary.batches[0]] });
    expect(again.written).toHaveLength(4 - done.length);
    expect(fs.readdirSync(out)).toHaveLength(4);
    // The first batch ran to its end; no batch of this account is left paused, holding photos or credits.
    const first = await (await get(`/v1/jobs/${summary.batches[0]}`)).json();
    expect(first.status).toBe('done');
    expect(first.counts).toMatchObject({ held: 0, done: 4 });
    const paused = await (await get('/v1/jobs?status=paused')).json();
    expect(paused.jobs).toEqual([]);
    // Each photo charged once (4 less the flagged ones, not charged), and no credit left reserved: the balance
    // the account shows is what is left after reservations.
    const flagged = first.items.filter((i: any) => i.refunded).length;
    expect(before - (await credits())).toBe(4 - flagged);
  });

  it('refuses bad input with one line and exit 2, before anything is sent', async () => {
    const input = path.join(work, 'shop');
    const cases: string[][] = [
      ['remove', input],
      ['remove', path.join(work, 'nothing-here'), '-o', path.join(work, 'x')],
      ['remove', input, '-o', path.join(work, 'x'), '--background', 'pink'],
      ['remove', input, '-o', path.join(work, 'x'), '--format', 'gif'],
      ['remove', input, '-o', path.join(work, 'x'), '--sample', '0'],
      ['remove', input, '-o', path.join(work, 'x'), '--pattern', '../{name}'],
      ['remove', input, '-o', path.join(work, 'x'), '--frobnicate'],
      ['batches', 'show'],
      ['batches', 'show', 'job_nope'],
    ];
    const before = await credits();
    const drafts = (await (await get('/v1/jobs?status=draft')).json()).jobs.length;
    for (const args of cases) {
      const ran = await matte(args, { env: asUser() });
      expect(ran.code, args.join(' ')).toBe(2);
      expect(ran.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(ran.stderr).toMatch(/^matte: /);
    }
    // A preset the server does not have: the closest, and every one it has.
    const one = path.join(work, 'one-photo');
    fs.mkdirSync(one, { recursive: true });
    fs.writeFileSync(path.join(one, 'a.jpg'), evalFile(photos()[0].image));
    const preset = await matte(['remove', one, '-o', path.join(work, 'x'), '--preset', 'bogus'], { env: asUser() });
    expect(preset.code).toBe(2);
    expect(preset.stderr).toMatch(/^matte: unknown preset "bogus" \(presets: amazon-main, ebay, .*original, .*\)\n$/);
    const near = await matte(['remove', one, '-o', path.join(work, 'x'), '--preset', 'amazon-mian'], {
      env: asUser(),
    });
    expect(near.stderr).toContain('did you mean "amazon-main"?');
    expect(fs.existsSync(path.join(work, 'x'))).toBe(false);
    expect(await credits()).toBe(before);
    expect((await (await get('/v1/jobs?status=draft')).json()).jobs).toHaveLength(drafts);
  });

  it('lists batches by name, leaving out one-photo calls and empty drafts unless --all', async () => {
    // A key of its own: the other tests' runs have spent much of the shared key's minute.
    const { apiKey } = await server.createAccount('lister@example.com', 10);
    const asUser = () => ({ MATTE_URL: server.base, MATTE_API_KEY: apiKey });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(evalFile(photos()[0].image))]), 'one.jpg');
    const single = await send(
      new Request(`${server.base}/v1/images`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${apiKey}` },
      }),
    );
    expect(single.status).toBe(200);
    const onePhotoJob = single.headers.get('x-matte-job-id')!;
    const createBatch = async (name: string) =>
      (
        await send(
          new Request(`${server.base}/v1/jobs`, {
            method: 'POST',
            body: JSON.stringify({ name }),
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          }),
        )
      ).json();
    const draft = await createBatch('Empty for now');
    expect(draft.id).toMatch(/^job_/);
    const named = await createBatch('Kitchen');
    const photo = new FormData();
    photo.append('files', new Blob([new Uint8Array(evalFile(photos()[1].image))]), 'mug.jpg');
    await send(
      new Request(`${server.base}/v1/jobs/${named.id}/items`, {
        method: 'POST',
        body: photo,
        headers: { authorization: `Bearer ${apiKey}` },
      }),
    );
    const listed = await matte(['batches', 'list'], { env: asUser() });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(onePhotoJob);
    expect(listed.stdout).not.toContain(draft.id);
    expect(listed.stdout).toMatch(
      /\(not shown: \d+ one-photo call\(s\) and \d+ empty draft\(s\); --all shows them\)\n$/,
    );
    // A seller's batch is listed with its name.
    expect(listed.stdout).toMatch(new RegExp(`${named.id}  draft +0/1 done  .*  Kitchen\\n`));
    const all = await matte(['batches', 'list', '--all'], { env: asUser() });
    expect(all.stdout).toMatch(new RegExp(`${onePhotoJob} .*\\(one photo\\)`));
    expect(all.stdout).toMatch(new RegExp(`${draft.id} .*Empty for now`));
  });
});
