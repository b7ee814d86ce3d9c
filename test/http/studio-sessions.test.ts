// Studio sessions, keys, licences, purchases and account deletion over the HTTP API (app.inject).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { productPhoto } from '../helpers/images.ts';
import { multipart } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const PASSWORD = 'correct horse battery';

/** Signs in and returns the cookie header and CSRF token, as a browser would hold them. */
async function signIn(email: string, password = PASSWORD) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/session', payload: { email, password } });
  expect(res.statusCode, res.body).toBe(200);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0];
  return { cookie, csrf: res.json().csrfToken as string, setCookie, body: res.json() };
}

/** Every operation that needs a studio session, with a body it would accept. */
const SESSION_ONLY = [
  { method: 'GET', url: '/v1/session' },
  { method: 'DELETE', url: '/v1/session' },
  { method: 'GET', url: '/v1/keys' },
  { method: 'POST', url: '/v1/keys', payload: { name: 'ci' } },
  { method: 'DELETE', url: '/v1/keys/key_x' },
  { method: 'POST', url: '/v1/license/redeem', payload: { code: 'lic_000000000000000000000000' } },
  { method: 'GET', url: '/v1/credits/purchases' },
  { method: 'POST', url: '/v1/credits/purchases', payload: { packId: 'pack-100' } },
  { method: 'DELETE', url: '/v1/account', payload: { password: PASSWORD } },
] as const;

