// End to end on the account side: two real server processes on one PostgreSQL database (one with the
// photo worker and the real model, one API-only), sharing files, rate limits and sessions; the admin
// CLI beside them. Skips, saying why, where no PostgreSQL answers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type RunningServer, E2E_TEST_TIMEOUT } from '../helpers/server.ts';
import { PG_AVAILABLE, createTestDatabase, type TestDatabase } from '../helpers/databases.ts';
import { productPhoto } from '../helpers/images.ts';

vi.setConfig({ testTimeout: E2E_TEST_TIMEOUT });

let db: TestDatabase;
let a: RunningServer; // API + worker with the real model
let b: RunningServer; // API only
let sharedDir: string;
const PASSWORD = 'e2e password 1234';
let seq = 0;

beforeAll(async () => {
  if (!PG_AVAILABLE) return;
  db = await createTestDatabase('postgres');
  sharedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-e2e-shared-'));
  // A small photo budget, so that sharing it across processes is cheap to show; requests keep the spec's 60.
  const env = { DATABASE_URL: db.databaseUrl, DATA_DIR: sharedDir, MATTE_PHOTOS_PER_HOUR: '5' };
  [a, b] = await Promise.all([startServer(env), startServer({ ...env, MATTE_WORKER: '0' })]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
  if (sharedDir) fs.rmSync(sharedDir, { recursive: true, force: true });
});

async function newAccount(plan: number, pack = 0, password?: string) {
  const email = `acct${++seq}-${Date.now()}@example.com`;
  const args = [
    'accounts',
    'create',
    '--email',
    email,
    '--plan',
    String(plan),
    '--pack',
    String(pack),
    '--json',
    ...(password ? ['--password-stdin'] : []),
  ];
  const out = await a.run(args, password);
  expect(out.code, out.stderr).toBe(0);
  const created = JSON.parse(out.stdout) as { accountId: string; apiKey: string };
  return { ...created, email, auth: { authorization: `Bearer ${created.apiKey}` } };
}

function call(
  server: RunningServer,
  auth: Record<string, string>,
  url: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
) {
  const headers = {
    ...auth,
    ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
    ...init.headers,
  };
  return fetch(`${server.base}${url}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
}

async function draftWith(server: RunningServer, auth: Record<string, string>, photos: number): Promise<string> {
  const job = await (await call(server, auth, '/v1/jobs', { method: 'POST', json: {} })).json();
  const form = new FormData();
  const data = await productPhoto(320, 240);
  for (let i = 0; i < photos; i++) form.append('files', new Blob([new Uint8Array(data)]), `p${i}.jpg`);
  const added = await (
    await fetch(`${server.base}/v1/jobs/${job.id}/items`, { method: 'POST', headers: auth, body: form })
  ).json();
  expect(added.added).toBe(photos);
  return job.id;
}

async function waitDone(auth: Record<string, string>, jobId: string) {
  for (let i = 0; i < 60; i++) {
    const job = await (await call(b, auth, `/v1/jobs/${jobId}?wait=20`)).json();
    if (!['queued', 'running'].includes(job.status)) return job;
  }
  throw new Error(`batch ${jobId} did not finish`);
}

describe.skipIf(!PG_AVAILABLE)('accounts across two server processes on one PostgreSQL, with the real model', () => {
  it('20 parallel starts with one Idempotency-Key, spread over both processes, charge once; the photos run through the real model', async () => {
    const { auth, accountId } = await newAccount(5);
    const jobId = await draftWith(a, auth, 1);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(i % 2 ? a : b, auth, `/v1/jobs/${jobId}/start`, {
          method: 'POST',
          headers: { 'idempotency-key': 'one-start-0001' },
        }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThanOrEqual(1);
    // Every other answer is the replay of the first or IN_PROGRESS while it ran; never a second start.
    for (const [i, s] of statuses.entries()) {
      if (s === 202) expect(bodies[i].id).toBe(jobId);
      else expect(bodies[i].code).toBe('IN_PROGRESS');
    }
    const done = await waitDone(auth, jobId);
    expect(done.counts).toMatchObject({ done: 1, failed: 0 });
    const account = await (await call(a, auth, '/v1/account')).json();
    expect(account.credits.plan).toBe(4);
    const ledger = await (await call(b, auth, '/v1/credits/ledger')).json();
    expect(ledger.entries.filter((e: { kind: string }) => e.kind === 'reserve')).toHaveLength(1);
    expect(ledger.entries.filter((e: { kind: string }) => e.kind === 'commit')).toHaveLength(1);
    const show = JSON.parse((await a.run(['accounts', 'show', '--account', accountId, '--json'])).stdout);
    expect(show).toMatchObject({ plan: 4, pack: 0 });
  });

  it('parallel starts of batches that together need more than the balance: some 402, never a negative balance', async () => {
    const { auth, accountId } = await newAccount(3);
    const jobs = [await draftWith(a, auth, 2), await draftWith(b, auth, 2)];
    const answers = await Promise.all(
      jobs.map((id, i) => call(i ? a : b, auth, `/v1/jobs/${id}/start`, { method: 'POST' })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 402]);
    const refused = await answers.find((r) => r.status === 402)!.json();
    expect(refused).toMatchObject({ code: 'NO_CREDITS', needed: 2, balance: 1 });
    const account = JSON.parse((await a.run(['accounts', 'show', '--account', accountId, '--json'])).stdout);
    expect(account.plan).toBe(1);
    await waitDone(auth, jobs[answers.findIndex((r) => r.status === 202)]);
  });

  it('three batches started at once on two processes: two run, the third gets 409 TOO_MANY_ACTIVE and stays a draft', async () => {
    const { auth } = await newAccount(10);
    const jobs = [await draftWith(a, auth, 1), await draftWith(a, auth, 1), await draftWith(b, auth, 1)];
    const answers = await Promise.all(
      jobs.map((id, i) => call(i % 2 ? a : b, auth, `/v1/jobs/${id}/start`, { method: 'POST' })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 409]);
    const refusedAt = answers.findIndex((r) => r.status === 409);
    expect((await answers[refusedAt].json()).code).toBe('TOO_MANY_ACTIVE');
    expect((await (await call(a, auth, `/v1/jobs/${jobs[refusedAt]}`)).json()).status).toBe('draft');
    for (const [i, id] of jobs.entries()) if (i !== refusedAt) await waitDone(auth, id);
    const account = await (await call(b, auth, '/v1/account')).json();
    expect(account.credits.plan).toBe(8);
  });

  it("shares one key's request budget across both processes: 80 requests at once, 60 answered", async () => {
    const { auth } = await newAccount(0);
    const answers = await Promise.all(Array.from({ length: 80 }, (_, i) => call(i % 2 ? a : b, auth, '/v1/presets')));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    const limited = answers.find((r) => r.status === 429)!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await limited.json()).code).toBe('RATE_LIMITED');
  });

  it("shares one key's photo budget across both processes: uploads at once never add more than the budget", async () => {
    const { auth } = await newAccount(0);
    const jobs = [
      await (await call(a, auth, '/v1/jobs', { method: 'POST', json: {} })).json(),
      await (await call(b, auth, '/v1/jobs', { method: 'POST', json: {} })).json(),
    ];
    const data = await productPhoto(64, 48);
    const upload = (server: RunningServer, jobId: string) => {
      const form = new FormData();
      for (let i = 0; i < 4; i++) form.append('files', new Blob([new Uint8Array(data)]), `${i}.jpg`);
      return fetch(`${server.base}/v1/jobs/${jobId}/items`, { method: 'POST', headers: auth, body: form });
    };
    const answers = await Promise.all([upload(a, jobs[0].id), upload(b, jobs[1].id)]);
    const bodies = await Promise.all(answers.map((r) => r.json()));
    const added = bodies.reduce((sum, body) => sum + (body.added ?? 0), 0);
    expect(added).toBe(5);
    const refused = await upload(b, jobs[1].id);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-matte-photos-remaining')).toBe('0');
  });

  it('a studio session signed in on one process works on the other; a key made there, then revoked, is refused on its next call', async () => {
    const { email } = await newAccount(2, 0, PASSWORD);
    const signIn = await fetch(`${a.base}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    const { csrfToken } = await signIn.json();
    const studio = { cookie, 'x-csrf-token': csrfToken };
    const created = await (await call(b, studio, '/v1/keys', { method: 'POST', json: { name: 'storefront' } })).json();
    const keyAuth = { authorization: `Bearer ${created.apiKey}` };
    expect((await call(a, keyAuth, '/v1/account')).status).toBe(200);
    expect((await call(a, keyAuth, '/v1/keys')).status).toBe(403);
    expect((await call(a, studio, `/v1/keys/${created.key.id}`, { method: 'DELETE' })).status).toBe(200);
    const refused = await call(b, keyAuth, '/v1/account');
    expect(refused.status).toBe(401);
    expect((await refused.json()).code).toBe('INVALID_KEY');
    const noCsrf = await call(a, { cookie }, '/v1/keys', { method: 'POST', json: { name: 'x' } });
    expect((await noCsrf.json()).code).toBe('CSRF_FAILED');
  });
});

