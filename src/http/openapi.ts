// Finishing touches on the generated OpenAPI document that no single route schema can say: the
// rate-limit headers every authenticated answer carries, Retry-After on 429, the session cookie that
// signing in sets. Everything else comes from the routes' TypeBox schemas.
import { RATE_LIMIT_HEADERS } from './plugins/rate-limit-headers.ts';
import { SESSION_COOKIE } from '../services/session.service.ts';
import { JobEvent } from '../domain/event.schemas.ts';
import { nameComponents } from './openapi-components.ts';

interface Operation {
  operationId?: string;
  security?: unknown[];
  responses?: Record<string, { description?: string; headers?: Record<string, unknown> }>;
}
interface Document {
  paths?: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, unknown>;
  components?: { headers?: Record<string, unknown>; schemas?: Record<string, unknown> };
}

/** On GET /v1/account: whether the heavy tier is a model of its own on this server. */
export const HEAVY_MODEL_HEADER = 'X-Matte-Heavy-Model';

/** On POST /v1/jobs/{id}/apply: what the apply did, beside the Job it answers. */
export const APPLIED_HEADERS = { applied: 'X-Matte-Applied', skipped: 'X-Matte-Skipped' } as const;

const integerHeader = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });

export function finishOpenApiDocument(doc: Document): Document {
  doc.components ??= {};
  doc.components.headers = {
    ...Object.fromEntries(
      Object.entries(RATE_LIMIT_HEADERS).map(([name, description]) => [name, integerHeader(description)]),
    ),
    'Retry-After': integerHeader('Seconds to wait before the request can succeed.'),
    [HEAVY_MODEL_HEADER]: {
      description:
        '`stronger`: a heavy re-run (2 credits) runs a stronger model than light. `none`: this server has no heavy model of its own, so a heavy re-run runs the light model again and gives the same cut-out.',
      schema: { type: 'string', enum: ['stronger', 'none'] },
    },
    [APPLIED_HEADERS.applied]: integerHeader('Photos re-rendered by this request.'),
    [APPLIED_HEADERS.skipped]: integerHeader(
      'Photos re-run or re-rendered by another request meanwhile; they keep that change.',
    ),
    'Set-Cookie': {
      description: `The studio session cookie ${SESSION_COOKIE} (HttpOnly; SameSite=Strict; Secure over https).`,
      schema: { type: 'string' },
    },
  };
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  for (const methods of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(methods)) {
      const authenticated = !(Array.isArray(op.security) && op.security.length === 0);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const headers: Record<string, unknown> = { ...(response.headers ?? {}) };
        // 401 answers come before the caller is known, so they carry no budget.
        if (authenticated && status !== '401')
          for (const name of Object.keys(RATE_LIMIT_HEADERS)) headers[name] = ref(name);
        if (status === '429') headers['Retry-After'] = ref('Retry-After');
        if (op.operationId === 'signIn' && status === '200') headers['Set-Cookie'] = ref('Set-Cookie');
        if (op.operationId === 'applySettings' && status === '200')
          for (const name of Object.values(APPLIED_HEADERS)) headers[name] = ref(name);
        if (op.operationId === 'getAccount' && status === '200') headers[HEAVY_MODEL_HEADER] = ref(HEAVY_MODEL_HEADER);
        if (Object.keys(headers).length) response.headers = headers;
      }
    }
  }
  doc.webhooks = { jobEvent: jobEventWebhook() };
  return nameComponents(doc) as Document;
}

const header = (name: string, description: string, schema: object = { type: 'string' }) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});

/** What Matte POSTs to a batch's webhookUrl (OpenAPI 3.1 webhooks), so SDKs can type their receivers. */
function jobEventWebhook(): Record<string, unknown> {
  return {
    post: {
      operationId: 'receiveJobEvent',
      summary: "A batch event, POSTed to the batch's webhookUrl",
      description:
        "Sent for every event the batch's `webhookEvents` selected. Verify `X-Matte-Signature` before trusting the body: `v1` = hex HMAC-SHA256 with the batch's `webhookSecret` over the decimal `t`, a dot, and the raw body bytes; refuse a `t` more than 300 s away. " +
        'Answer 2xx within 10 s; anything else (a redirect too: redirects are not followed) is a failed attempt. Five attempts: at once, then after 30 s, 2 min, 10 min and 30 min; then the delivery is given up (see GET /v1/jobs/{id}/webhooks). ' +
        'Retries can arrive after later events: sort by the event `id` and deduplicate by `X-Matte-Delivery`. Events announce; the batch answer is the authority on state.',
      tags: ['events'],
      security: [],
      parameters: [
        header('User-Agent', 'Matte-Webhooks/1.0'),
        header('X-Matte-Event', "The event name (the body's `event`)."),
        header('X-Matte-Delivery', 'The delivery id, the same on every attempt.'),
        header('X-Matte-Attempt', 'The attempt number, from 1 to 5.', { type: 'integer', minimum: 1 }),
        header('X-Matte-Signature', '`t=<unix seconds>,v1=<64 lowercase hex>`', {
          type: 'string',
          pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$',
        }),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: JSON.parse(JSON.stringify(JobEvent)) } },
      },
      responses: {
        '200': { description: 'Received (any 2xx counts as delivered).' },
        '400': {
          description: 'Refused by the receiver (for example a bad signature): the attempt failed and will be retried.',
        },
      },
    },
  };
}
