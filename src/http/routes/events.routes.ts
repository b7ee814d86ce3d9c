// GET /v1/jobs/{id}/events (Server-Sent Events) and GET /v1/jobs/{id}/webhooks (deliveries).
import { Type } from '@sinclair/typebox';
import type { Container } from '../../container.ts';
import { WebhookDeliveries } from '../../domain/event.schemas.ts';
import { IdParams } from '../schemas/common.schemas.ts';
import { sseFrame } from '../sse.ts';
import { problems, type RouteApp } from './route-kit.ts';

const LastEventId = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,15}$',
      description:
        'Resume after this event id: the snapshot comes first (without an id), then every event after it, none twice.',
    }),
  ),
});

const StreamQuery = Type.Object(
  {
    until: Type.Optional(
      Type.Union([Type.Literal('done'), Type.Literal('paused')], {
        default: 'done',
        description:
          "`done` (the default): the stream lasts to `job.done`, through a sample run's or a stop's `job.paused` and the continue after it. `paused`: it also ends after `job.paused`, and opened on a paused batch it sends the snapshot and ends: a command line that follows a sample run returns when the sample is done.",
      }),
    ),
  },
  { additionalProperties: false },
);

export function registerEventRoutes(
  app: RouteApp,
  c: Pick<Container, 'config' | 'events' | 'queries' | 'webhooks'>,
): void {
  // Open streams end before the server waits for its connections to close.
  app.addHook('preClose', async () => c.events.close());

  app.get(
    '/v1/jobs/:id/events',
    {
      // A stream has no HEAD: the answer's body is the point.
      exposeHeadRoute: false,
      schema: {
        operationId: 'streamJobEvents',
        summary: 'Follow a batch live: Server-Sent Events',
        description:
          'The first message is `event: snapshot` with the batch without photos (JobSummary); then one message per event, with `id` (the event id), `event` (its name) and `data` (the JobEvent as JSON), in id order. ' +
          "A fresh stream's snapshot carries the id of the last event it reflects, so reconnecting with `Last-Event-ID` (EventSource does it by itself) continues with exactly the events after it; a resumed stream's snapshot has no id. " +
          `A comment line \`: keep-alive\` every ${Math.round(c.config.sseKeepAliveMs / 1000)} s. The stream ends after \`job.done\` (also after \`job.paused\` with \`?until=paused\`), after ${Math.round(c.config.sseMaxMs / 60_000)} minutes (reconnect for a fresh snapshot), when the batch is deleted, or when the client closes it. ` +
          'A stream opened on a finished batch sends the snapshot and ends. Works whichever process runs the photos (PostgreSQL LISTEN/NOTIFY between processes).',
        tags: ['events'],
        params: IdParams,
        querystring: StreamQuery,
        headers: LastEventId,
        produces: ['text/event-stream'],
        response: {
          200: {
            description: 'text/event-stream of snapshot and JobEvent messages',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  description: 'SSE frames; each data line is JSON (JobSummary for snapshot, JobEvent otherwise).',
                }),
              },
            },
          },
          ...problems(400, 404),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { until = 'done' } = request.query;
      const accountId = request.auth.accountId;
      const header = request.headers['last-event-id'];
      // The header schema admits only digits (at most 15): a safe integer.
      const lastEventId = header === undefined ? null : Number(header);
      // Unknown batch: a problem answer, before the stream starts.
      await c.queries.requireJob(accountId, id);

      reply.hijack();
      const res = reply.raw;
      // Headers set before the hijack (the rate limit's, the request id) go out with the stream's own.
      for (const [name, value] of Object.entries(reply.getHeaders()))
        if (value !== undefined) res.setHeader(name, value);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      const left = new AbortController();
      const leave = () => left.abort();
      res.on('close', leave);
      request.raw.on('close', leave);
      try {
        await c.events.follow(accountId, id, lastEventId, (m) => res.write(sseFrame(m)), left.signal, until);
      } catch (err) {
        request.log.error({ err }, 'event stream failed');
      } finally {
        res.off('close', leave);
        request.raw.off('close', leave);
        res.end();
      }
    },
  );

  app.get(
    '/v1/jobs/:id/webhooks',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'Webhook deliveries of a batch, with the sent bodies',
        description:
          `One delivery per event the webhook selected, in event id order, with the exact body sent (\`payload\`) for manual replay. Attempts: at once, then after each of the configured delays (${c.config.webhookRetryDelaysMs.map((d) => `${d / 1000} s`).join(', ')}); ` +
          `an attempt fails on anything but a 2xx answer within ${c.config.webhookTimeoutMs / 1000} s (redirects are not followed); after the last, the delivery is \`given_up\` with its last status and error. ` +
          'A batch without a webhook answers `webhookUrl` null and no deliveries. Deliveries are kept, and deleted, with the batch.',
        tags: ['events'],
        params: IdParams,
        response: { 200: WebhookDeliveries, ...problems(404) },
      },
    },
    async (request) => c.webhooks.listDeliveries(request.auth.accountId, request.params.id),
  );
}