describe('studio sessions', () => {
  it('signs in with the password: an HttpOnly SameSite=Strict cookie and a CSRF token; GET /v1/account says via session', async () => {
    const { email, accountId } = await t.account(5, 0, PASSWORD);
    const s = await signIn(email);
    expect(s.setCookie).toMatch(/^matte_session=[A-Za-z0-9_-]{40,};/);
    expect(s.setCookie).toMatch(/HttpOnly/i);
    expect(s.setCookie).toMatch(/SameSite=Strict/i);
    expect(s.setCookie).toMatch(/Path=\//);
    expect(s.body).toMatchObject({ accountId, email });
    const account = await t.app.inject({ method: 'GET', url: '/v1/account', headers: { cookie: s.cookie } });
    expect(account.statusCode).toBe(200);
    expect(account.json().auth).toEqual({ via: 'session', key: null });
    expect(account.headers['ratelimit-limit']).toBe('60');
    const session = await t.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie: s.cookie } });
    expect(session.json().csrfToken).toBe(s.csrf);
  });

  it('refuses a wrong password and an unknown address alike (401 INVALID_CREDENTIALS), and stops guessing after ten tries (429)', async () => {
    const { email } = await t.account(0, 0, PASSWORD);
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/v1/session',
      payload: { email, password: 'not the password' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['content-type']).toContain('application/problem+json');
    expect(wrong.json().code).toBe('INVALID_CREDENTIALS');
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/v1/session',
      payload: { email: 'nobody@example.com', password: PASSWORD },
    });
    expect(unknown.json().code).toBe('INVALID_CREDENTIALS');
    // Accounts made without a password cannot sign in at all.
    const noPassword = await t.account();
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/session',
          payload: { email: noPassword.email, password: PASSWORD },
        })
      ).json().code,
    ).toBe('INVALID_CREDENTIALS');
    for (let i = 0; i < 9; i++)
      await t.app.inject({ method: 'POST', url: '/v1/session', payload: { email, password: 'still wrong' } });
    const limited = await t.app.inject({ method: 'POST', url: '/v1/session', payload: { email, password: PASSWORD } });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/session', payload: { email: 'x@y.z' } });
    expect(bad.json().code).toBe('VALIDATION');
  });

  it('refuses changes made with a session but without its CSRF token (403 CSRF_FAILED); reads need none', async () => {
    const { email } = await t.account(5, 0, PASSWORD);
    const s = await signIn(email);
    const noToken = await t.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: { cookie: s.cookie },
      payload: { name: 'x' },
    });
    expect(noToken.statusCode).toBe(403);
    expect(noToken.json().code).toBe('CSRF_FAILED');
    const wrongToken = await t.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { cookie: s.cookie, 'x-csrf-token': 'A'.repeat(32) },
      payload: {},
    });
    expect(wrongToken.json().code).toBe('CSRF_FAILED');
    expect((await t.app.inject({ method: 'GET', url: '/v1/keys', headers: { cookie: s.cookie } })).statusCode).toBe(
      200,
    );
    const ok = await t.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
      payload: { name: 'from the studio' },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('creates, lists and revokes keys end to end: the secret shown once, a revoked key refused on its next call, and listed as revoked', async () => {
    const { email, auth } = await t.account(5, 0, PASSWORD);
    const s = await signIn(email);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const created = await t.app.inject({ method: 'POST', url: '/v1/keys', headers, payload: { name: 'shop backend' } });
    expect(created.statusCode).toBe(201);
    const { key, apiKey } = created.json();
    expect(apiKey).toMatch(/^mk_[0-9A-Za-z]{40}$/);
    expect(key).toMatchObject({ name: 'shop backend', state: 'active', prefix: apiKey.slice(0, 11), revokedAt: null });
    const newAuth = { authorization: `Bearer ${apiKey}` };
    const who = await t.app.inject({ method: 'GET', url: '/v1/account', headers: newAuth });
    expect(who.json().auth).toEqual({ via: 'key', key: key.prefix });

    const listed = (await t.app.inject({ method: 'GET', url: '/v1/keys', headers: { cookie: s.cookie } })).json().keys;
    expect(listed.map((k: { name: string }) => k.name)).toEqual(['default', 'shop backend']);
    expect(JSON.stringify(listed)).not.toContain(apiKey);

    const revoked = await t.app.inject({ method: 'DELETE', url: `/v1/keys/${key.id}`, headers });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id: key.id, state: 'revoked' });
    expect(revoked.json().revokedAt).toBeGreaterThan(0);
    const refused = await t.app.inject({ method: 'GET', url: '/v1/account', headers: newAuth });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().code).toBe('INVALID_KEY');
    // Revoking again answers the same; the key stays listed with its state; the other key still works.
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/keys/${key.id}`, headers })).json().state).toBe('revoked');
    const after = (await t.app.inject({ method: 'GET', url: '/v1/keys', headers: { cookie: s.cookie } })).json().keys;
    expect(after.map((k: { state: string }) => k.state)).toEqual(['active', 'revoked']);
    expect((await t.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/keys/key_unknown', headers })).json().code).toBe(
      'NOT_FOUND',
    );
  });

  it('allows ten active keys: the eleventh is 409 KEY_LIMIT; revoking one makes room', async () => {
    const { email } = await t.account(0, 0, PASSWORD);
    const s = await signIn(email);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    // The account has its default key: nine more make ten.
    const made = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        t.app.inject({ method: 'POST', url: '/v1/keys', headers, payload: { name: `k${i}` } }),
      ),
    );
    expect(made.map((r) => r.statusCode)).toEqual(Array(9).fill(201));
    const eleventh = await t.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers,
      payload: { name: 'one too many' },
    });
    expect(eleventh.statusCode).toBe(409);
    expect(eleventh.json().code).toBe('KEY_LIMIT');
    await t.app.inject({ method: 'DELETE', url: `/v1/keys/${made[0].json().key.id}`, headers });
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/keys', headers, payload: { name: 'room again' } })).statusCode,
    ).toBe(201);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/keys', headers, payload: { name: '' } });
    expect(bad.json().code).toBe('VALIDATION');
  });

  it('answers 403 SESSION_REQUIRED to a key calling any session-only operation, and changes nothing', async () => {
    const { auth, accountId } = await t.account(5, 0, PASSWORD);
    for (const op of SESSION_ONLY) {
      const res = await t.app.inject({
        method: op.method,
        url: op.url,
        headers: auth,
        ...('payload' in op ? { payload: op.payload } : {}),
      });
      expect(res.statusCode, `${op.method} ${op.url}`).toBe(403);
      expect(res.json().code, `${op.method} ${op.url}`).toBe('SESSION_REQUIRED');
    }
    expect((await t.c.store.repos.accounts.findById(accountId))!.deleted_at).toBeNull();
    expect(await t.c.store.repos.accounts.countActiveKeys(accountId)).toBe(1);
  });

  it('judges a request with a bearer on the bearer alone: a valid cookie rescues neither a bad key nor a key calling studio operations', async () => {
    const { email, auth } = await t.account(5, 0, PASSWORD);
    const s = await signIn(email);
    const badKey = await t.app.inject({
      method: 'GET',
      url: '/v1/account',
      headers: { cookie: s.cookie, authorization: `Bearer mk_${'x'.repeat(40)}` },
    });
    expect(badKey.json().code).toBe('INVALID_KEY');
    const keyWithCookie = await t.app.inject({
      method: 'GET',
      url: '/v1/keys',
      headers: { ...auth, cookie: s.cookie, 'x-csrf-token': s.csrf },
    });
    expect(keyWithCookie.json().code).toBe('SESSION_REQUIRED');
    const garbage = await t.app.inject({
      method: 'GET',
      url: '/v1/account',
      headers: { cookie: 'matte_session=nope' },
    });
    expect(garbage.statusCode).toBe(401);
    expect(garbage.json().code).toBe('INVALID_SESSION');
    expect((await t.app.inject({ method: 'GET', url: '/v1/account' })).json().code).toBe('UNAUTHENTICATED');
  });

  it('signs out: the cookie is cleared and the session no longer works', async () => {
    const { email } = await t.account(0, 0, PASSWORD);
    const s = await signIn(email);
    const out = await t.app.inject({
      method: 'DELETE',
      url: '/v1/session',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
    });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/matte_session=;.*Max-Age=0/);
    expect((await t.app.inject({ method: 'GET', url: '/v1/account', headers: { cookie: s.cookie } })).json().code).toBe(
      'INVALID_SESSION',
    );
  });
});

describe('licences and purchases', () => {
  it('redeems a licence code: plan pool filled now, renewal date and expiring credits shown; a code works once', async () => {
    const { email, accountId } = await t.account(0, 3, PASSWORD);
    const [{ code }] = await t.c.licenses.create({ tier: 2, allowance: 500, jobLimit: 50, count: 1 });
    const s = await signIn(email);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const res = await t.app.inject({ method: 'POST', url: '/v1/license/redeem', headers, payload: { code } });
    expect(res.statusCode, res.body).toBe(200);
    const account = res.json();
    expect(account.credits).toMatchObject({ plan: 500, pack: 3, total: 503, expiring: { credits: 500 } });
    expect(account.credits.planResetsInDays).toBeGreaterThanOrEqual(28);
    expect(account.credits.planResetsInDays).toBeLessThanOrEqual(31);
    expect(account.license).toMatchObject({ tier: 2, status: 'active', allowance: 500, jobLimit: 50 });
    expect(account.limits.photosPerBatch).toBe(50);
    const again = await t.app.inject({ method: 'POST', url: '/v1/license/redeem', headers, payload: { code } });
    expect(again.json()).toMatchObject({ code: 'CONFLICT', reason: 'ALREADY_REDEEMED' });
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/license/redeem',
          headers,
          payload: { code: `lic_${'u'.repeat(24)}` },
        })
      ).json().code,
    ).toBe('NOT_FOUND');
    expect(
      (
        await t.app.inject({ method: 'POST', url: '/v1/license/redeem', headers, payload: { code: 'not a code' } })
      ).json().code,
    ).toBe('VALIDATION');
    const refresh = (await t.c.store.repos.ledger.list(accountId, { limit: 5 })).find((r) => r.kind === 'refresh');
    expect(refresh).toMatchObject({ pool: 'plan', amount: 500, balance_after: 500 });
  });

  it('the licence batch limit caps photos per batch', async () => {
    const { email, auth } = await t.account(0, 0, PASSWORD);
    const [{ code }] = await t.c.licenses.create({ tier: 1, allowance: 10, jobLimit: 2, count: 1 });
    const s = await signIn(email);
    await t.app.inject({
      method: 'POST',
      url: '/v1/license/redeem',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
      payload: { code },
    });
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    const photo = await productPhoto();
    const form = multipart(
      [1, 2, 3].map((i) => ({ name: 'files', filename: `${i}.jpg`, data: photo, type: 'image/jpeg' })),
    );
    const added = (
      await t.app.inject({
        method: 'POST',
        url: `/v1/jobs/${job.id}/items`,
        headers: { ...auth, ...form.headers },
        payload: form.payload,
      })
    ).json();
    expect(added.added).toBe(2);
    expect(added.rejected[0].reason).toContain('2 photos');
  });

  it('buys a pack: pending until the operator approves it, then the pack pool grows once with a purchase row', async () => {
    const { email, accountId } = await t.account(0, 0, PASSWORD);
    const s = await signIn(email);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    const packs = (
      await t.app.inject({ method: 'GET', url: '/v1/credits/packs', headers: { cookie: s.cookie } })
    ).json().packs;
    expect(packs[0]).toEqual({ id: 'pack-100', credits: 100 });
    const bought = await t.app.inject({
      method: 'POST',
      url: '/v1/credits/purchases',
      headers,
      payload: { packId: 'pack-500' },
    });
    expect(bought.statusCode).toBe(202);
    expect(bought.json()).toMatchObject({
      packId: 'pack-500',
      credits: 500,
      status: 'pending',
      provider: 'operator',
      completedAt: null,
    });
    expect(bought.json()).not.toHaveProperty('accountId');
    expect((await t.c.store.repos.accounts.findById(accountId))!.pack_credits).toBe(0);
    await t.c.purchases.complete(bought.json().id);
    await expect(t.c.purchases.complete(bought.json().id)).rejects.toMatchObject({
      code: 'CONFLICT',
      extras: { reason: 'NOT_PENDING' },
    });
    const listed = (
      await t.app.inject({ method: 'GET', url: '/v1/credits/purchases', headers: { cookie: s.cookie } })
    ).json().purchases;
    expect(listed[0]).toMatchObject({ status: 'completed' });
    expect((await t.c.store.repos.accounts.findById(accountId))!.pack_credits).toBe(500);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 0, pack: 500 });
    expect(
      (
        await t.app.inject({ method: 'POST', url: '/v1/credits/purchases', headers, payload: { packId: 'pack-7' } })
      ).json().code,
    ).toBe('VALIDATION');
  });
});

describe('deleting the account', () => {
  it('needs the password; then revokes every key, releases open reservations, removes batches and files; the ledger balances', async () => {
    const { email, accountId, auth } = await t.account(10, 0, PASSWORD);
    const s = await signIn(email);
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    // A started batch whose photos wait (the worker is held) holds a reservation.
    const job = (await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: {} })).json();
    const form = multipart([{ name: 'files', filename: 'a.jpg', data: await productPhoto(), type: 'image/jpeg' }]);
    await t.app.inject({
      method: 'POST',
      url: `/v1/jobs/${job.id}/items`,
      headers: { ...auth, ...form.headers },
      payload: form.payload,
    });
    const release = t.model.hold();
    try {
      await t.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/start`, headers: auth });
      const wrong = await t.app.inject({
        method: 'DELETE',
        url: '/v1/account',
        headers,
        payload: { password: 'not it at all' },
      });
      expect(wrong.json().code).toBe('INVALID_CREDENTIALS');
      const deleted = await t.app.inject({
        method: 'DELETE',
        url: '/v1/account',
        headers,
        payload: { password: PASSWORD },
      });
      expect(deleted.statusCode).toBe(204);
    } finally {
      release();
    }
    expect((await t.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).json().code).toBe('INVALID_KEY');
    expect((await t.app.inject({ method: 'GET', url: '/v1/account', headers: { cookie: s.cookie } })).json().code).toBe(
      'INVALID_SESSION',
    );
    const account = (await t.c.store.repos.accounts.findById(accountId))!;
    expect(account.deleted_at).not.toBeNull();
    expect(account.plan_credits).toBe(10);
    expect(await t.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 10, pack: 0 });
    expect(await t.c.store.repos.jobs.findById(job.id)).toBeUndefined();
    // The photo that was running when the account went finishes, its result dropped and its files removed,
    // before the worker's stop resolves (a fixed wait here raced the photo on a loaded machine).
    await t.c.worker!.stop();
    const { readdirSync, existsSync } = await import('node:fs');
    const dir = `${t.dataDir}/blobs/jobs/${job.id}`;
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    // Signing in again is refused.
    expect(
      (await t.app.inject({ method: 'POST', url: '/v1/session', payload: { email, password: PASSWORD } })).json().code,
    ).toBe('INVALID_CREDENTIALS');
  });
});