describe.skipIf(!PG_AVAILABLE)('bin/matte beside the running servers', () => {
  it('licences, purchases, grants and corrections, keys: each verb with --json; bad input exits 2 with a message', async () => {
    const { email, accountId, auth } = await newAccount(0, 0, PASSWORD);
    const made = JSON.parse(
      (await a.run(['licenses', 'create', '--tier', '2', '--allowance', '30', '--job-limit', '100', '--json'])).stdout,
    );
    const code = made.licenses[0].code as string;
    expect(code).toMatch(/^lic_/);
    const listed = JSON.parse((await a.run(['licenses', 'list', '--status', 'purchased', '--json'])).stdout);
    expect(listed.licenses.map((l: { id: string }) => l.id)).toContain(made.licenses[0].license.id);
    expect(JSON.stringify(listed)).not.toContain(code);

    const signIn = await fetch(`${b.base}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const studio = {
      cookie: signIn.headers.get('set-cookie')!.split(';')[0],
      'x-csrf-token': (await signIn.json()).csrfToken,
    };
    const redeemed = await (await call(a, studio, '/v1/license/redeem', { method: 'POST', json: { code } })).json();
    expect(redeemed.credits.plan).toBe(30);
    const bought = await (
      await call(b, studio, '/v1/credits/purchases', { method: 'POST', json: { packId: 'pack-100' } })
    ).json();
    expect(bought.status).toBe('pending');
    const pending = JSON.parse((await a.run(['purchases', 'list', '--status', 'pending', '--json'])).stdout);
    expect(pending.purchases.map((p: { id: string }) => p.id)).toContain(bought.id);
    const approved = await a.run(['purchases', 'approve', '--purchase', bought.id]);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('100 credits added');
    const twice = await a.run(['purchases', 'approve', '--purchase', bought.id]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('not pending');

    expect(
      (await a.run(['credits', 'grant', '--account', accountId, '--pool', 'pack', '--amount', '5', '--json'])).code,
    ).toBe(0);
    const adjusted = JSON.parse(
      (
        await a.run([
          'credits',
          'adjust',
          '--account',
          accountId,
          '--pool',
          'plan',
          '--amount',
          '-10',
          '--reason',
          'goodwill reversed',
          '--json',
        ])
      ).stdout,
    );
    expect(adjusted).toMatchObject({ plan: 20, pack: 105 });
    const account = await (await call(b, auth, '/v1/account')).json();
    expect(account.credits).toMatchObject({ plan: 20, pack: 105, total: 125 });
    const ledger = await (await call(a, auth, '/v1/credits/ledger')).json();
    expect(ledger.entries.slice(0, 4).map((e: { kind: string }) => e.kind)).toEqual([
      'adjust',
      'grant',
      'purchase',
      'refresh',
    ]);
    expect(ledger.entries[0]).toMatchObject({
      pool: 'plan',
      amount: -10,
      balanceAfter: 20,
      reason: 'goodwill reversed',
    });

    const key = JSON.parse((await a.run(['keys', 'create', '--account', accountId, '--name', 'ops', '--json'])).stdout);
    expect((await call(b, { authorization: `Bearer ${key.apiKey}` }, '/v1/account')).status).toBe(200);
    expect((await a.run(['keys', 'revoke', '--account', accountId, '--key', key.keyId])).code).toBe(0);
    expect((await call(b, { authorization: `Bearer ${key.apiKey}` }, '/v1/account')).status).toBe(401);
    const keys = JSON.parse((await a.run(['keys', 'list', '--account', accountId, '--json'])).stdout).keys;
    expect(keys.map((k: { state: string }) => k.state)).toEqual(['active', 'revoked']);
    const accounts = JSON.parse((await a.run(['accounts', 'list', '--json'])).stdout).accounts;
    expect(accounts.map((x: { email: string }) => x.email)).toContain(email);

    const bad: [string[], RegExp][] = [
      [
        ['credits', 'grant', '--account', accountId, '--pool', 'gold', '--amount', '5'],
        /--pool must be one of plan, pack/,
      ],
      [
        ['credits', 'grant', '--account', accountId, '--pool', 'plan', '--amount', 'ten'],
        /--amount must be a whole number/,
      ],
      [['credits', 'adjust', '--account', accountId, '--pool', 'plan', '--amount', '-1'], /--reason is required/],
      [
        ['credits', 'adjust', '--account', accountId, '--pool', 'plan', '--amount', '-999', '--reason', 'x'],
        /cannot go below zero/,
      ],
      [['credits', 'grant', '--account', 'acc_nope', '--pool', 'plan', '--amount', '1'], /no longer exists|No account/],
      [
        ['licenses', 'create', '--tier', '1', '--allowance', '10', '--job-limit', '500'],
        /job limit must be a whole number from 1 to 200/,
      ],
      [['accounts', 'create', '--email', 'not-an-email'], /not an email address/],
      [['accounts', 'create', '--email', email], /exists already/],
      [['keys', 'revoke', '--account', accountId, '--key', 'key_nope'], /No key/],
      [['purchases', 'approve', '--purchase', 'pur_nope'], /No purchase/],
      [['accounts', 'frobnicate'], /unknown command/],
      [['credits', 'grant', '--bogus'], /^matte: unknown option --bogus \(known: --email, /],
      [['credits', 'grant', '--acount', accountId], /^matte: unknown option --acount; did you mean --account\?\n$/],
    ];
    // Each is refused before it changes anything, so they run at once.
    const outs = await Promise.all(bad.map(([args]) => a.run(args)));
    for (const [k, [args, message]] of bad.entries()) {
      expect(outs[k].code, args.join(' ')).toBe(2);
      expect(outs[k].stderr, args.join(' ')).toMatch(message);
    }
  });
});

if (!PG_AVAILABLE) {
  describe('accounts across processes', () => {
    it.skip('needs PostgreSQL (start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start)', () =>
      undefined);
  });
}
