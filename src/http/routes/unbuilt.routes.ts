// Endpoints of the specification that are not built yet. They are declared (so the OpenAPI document
// covers every path of the spec with its request and response schemas) and answer 501 NOT_IMPLEMENTED
// after authentication and the usual 404 for an unknown batch. Each moves to its own file when built.
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { IdParams, EventName, Nullable } from '../schemas/common.schemas.ts';
import { problems } from './route-kit.ts';

const Open = (description: string) => Type.Object({}, { additionalProperties: true, description });

const Delivery = Type.Object(
  {
    id: Type.String(),
    event: EventName,
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('given_up')]),
    attempts: Type.Integer(),
    nextAttemptAt: Nullable(Type.Integer()),
    deliveredAt: Nullable(Type.Integer()),
    givenUpAt: Nullable(Type.Integer()),
    lastStatus: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    createdAt: Type.Integer(),
    payload: Type.Object({ id: Type.Integer(), event: EventName, at: Type.Integer(), jobId: Type.String(), data: Open('Event data') }),
  },
  { additionalProperties: false },
);

interface Unbuilt {
  method: 'GET' | 'POST';
  url: string;
  operationId: string;
  summary: string;
  params: TSchema;
  body?: TSchema;
  querystring?: TSchema;
  response: Record<number, unknown>;
}

const UNBUILT: Unbuilt[] = [
  {
    method: 'GET',
    url: '/v1/jobs/:id/events',
    operationId: 'streamEvents',
    summary: 'Server-Sent Events of a batch',
    params: IdParams,
    response: { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: Type.String() } } }, ...problems(404, 501) },
  },
  {
    method: 'GET',
    url: '/v1/jobs/:id/webhooks',
    operationId: 'listWebhookDeliveries',
    summary: 'Webhook deliveries of a batch, with the sent bodies',
    params: IdParams,
    response: {
      200: Type.Object({ jobId: Type.String(), webhookUrl: Nullable(Type.String()), events: Nullable(Type.Union([Type.Literal('all'), Type.Array(EventName)])), maxAttempts: Type.Integer(), deliveries: Type.Array(Delivery) }),
      ...problems(404, 501),
    },
  },
];

export function registerUnbuiltRoutes(app: FastifyInstance, c: Container): void {
  for (const route of UNBUILT) {
    app.route({
      method: route.method,
      url: route.url,
      schema: {
        operationId: route.operationId,
        summary: `${route.summary} (not built yet: 501)`,
        tags: ['not built yet'],
        params: route.params,
        ...(route.body ? { body: route.body } : {}),
        ...(route.querystring ? { querystring: route.querystring } : {}),
        response: route.response,
      },
      exposeHeadRoute: false,
      handler: async (request) => {
        const { id } = request.params as { id: string };
        await c.queries.requireJob(request.auth.accountId, id);
        throw new AppError('NOT_IMPLEMENTED', `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')} is specified but not built yet.`);
      },
    });
  }
}
