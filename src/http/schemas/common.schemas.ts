// HTTP shapes: the problem body, path parameters, and answers that are a batch plus a member or two.
// The things themselves live in src/domain and are re-exported here for the routes.
import { Type, type Static } from '@sinclair/typebox';
import { jobFields, Tier, WebhookEvents } from '../../domain/batch.schemas.ts';

export * from '../../domain/batch.schemas.ts';

const closed = { additionalProperties: false } as const;
const Int = (opts: object = {}) => Type.Integer(opts);

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'Link to the error code documentation: {base_url}/docs/errors#CODE' }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable error code; branch on this, never on `detail`.' }),
    detail: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    needed: Type.Optional(Type.Integer()),
    balance: Type.Optional(Type.Integer()),
    retryAfter: Type.Optional(Type.Integer()),
    jobId: Type.Optional(Type.String()),
    itemId: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
  },
  {
    $id: 'Problem',
    additionalProperties: true,
    description: 'RFC 9457 problem details (application/problem+json); open object.',
  },
);
export type Problem = Static<typeof Problem>;

export const JobCreated = Type.Object(
  {
    ...jobFields,
    webhookUrl: Type.Optional(Type.String()),
    webhookSecret: Type.Optional(Type.String({ description: 'Shown only in this answer.' })),
    webhookEvents: Type.Optional(WebhookEvents),
  },
  closed,
);
export const JobWithAdded = Type.Object({ ...jobFields, added: Int() }, closed);
export const JobWithRemoved = Type.Object({ ...jobFields, removed: Int() }, closed);
export const JobWithStopped = Type.Object({ ...jobFields, stopped: Int(), inFlight: Int() }, closed);
export const JobWithRetried = Type.Object({ ...jobFields, retried: Int(), charged: Int() }, closed);
export const JobWithCharged = Type.Object({ ...jobFields, charged: Int(), tier: Tier }, closed);

export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, closed);
export const ItemParams = Type.Object(
  { id: Type.String({ maxLength: 64 }), itemId: Type.String({ maxLength: 64 }) },
  closed,
);
