// Bearer authentication for every /v1 endpoint but the OpenAPI document. A request is judged on its
// bearer alone (cookies are never consulted).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { AccountService, AuthContext } from '../../services/account.service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

const PUBLIC = new Set(['/v1/openapi.json']);

export function registerAuth(app: FastifyInstance, accounts: AccountService): void {
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const path = request.url.split('?')[0];
    if (!path.startsWith('/v1/') || PUBLIC.has(path)) return;
    const header = request.headers.authorization;
    if (!header) throw new AppError('UNAUTHENTICATED', 'Send your API key as "Authorization: Bearer <API_KEY>".');
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!match) throw new AppError('INVALID_KEY', 'The Authorization header is not "Bearer <API_KEY>".');
    request.auth = await accounts.authenticate(match[1]);
  });
}
