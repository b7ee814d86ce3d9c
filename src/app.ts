// buildApp(container): the Fastify instance with its plugins and routes. It never listens; tests use
// app.inject() and main/api.ts calls listen.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import type { Container } from './container.ts';
import { Problem } from './http/schemas/common.schemas.ts';
import { clientErrorHandler, frameworkErrors, registerProblemHandling } from './http/plugins/problem.plugin.ts';
import { errorPage, errorsPage } from './http/error-pages.ts';
import { registerHealthRoutes } from './http/health.ts';
import { registerStudio } from './http/studio.ts';
import { AppError, isErrorCode } from './errors.ts';
import { registerAuth } from './http/plugins/auth.plugin.ts';
import { registerValidation } from './http/plugins/validator.plugin.ts';
import { buildSerializer } from './http/serializer.ts';
import { finishOpenApiDocument } from './http/openapi.ts';
import { multipartBodies, routeApp } from './http/routes/route-kit.ts';
import { registerJobRoutes } from './http/routes/jobs.routes.ts';
import { registerItemRoutes } from './http/routes/items.routes.ts';
import { registerFileRoutes } from './http/routes/files.routes.ts';
import { registerImageRoutes } from './http/routes/images.routes.ts';
import { registerAccountRoutes } from './http/routes/account.routes.ts';
import { registerStudioRoutes } from './http/routes/studio.routes.ts';
import { registerReviewRoutes } from './http/routes/review.routes.ts';
import { registerRenderRoutes } from './http/routes/render.routes.ts';
import { registerTouchUpRoutes } from './http/routes/touch-up.routes.ts';
import { registerDownloadRoutes } from './http/routes/download.routes.ts';
import { registerEventRoutes } from './http/routes/events.routes.ts';
import { SESSION_COOKIE } from './services/session.service.ts';

const API_VERSION = '1.0.0';

