// Studio operations: signing in and out, API keys, licence codes, credit packs, deleting the account.
// All but signing in need a studio session (a key gets 403 SESSION_REQUIRED); changes also need the
// session's CSRF token in X-CSRF-Token.
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import { stringifySetCookie } from 'cookie';
import type { Container } from '../../container.ts';
import {
  Account,
  ApiKeyInfo,
  ApiKeyList,
  BatchLabels,
  BatchLabelsQuery,
  CreateKeyRequest,
  CreatedKey,
  CreditPackList,
  DeleteAccountRequest,
  KeyParams,
  Purchase,
  PurchaseList,
  PurchaseRequest,
  RedeemLicenseRequest,
  SessionInfo,
  SignInRequest,
} from '../schemas/account.schemas.ts';
import { problems, type RouteApp } from './route-kit.ts';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../../services/session.service.ts';
import { CREDIT_PACKS } from '../../services/purchase.service.ts';

const STUDIO = { sessionOnly: true } as const;
const studioSecurity = [{ session: [] }];

export function registerStudioRoutes(
  app: RouteApp,
  c: Pick<Container, 'accounts' | 'config' | 'deletion' | 'licenses' | 'purchases' | 'queries' | 'sessions'>,
): void {
  // The cookie is Secure when the service is reached over https (PUBLIC_BASE_URL), so a local
  // http://localhost studio still works.
  const secure = c.config.publicBaseUrl.startsWith('https://');
  const setSessionCookie = (reply: FastifyReply, value: string, maxAgeSeconds: number) =>
    reply.header(
      'set-cookie',
      stringifySetCookie({
        name: SESSION_COOKIE,
        value,
        httpOnly: true,
        sameSite: 'strict',
        secure,
        path: '/',
        maxAge: maxAgeSeconds,
      }),
    );

  app.post(
    '/v1/session',
    {
      config: { public: true },
      schema: {
        operationId: 'signIn',
        summary: 'Sign in to the studio with e-mail and password',
        description: `Sets the HTTP-only, SameSite=Strict cookie \`${SESSION_COOKIE}\` (valid ${SESSION_TTL_MS / 3_600_000} h) and answers the CSRF token to send as X-CSRF-Token with every change made with the session.`,
        tags: ['studio'],
        security: [],
        body: SignInRequest,
        response: { 200: SessionInfo, ...problems(400, 401) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { token, session } = await c.sessions.signIn(body.email, body.password);
      setSessionCookie(reply, token, Math.floor(SESSION_TTL_MS / 1000));
      return session;
    },
  );

  app.get(
    '/v1/session',
    {
      config: STUDIO,
      schema: {
        operationId: 'getSession',
        summary: 'The signed-in studio session and its CSRF token',
        description:
          'The studio session the cookie belongs to: the account, when it expires, and the CSRF token that changes must send as `X-CSRF-Token`. 401 when the cookie is missing or has expired.',
        tags: ['studio'],
        security: studioSecurity,
        response: { 200: SessionInfo, ...problems(403) },
      },
    },
    async (request) => c.sessions.describe(request.auth),
  );

  app.delete(
    '/v1/session',
    {
      config: STUDIO,
      schema: {
        operationId: 'signOut',
        summary: 'Sign out of the studio',
        description: 'Ends the studio session on the server and clears its cookie. Keys are not affected.',
        tags: ['studio'],
        security: studioSecurity,
        response: { 204: Type.Null(), ...problems(403) },
      },
    },
    async (request, reply) => {
      await c.sessions.signOut(request.auth);
      setSessionCookie(reply, '', 0);
      return reply.code(204).send();
    },
  );

  app.get(
    '/v1/batch-labels',
    {
      schema: {
        operationId: 'getBatchLabels',
        summary: 'The names sellers gave their batches, and which were one-photo calls',
        description:
          'The batch answer, which the specification closes, carries neither; the studio reads them here for the batches it lists, and `matte remove` to find the batch an interrupted run of the same command left. An API key or a studio session; ids of other accounts and unknown ids are left out of the answer.',
        tags: ['batches'],
        querystring: BatchLabelsQuery,
        response: { 200: BatchLabels, ...problems(400) },
      },
    },
    async (request) => {
      const ids = [...new Set(request.query.ids.split(','))];
      return { labels: await c.queries.labels(request.auth.accountId, ids) };
    },
  );

  app.get(
    '/v1/keys',
    {
      config: STUDIO,
      schema: {
        operationId: 'listKeys',
        summary: 'API keys of the account, active and revoked',
        description:
          "The account's API keys: name, the visible prefix, state, when each was made, last used and revoked. Secrets are never shown again after they are made.",
        tags: ['studio'],
        security: studioSecurity,
        response: { 200: ApiKeyList, ...problems(403) },
      },
    },
    async (request) => ({ keys: await c.accounts.listKeys(request.auth.accountId) }),
  );

  app.post(
    '/v1/keys',
    {
      config: STUDIO,
      schema: {
        operationId: 'createKey',
        summary: 'Create an API key (its secret is shown once)',
        description: 'At most ten active keys per account: an eleventh is refused with 409 KEY_LIMIT.',
        tags: ['studio'],
        security: studioSecurity,
        body: CreateKeyRequest,
        response: { 201: CreatedKey, ...problems(400, 403, 409) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await c.accounts.createKey(request.auth.accountId, request.body.name)),
  );

  app.delete(
    '/v1/keys/:keyId',
    {
      config: STUDIO,
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke an API key; it is refused from its next request on',
        description: 'Idempotent: revoking a revoked key answers it as it is. Revoked keys stay listed.',
        tags: ['studio'],
        security: studioSecurity,
        params: KeyParams,
        response: { 200: ApiKeyInfo, ...problems(403, 404) },
      },
    },
    async (request) => c.accounts.revokeKey(request.auth.accountId, request.params.keyId),
  );

  app.post(
    '/v1/license/redeem',
    {
      config: STUDIO,
      schema: {
        operationId: 'redeemLicense',
        summary:
          'Redeem a licence code: its monthly allowance fills the plan pool now and on the same date every month',
        description:
          'Plan credits left when the licence renews expire then (`credits.expiring`); pack credits never expire. 409 CONFLICT reason ALREADY_REDEEMED or LICENSE_ACTIVE.',
        tags: ['studio'],
        security: studioSecurity,
        body: RedeemLicenseRequest,
        response: { 200: Account, ...problems(400, 403, 404, 409) },
      },
    },
    async (request) => {
      await c.licenses.redeem(request.auth.accountId, request.body.code);
      return c.accounts.describe(request.auth);
    },
  );

  app.get(
    '/v1/credits/packs',
    {
      schema: {
        operationId: 'listCreditPacks',
        summary: 'Credit packs that can be bought',
        description:
          'The credit packs this server sells, with their credits and price. Buying one is POST /v1/credits/purchases.',
        tags: ['account'],
        response: { 200: CreditPackList, ...problems() },
      },
    },
    async () => ({ packs: CREDIT_PACKS.map((p) => ({ ...p })) }),
  );

  app.get(
    '/v1/credits/purchases',
    {
      config: STUDIO,
      schema: {
        operationId: 'listPurchases',
        summary: 'Credit pack purchases of the account, newest first',
        description:
          "The account's pack purchases, newest first, with their status: `pending` until the operator confirms the payment, then `completed` (the credits added once) or `cancelled`.",
        tags: ['studio'],
        security: studioSecurity,
        response: { 200: PurchaseList, ...problems(403) },
      },
    },
    async (request) => ({ purchases: await c.purchases.list({ accountId: request.auth.accountId }) }),
  );

  app.post(
    '/v1/credits/purchases',
    {
      config: STUDIO,
      schema: {
        operationId: 'buyCreditPack',
        summary: 'Buy a credit pack',
        description:
          'The purchase is `pending` until the payment provider confirms it; on this installation the operator approves it (`bin/matte purchases approve`). Completed purchases add their credits to the pack pool, once, with a `purchase` ledger row.',
        tags: ['studio'],
        security: studioSecurity,
        body: PurchaseRequest,
        response: { 202: Purchase, ...problems(400, 403) },
      },
    },
    async (request, reply) => {
      // The answer's schema leaves out accountId (the caller's own).
      return reply.code(202).send(await c.purchases.buy(request.auth.accountId, request.body.packId));
    },
  );

  app.delete(
    '/v1/account',
    {
      config: STUDIO,
      schema: {
        operationId: 'deleteAccount',
        summary: 'Delete the account: keys revoked, reservations released, batches and files removed',
        description:
          'Needs the password again. The anonymised account and its ledger are kept as the record of credits bought and spent.',
        tags: ['studio'],
        security: studioSecurity,
        body: DeleteAccountRequest,
        response: { 204: Type.Null(), ...problems(400, 403) },
      },
    },
    async (request, reply) => {
      await c.deletion.deleteAccount(request.auth.accountId, request.body.password);
      setSessionCookie(reply, '', 0);
      return reply.code(204).send();
    },
  );
}
