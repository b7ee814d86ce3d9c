// Finishing touches on the generated OpenAPI document that no single route schema can say: the
// rate-limit headers every authenticated answer carries, Retry-After on 429, the session cookie that
// signing in sets. Everything else comes from the routes' TypeBox schemas.
import { RATE_LIMIT_HEADERS } from './plugins/rate-limit-headers.ts';
import { SESSION_COOKIE } from '../services/session.service.ts';

interface Operation {
  operationId?: string;
  security?: unknown[];
  responses?: Record<string, { description?: string; headers?: Record<string, unknown> }>;
}
interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { headers?: Record<string, unknown> };
}

const integerHeader = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });

export function finishOpenApiDocument(doc: Document): Document {
  doc.components ??= {};
  doc.components.headers = {
    ...Object.fromEntries(Object.entries(RATE_LIMIT_HEADERS).map(([name, description]) => [name, integerHeader(description)])),
    'Retry-After': integerHeader('Seconds to wait before the request can succeed.'),
    'Set-Cookie': { description: `The studio session cookie ${SESSION_COOKIE} (HttpOnly; SameSite=Strict; Secure over https).`, schema: { type: 'string' } },
  };
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  for (const methods of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(methods)) {
      const authenticated = !(Array.isArray(op.security) && op.security.length === 0);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const headers: Record<string, unknown> = { ...(response.headers ?? {}) };
        // 401 answers come before the caller is known, so they carry no budget.
        if (authenticated && status !== '401') for (const name of Object.keys(RATE_LIMIT_HEADERS)) headers[name] = ref(name);
        if (status === '429') headers['Retry-After'] = ref('Retry-After');
        if (op.operationId === 'signIn' && status === '200') headers['Set-Cookie'] = ref('Set-Cookie');
        if (Object.keys(headers).length) response.headers = headers;
      }
    }
  }
  return doc;
}