describe('monthly renewal', () => {
  it('renews the plan pool on its date when the account is read: what was left expires, the allowance arrives once', async () => {
    let now = Date.UTC(2027, 0, 31, 9);
    const timed = await createTestApp({}, { runWorker: false, clock: () => now });
    try {
      const { auth, accountId } = await timed.account(0, 4);
      const [{ code }] = await timed.c.licenses.create({ tier: 1, allowance: 30, jobLimit: 200, count: 1 });
      await timed.c.licenses.redeem(accountId, code);
      await timed.c.store.transaction((r) => timed.c.credits.grant(r, accountId, 'plan', -12, 'adjust', 'spent', now));
      const before = (await timed.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).json();
      expect(before.credits).toMatchObject({
        plan: 18,
        pack: 4,
        planResetsInDays: 28,
        expiring: { credits: 18, at: '2027-02-28T09:00:00.000Z' },
      });
      now = Date.UTC(2027, 1, 28, 10); // the 31st clamps to February's last day
      const after = (await timed.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).json();
      expect(after.credits).toMatchObject({
        plan: 30,
        pack: 4,
        planResetsInDays: 31,
        expiring: { credits: 30, at: '2027-03-31T09:00:00.000Z' },
      });
      // A second read in the same period renews nothing.
      expect((await timed.app.inject({ method: 'GET', url: '/v1/account', headers: auth })).json().credits.plan).toBe(
        30,
      );
      const kinds = (await timed.c.store.repos.ledger.listForAccount(accountId)).map((r) => `${r.kind} ${r.amount}`);
      expect(kinds.slice(-2)).toEqual(['expire -18', 'refresh 30']);
      expect(kinds.filter((k) => k.startsWith('refresh'))).toHaveLength(2);
      expect(await timed.c.store.repos.ledger.sums(accountId)).toEqual({ plan: 30, pack: 4 });
    } finally {
      await timed.close();
    }
  });
});

describe('batch labels (GET /v1/batch-labels)', () => {
  it("gives the names of the signed-in account's batches, and nothing of another account's", async () => {
    const mine = await t.account(5, 0, PASSWORD);
    const other = await t.account(5, 0, PASSWORD);
    const create = (auth: Record<string, string>, name: string) =>
      t.app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: { name } }).then((r) => r.json().id);
    const ownId = await create(mine.auth, 'Spring shoes');
    const otherId = await create(other.auth, 'Not yours');
    const s = await signIn(mine.email);
    const res = await t.app.inject({
      method: 'GET',
      url: `/v1/batch-labels?ids=${ownId},${otherId}`,
      headers: { cookie: s.cookie },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().labels).toEqual([expect.objectContaining({ id: ownId, name: 'Spring shoes' })]);
    // An API key reads them too (the command line finds its own batches by name), scoped the same way.
    const byKey = await t.app.inject({
      method: 'GET',
      url: `/v1/batch-labels?ids=${ownId},${otherId}`,
      headers: mine.auth,
    });
    expect(byKey.statusCode).toBe(200);
    expect(byKey.json().labels).toEqual([{ id: ownId, name: 'Spring shoes', origin: 'batch' }]);
  });
});
