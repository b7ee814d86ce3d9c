// MATTE_METRICS_PORT: every process (API or worker) answers /healthz, /readyz and /metrics (Prometheus
// text) on this port, apart from the public API, so that /metrics is never exposed with it.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Container } from '../container.ts';
import { registerHealthRoutes } from '../http/health.ts';

export async function startOpsServer(c: Container, port: number, host: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerHealthRoutes(app, c);
  app.get('/metrics', async (_request, reply) => reply.type(c.metrics.contentType).send(await c.metrics.text()));
  await app.listen({ port, host });
  const address = app.server.address();
  c.log.info(
    { metricsPort: typeof address === 'object' && address ? address.port : port },
    'metrics and health listening',
  );
  return app;
}
