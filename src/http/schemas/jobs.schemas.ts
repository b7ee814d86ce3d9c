// HTTP shapes of jobs (batches): the create, start, list and get requests, re-runs, downloads, and the
// answers that are a job plus a member or two. The job itself is src/domain/batch.schemas.ts.
import { Type, type Static } from '@sinclair/typebox';
import { EventName, JobDefaults, JobStatus, Tier, WebhookEvents, jobFields } from '../../domain/batch.schemas.ts';
import { INPUT_FORMATS_TEXT, OUTPUT_FORMATS } from '@matte/client/formats';

const closed = { additionalProperties: false } as const;
const MAX_SAFE = 9007199254740991;
const Int = (opts: object = {}) => Type.Integer(opts);

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

export const CreateJobRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 120 })),
    defaults: Type.Optional(JobDefaults),
    webhookUrl: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: 'https URL on a public host; receives the selected events, signed.',
      }),
    ),
    webhookEvents: Type.Optional(
      Type.Array(EventName, { minItems: 1, maxItems: 6, description: 'Omitted = all six.' }),
    ),
  },
  {
    ...closed,
    examples: [
      {
        name: 'Spring shoes',
        defaults: { presetId: 'amazon-main', background: { mode: 'white' } },
        webhookUrl: 'https://shop.example.com/hooks/matte',
        webhookEvents: ['item.needs_review', 'job.done'],
      },
    ],
  },
);
export type CreateJobRequest = Static<typeof CreateJobRequest>;

export const CreateJobMultipart = Type.Object(
  {
    options: Type.Optional(Type.String({ description: 'JSON of the JobDefaults shape.' })),
    background: Type.Optional(
      Type.String({
        format: 'binary',
        description: `Background image for background.mode = image (${INPUT_FORMATS_TEXT}).`,
      }),
    ),
  },
  closed,
);

export const StartRequest = Type.Object(
  {
    sample: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 200,
        description: 'Run a spread sample of N photos first; the rest are held for continue.',
      }),
    ),
    trial: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Alias of sample.' })),
    defaults: Type.Optional(JobDefaults),
  },
  { ...closed, examples: [{ sample: 1 }, {}] },
);
export type StartRequest = Static<typeof StartRequest>;

export const ListJobsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    status: Type.Optional(JobStatus),
    before: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SAFE,
        description: 'Only batches created before this server time (ms); pass nextBefore to page.',
      }),
    ),
  },
  closed,
);
export type ListJobsQuery = Static<typeof ListJobsQuery>;

export const GetJobQuery = Type.Object(
  {
    since: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SAFE,
        description: 'Only photos changed at or after this server time; the answer has delta: true.',
      }),
    ),
    fields: Type.Optional(Type.Union([Type.Literal('full'), Type.Literal('summary')], { default: 'full' })),
    wait: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60,
        description:
          "Hold the answer up to this many seconds until something changes after `since` (or after the request arrived), or the batch stops running. A photo moving to its next stage ends a full read's wait (the photo shows its `stage`), not a `fields=summary` wait, which answers when the counts or the batch's own fields change. Each answer counts against the 60 requests a minute of the key.",
      }),
    ),
  },
  closed,
);
export type GetJobQuery = Static<typeof GetJobQuery>;

export const RetryRequest = Type.Object(
  {
    itemIds: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 200,
        description: 'Photos to run again (finished or failed).',
      }),
    ),
    failed: Type.Optional(Type.Literal(true, { description: 'Run every failed photo of the batch again.' })),
    tier: Type.Optional(Tier),
  },
  {
    ...closed,
    description:
      'Exactly one of `itemIds` and `failed: true`. `tier` light (1 credit a photo, the default) or heavy (2).',
  },
);
export type RetryRequest = Static<typeof RetryRequest>;

export const DownloadQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union(
        OUTPUT_FORMATS.map((f) => Type.Literal(f)),
        {
          description:
            'Converts every rendered file (also the preset folders); cut-outs stay PNG, originals as uploaded.',
        },
      ),
    ),
    pattern: Type.Optional(
      Type.String({
        maxLength: 80,
        description:
          'File names, default `{name}`. Tokens: `{name}` (uploaded name without folder and extension), `{index}` (position, counting from `start`), `{n}` (position from 1, zero-padded to the count), ' +
          '`{preset}`, `{w}`, `{h}` (the file\'s pixels), `{date}` (the batch\'s creation date, YYYY-MM-DD), `{sku}` (from `skus`). The pattern may not contain / \\ : * ? " < > | or "..". ' +
          'Characters from names and SKUs that an OS refuses become _. A pattern that gives two files the same name (compared case-insensitively) is refused (400); the default pattern numbers clashes instead: "a (2).png".',
      }),
    ),
    start: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'First `{index}`; default 1.' })),
    items: Type.Optional(
      Type.String({
        maxLength: 8000,
        description:
          'Comma-separated photo ids, in the order wanted; default every finished photo in upload order. A named photo not finished: 409 NOT_DONE.',
      }),
    ),
    optimize: Type.Optional(
      Type.Union([Type.Literal('marketplace'), Type.Literal('lossless'), Type.Literal('web'), Type.Literal('off')], {
        description:
          "`marketplace` (default): a file over its preset's upload limit (`maxBytes`) is re-encoded until it fits, others go as rendered; `off`: as rendered, fastest.",
      }),
    ),
    include: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'Comma-separated `rendered` (default), `cutouts`, `originals`; with more than one group (or extra presets) each is a folder.',
      }),
    ),
    presets: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Comma-separated preset ids to render for as well, from the stored cut-outs; a folder per preset.',
      }),
    ),
    skus: Type.Optional(
      Type.String({
        maxLength: 16000,
        description: 'JSON array of SKUs aligned with `items` (same length, same order), for `{sku}`.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DownloadQuery = Static<typeof DownloadQuery>;
