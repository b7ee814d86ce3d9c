// Batch events (the event log, the stream and webhooks) and webhook deliveries, as TypeBox schemas.
// The spec names the `data` members; their types are ours, documented here (the spec leaves them open).
import { Type, type Static } from '@sinclair/typebox';
import { Counts, EventName, ItemError, ItemStatus, JobStatus, Nullable, WebhookEvents } from './batch.schemas.ts';

const closed = { additionalProperties: false } as const;
const Url = (description: string) => Nullable(Type.String({ description }));

export const JobEventData = Type.Object(
  {
    status: JobStatus,
    counts: Counts,
    downloadUrl: Url('ZIP of the finished photos; null until a photo has finished.'),
    reviewUrl: Type.String({ description: 'The review queue of the batch.' }),
    continueUrl: Url('Set when the batch is paused with photos held (sample run or stop).'),
  },
  {
    ...closed,
    title: 'JobEventData',
    description: 'data of job.started, job.paused and job.done: the batch as it was when the event happened.',
  },
);
export type JobEventData = Static<typeof JobEventData>;

export const ItemEventData = Type.Object(
  {
    itemId: Type.String(),
    name: Type.String(),
    status: ItemStatus,
    review: Type.Union([Type.Literal('none'), Type.Literal('red')]),
    score: Nullable(
      Type.Number({ minimum: 0, maximum: 100, description: 'quality.score of the result; null for a failed photo.' }),
    ),
    credits: Type.Integer({ description: 'What the photo cost: 0 when it was flagged (refunded) or failed.' }),
    attempts: Type.Integer(),
    error: Nullable(ItemError),
    outputUrl: Url('null for a failed photo.'),
    thumbUrl: Url('null for a failed photo.'),
    inputThumbUrl: Url('Thumbnail of the uploaded photo.'),
  },
  {
    ...closed,
    title: 'ItemEventData',
    description: 'data of item.done, item.needs_review and item.failed: the photo as it was when the event happened.',
  },
);
export type ItemEventData = Static<typeof ItemEventData>;

export const JobEvent = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'Counts up per batch from 1: sort by it, and notice a gap with it.' }),
    event: EventName,
    at: Type.Integer({ description: 'Server clock, ms, when the change happened.' }),
    jobId: Type.String(),
    data: Type.Union([JobEventData, ItemEventData], {
      description: 'JobEventData for job.* events, ItemEventData for item.* events.',
    }),
  },
  { ...closed, title: 'JobEvent' },
);
export type JobEvent = Static<typeof JobEvent>;

export const DeliveryStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivered'),
  Type.Literal('given_up'),
]);
export type DeliveryStatus = Static<typeof DeliveryStatus>;

export const Delivery = Type.Object(
  {
    id: Type.String({ description: 'Sent as X-Matte-Delivery; the same on every attempt: deduplicate by it.' }),
    event: EventName,
    status: DeliveryStatus,
    attempts: Type.Integer({ description: 'Attempts made so far (at most maxAttempts).' }),
    nextAttemptAt: Nullable(
      Type.Integer({ description: 'When the next attempt is due (ms); null once delivered or given up.' }),
    ),
    deliveredAt: Nullable(Type.Integer()),
    givenUpAt: Nullable(Type.Integer()),
    lastStatus: Nullable(Type.Integer({ description: 'HTTP status of the last attempt; null when it got no answer.' })),
    lastError: Nullable(
      Type.String({ description: 'Why the last attempt failed; null when it succeeded or none was made.' }),
    ),
    createdAt: Type.Integer(),
    payload: JobEvent,
  },
  { ...closed, title: 'Delivery' },
);
export type Delivery = Static<typeof Delivery>;

export const WebhookDeliveries = Type.Object(
  {
    jobId: Type.String(),
    webhookUrl: Nullable(Type.String()),
    events: Nullable(WebhookEvents),
    maxAttempts: Type.Integer(),
    deliveries: Type.Array(Delivery, { description: 'One per event sent to the webhook, by event id.' }),
  },
  { ...closed, title: 'WebhookDeliveries' },
);
export type WebhookDeliveries = Static<typeof WebhookDeliveries>;
