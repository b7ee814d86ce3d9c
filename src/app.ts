// buildApp(container): the Fastify instance with its plugins and routes. It never listens; tests use
// app.inject() and main/api.ts calls listen.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import type { Container } from './container.ts';
import { Problem } from './http/schemas/common.schemas.ts';
import { errorsPage, registerProblemHandling } from './http/plugins/problem.plugin.ts';
import { registerAuth } from './http/plugins/auth.plugin.ts';
import { multipartBodies } from './http/routes/route-kit.ts';
import { registerJobRoutes } from './http/routes/jobs.routes.ts';
import { registerItemRoutes } from './http/routes/items.routes.ts';
import { registerFileRoutes } from './http/routes/files.routes.ts';
import { registerImageRoutes } from './http/routes/images.routes.ts';
import { registerAccountRoutes } from './http/routes/account.routes.ts';
import { registerUnbuiltRoutes } from './http/routes/unbuilt.routes.ts';

export const API_VERSION = '1.0.0';

export async function buildApp(c: Container): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: c.log as FastifyBaseLogger,
    // Unknown fields are errors, never silently dropped; query strings are coerced from text.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: true } },
    // Long-polls hold requests up to 60 s; uploads of 200 photos take a while on slow links.
    requestTimeout: 0,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
  });

  // Bodies are JSON or multipart only: anything else is 415, not a string handed to a JSON route.
  app.removeContentTypeParser('text/plain');
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
          'Times named ...At, at, now, since and before are server-clock milliseconds; errors are application/problem+json. ' +
          'Design choices where the specification is silent: photos are `held` when added to a draft; a batch whose every photo failed ends `failed`; ' +
          'a one-photo request whose photo never started ends `cancelled`; URLs in answers are paths relative to the server.',
      },
      servers: [{ url: c.config.publicBaseUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url, route }) => {
      const key = `${Array.isArray(route.method) ? route.method[0] : route.method} ${url}`;
      const form = multipartBodies.get(key);
      if (!schema || !form) return { schema, url };
      const body = (schema.body ?? { content: {} }) as { content: Record<string, unknown> };
      return { schema: { ...schema, body: { content: { ...body.content, 'multipart/form-data': { schema: form } } } }, url };
    },
  });

  registerProblemHandling(app, c.config.publicBaseUrl);
  registerAuth(app, c.accounts);

  app.get('/v1/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    const doc = app.swagger() as { paths: Record<string, unknown> };
    return reply.type('application/json').send(doc);
  });
  app.get('/docs/errors', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(errorsPage()));

  registerJobRoutes(app, c);
  registerItemRoutes(app, c);
  registerFileRoutes(app, c);
  registerImageRoutes(app, c);
  registerAccountRoutes(app, c);
  registerUnbuiltRoutes(app, c);
  return app;
}