export async function buildApp(c: Container): Promise<FastifyInstance> {
  const baseUrl = c.config.publicBaseUrl;
  const loggerInstance: FastifyBaseLogger = c.log;
  const app: FastifyInstance = Fastify({
    loggerInstance,
    // Long-polls hold requests up to 60 s; uploads of 200 photos take a while on slow links.
    requestTimeout: 0,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // Ids are at most 64 characters; a longer path parameter is 414 URI_TOO_LONG (problem+json).
    routerOptions: { maxParamLength: 128 },
    // Answers made before routing (an over-long parameter, a malformed URL, headers over 16 KB) are problem+json too.
    frameworkErrors: frameworkErrors(baseUrl),
    clientErrorHandler: clientErrorHandler(baseUrl),
    // Answers serialised without Ajv for nullable members (serializer.ts): no compile on an answer's path.
    schemaController: { compilersFactory: { buildSerializer } },
  });

  // Bodies are JSON or multipart only: anything else is 415, not a string handed to a JSON route.
  app.removeContentTypeParser('text/plain');
  registerValidation(app);
  app.addSchema(Problem);
  await app.register(multipart, { throwFileSizeLimit: false });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Matte API',
        version: API_VERSION,
        description:
          'Background removal for product photos, in batches, with an automatic quality check on every result. ' +
          'Times named ...At, at, now, since and before are server-clock milliseconds (ledger times: ISO 8601 with microseconds); errors are application/problem+json. ' +
          'Design choices where the specification is silent: photos are `held` when added to a draft; a batch whose every photo failed ends `failed`; ' +
          'a one-photo request whose photo never started ends `cancelled`; URLs in answers are paths relative to the server. ' +
          'Rate limits: 60 requests in any 60 seconds and 2,000 photos added in any hour, per key (or studio session), counted in sliding windows (1-second and 1-minute buckets) shared by every server process; ' +
          'every answer carries RateLimit-Limit/-Remaining/-Reset and X-Matte-Photos-Limit/-Remaining/-Reset; over a limit: 429 RATE_LIMITED with Retry-After and `retryAfter`. Refused requests are not counted. ' +
          'Studio operations (keys, licences, purchases, deleting the account) need a signed-in session (POST /v1/session); a key gets 403 SESSION_REQUIRED.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Matte' },
        contact: { name: 'The operator of this Matte server', url: baseUrl },
      },
      // The server's public address; without PUBLIC_BASE_URL (localhost, which a reader elsewhere cannot reach)
      // the address the document was fetched from: a relative URL.
      servers: [/^https?:\/\/(localhost|127\.0\.0\.1)([:/]|$)/.test(baseUrl) ? { url: '/' } : { url: baseUrl }],
      tags: [
        { name: 'batches', description: 'Create, fill, start, follow and stop batches.' },
        { name: 'photos', description: 'Photos of a batch.' },
        { name: 'files', description: 'Files of a photo.' },
        { name: 'single photo', description: 'One photo in one call.' },
        { name: 'account', description: 'Credits, ledger and limits.' },
        { name: 'studio', description: 'Studio session operations (not for API keys).' },
        { name: 'review', description: 'The review queue and re-runs.' },
        { name: 'reference', description: 'Presets and the API description.' },
        {
          name: 'events',
          description:
            'Follow a batch: Server-Sent Events and webhook deliveries. Webhooks are POSTed with X-Matte-Event, X-Matte-Delivery (stable across retries), X-Matte-Attempt and X-Matte-Signature `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.rawBody" with the batch\'s webhookSecret>`; User-Agent Matte-Webhooks/1.0.',
        },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: SESSION_COOKIE,
            description: 'Studio session cookie from POST /v1/session; changes also need X-CSRF-Token.',
          },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transform: ({ schema, url, route }) => {
      // Routes are registered with :params, and the forms keyed with OpenAPI's {params}.
      const key = `${Array.isArray(route.method) ? route.method[0] : route.method} ${url.replace(/:(\w+)/g, '{$1}')}`;
      const form = multipartBodies.get(key);
      if (!schema || !form) return { schema, url };
      const body = (schema.body ?? { content: {} }) as { content: Record<string, unknown> };
      return {
        schema: { ...schema, body: { content: { ...body.content, 'multipart/form-data': { schema: form } } } },
        url,
      };
    },
    transformObject: (document) => {
      const openapi = (document as { openapiObject: Parameters<typeof finishOpenApiDocument>[0] }).openapiObject;
      return finishOpenApiDocument(openapi) as Record<string, unknown>;
    },
  });

  registerProblemHandling(app, baseUrl);
  registerAuth(app, { accounts: c.accounts, sessions: c.sessions, limits: c.limits });

  app.get(
    '/v1/openapi.json',
    {
      config: { public: true },
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI 3.1 description of /v1 (no key needed)',
        description:
          'This document: every operation, its parameters, bodies, answers and errors, with the shared objects named under `components/schemas`. Public: no key is needed. Generated from the same schemas that validate requests, so what it says is what the server checks.',
        tags: ['reference'],
        security: [],
        response: {
          200: {
            description: 'OpenAPI 3.1 document',
            content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
          },
          400: Type.Ref(Problem, { description: 'VALIDATION: a malformed request URL' }),
        },
      },
    },
    async (_request, reply) => reply.type('application/json').send(app.swagger()),
  );
  registerHealthRoutes(app, c);
  app.addHook('onResponse', async (request, reply) => {
    c.metrics.httpSeconds.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  app.get('/docs/errors', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(errorsPage()),
  );
  app.get<{ Params: { code: string } }>('/docs/errors/:code', { schema: { hide: true } }, async (request, reply) => {
    const { code } = request.params;
    if (!isErrorCode(code)) throw new AppError('NOT_FOUND', `No error code ${code.slice(0, 40)}; see /docs/errors.`);
    return reply.type('text/html; charset=utf-8').send(errorPage(code));
  });

  const routes = routeApp(app);
  registerJobRoutes(routes, c);
  registerItemRoutes(routes, c);
  registerFileRoutes(routes, c);
  registerImageRoutes(routes, c);
  registerAccountRoutes(routes, c);
  registerStudioRoutes(routes, c);
  registerReviewRoutes(routes, c);
  registerRenderRoutes(routes, c);
  registerTouchUpRoutes(routes, c);
  registerDownloadRoutes(routes, c);
  registerEventRoutes(routes, c);
  await registerStudio(app);
  return app;
}
