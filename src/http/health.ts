// Health for orchestrators: /healthz (the process answers) and /readyz (the database, the blob store and,
// where this process runs photos, the model answer; 503 naming the failing part otherwise). On the public
// port of API processes, and with /metrics on MATTE_METRICS_PORT for every process (src/main/ops-server.ts).
import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../container.ts';

export interface HealthSource {
  readiness(): Promise<Readiness>;
}

export function registerHealthRoutes(app: FastifyInstance, source: HealthSource): void {
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const { ready, parts } = await source.readiness();
    const failing = Object.entries(parts)
      .filter(([, state]) => state !== 'ok' && state !== 'not run by this process')
      .map(([part]) => part);
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'not ready', ...(failing.length ? { failing } : {}), parts });
  });
}
