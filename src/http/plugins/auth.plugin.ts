// Who is calling, for every /v1 endpoint but the public ones (the OpenAPI document, signing in):
//  - a request with an Authorization header is judged on its bearer alone: a session cookie sent
//    along never rescues an invalid key, and never turns a key into a session;
//  - without one, the studio session cookie; changing anything with it needs the CSRF token;
//  - session-only operations (keys, purchases, licences, deleting the account) refuse keys (403).
// Then the caller's per-minute request budget is counted and its headers are set.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseCookie } from 'cookie';
import { AppError, unlessFull } from '../../errors.ts';
import type { AccountService, AuthContext } from '../../services/account.service.ts';
import { csrfMatches, SESSION_COOKIE, type SessionService } from '../../services/session.service.ts';
import type { RateLimitService } from '../../services/rate-limit.service.ts';
import { setRateLimitHeaders } from './rate-limit-headers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** No credentials needed (the OpenAPI document, signing in). */
    public?: boolean;
    /** Studio only: a bearer key gets 403 SESSION_REQUIRED. */
    sessionOnly?: boolean;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function rateLimitSubject(auth: AuthContext): string {
  return `${auth.via}:${auth.credentialId}`;
}

export function registerAuth(
  app: FastifyInstance,
  deps: { accounts: AccountService; sessions: SessionService; limits: RateLimitService },
): void {
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    const config = request.routeOptions.config ?? {};
    if (!path.startsWith('/v1/') || config.public) return;
    const auth = await identify(request, deps);
    if (config.sessionOnly && auth.via !== 'session') {
      throw new AppError(
        'SESSION_REQUIRED',
        'This operation needs a signed-in studio session; API keys cannot manage keys, purchases, licences or the account.',
      );
    }
    request.auth = auth;
    // A full volume cannot record the request: reads still answer (writes get 507 at their own write).
    const windows = await deps.limits.hit(rateLimitSubject(auth)).catch(unlessFull);
    if (windows) setRateLimitHeaders(reply, windows);
    else request.log.warn('storage full: this request is not counted against the rate limit');
  });
}

async function identify(
  request: FastifyRequest,
  deps: { accounts: AccountService; sessions: SessionService },
): Promise<AuthContext> {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!match) throw new AppError('INVALID_KEY', 'The Authorization header is not "Bearer <API_KEY>".');
    return deps.accounts.authenticate(match[1]);
  }
  const token = request.headers.cookie ? parseCookie(request.headers.cookie)[SESSION_COOKIE] : undefined;
  if (!token) throw new AppError('UNAUTHENTICATED', 'Send your API key as "Authorization: Bearer <API_KEY>".');
  const session = await deps.sessions.authenticate(token);
  if (!SAFE_METHODS.has(request.method) && !csrfMatches(request.headers['x-csrf-token'], session.csrfToken)) {
    throw new AppError(
      'CSRF_FAILED',
      'Changes made with a studio session need its CSRF token in the X-CSRF-Token header.',
    );
  }
  return {
    accountId: session.accountId,
    via: session.via,
    credentialId: session.credentialId,
    keyPrefix: session.keyPrefix,
  };
}
