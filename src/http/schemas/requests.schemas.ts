// Request bodies and queries, and the answers not covered by common.schemas.ts.
import { Type, type Static } from '@sinclair/typebox';
import { EventName, ImageFormat, Item, JobDefaults, JobStatus, Nullable, Optimize, Tier } from './common.schemas.ts';

const closed = { additionalProperties: false } as const;
const MAX_SAFE = 9007199254740991;

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
  closed,
);
export type CreateJobRequest = Static<typeof CreateJobRequest>;

export const CreateJobMultipart = Type.Object(
  {
    options: Type.Optional(Type.String({ description: 'JSON of the JobDefaults shape.' })),
    background: Type.Optional(
      Type.String({
        format: 'binary',
        description: 'Background image for background.mode = image (JPEG, PNG or WebP).',
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
  closed,
);
export type StartRequest = Static<typeof StartRequest>;

export const UrlItemsRequest = Type.Object(
  {
    urls: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 200, default: [] })),
    zipUrl: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { ...closed, description: 'Public http(s) links, fetched server-side; refusals come back in `rejected`.' },
);
export type UrlItemsRequest = Static<typeof UrlItemsRequest>;

export const ItemsMultipart = Type.Object(
  {
    files: Type.Array(Type.String({ format: 'binary' }), {
      description: 'JPEG, PNG, WebP, or ZIPs of them (folders inside included).',
    }),
  },
  closed,
);

export const DeleteItemsRequest = Type.Object(
  {
    itemIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 200,
      description: 'Photos to remove; photos in flight and unknown ids are skipped.',
    }),
  },
  closed,
);
export type DeleteItemsRequest = Static<typeof DeleteItemsRequest>;

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
          'Hold the answer up to this many seconds until something changes after `since` (or after the request arrived), or the batch stops running. Each answer counts against the 60 requests a minute of the key.',
      }),
    ),
  },
  closed,
);
export type GetJobQuery = Static<typeof GetJobQuery>;

export const FileQuery = Type.Object(
  {
    variant: Type.Optional(
      Type.Union(
        [
          Type.Literal('output'),
          Type.Literal('cutout'),
          Type.Literal('input'),
          Type.Literal('thumb'),
          Type.Literal('input-thumb'),
        ],
        { default: 'output' },
      ),
    ),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    download: Type.Optional(Type.String({ maxLength: 16, description: 'Any value: Content-Disposition attachment.' })),
    rev: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Cache-buster carried by the URLs in batch answers; ignored.' }),
    ),
  },
  closed,
);
export type FileQuery = Static<typeof FileQuery>;

export const LedgerQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    before: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'ISO 8601 date-time with timezone (microseconds allowed); pass nextBefore to page.',
      }),
    ),
    jobId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "Only this batch's rows (the studio's filter by batch); pages the same way.",
      }),
    ),
  },
  closed,
);
export type LedgerQuery = Static<typeof LedgerQuery>;

export const ImageRequest = Type.Object(
  {
    imageUrl: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: 'Public http(s) link to a JPEG, PNG or WebP, fetched server-side. Give this or imageBase64.',
      }),
    ),
    imageBase64: Type.Optional(
      Type.String({ description: 'The image bytes, base64 (standard or URL-safe alphabet, optional data: prefix).' }),
    ),
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'File name for the photo; default from the link, else "image".',
      }),
    ),
    settings: Type.Optional(JobDefaults),
    response: Type.Optional(Type.Union([Type.Literal('image'), Type.Literal('json')], { default: 'image' })),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    timeout: Type.Optional(Type.Integer({ minimum: 5, maximum: 60, default: 60 })),
  },
  { ...closed, description: 'JSON form of POST /v1/images: exactly one of imageUrl and imageBase64.' },
);
export type ImageRequest = Static<typeof ImageRequest>;

export const ImageMultipart = Type.Object(
  {
    file: Type.String({ format: 'binary' }),
    settings: Type.Optional(Type.String({ description: 'JSON of the JobDefaults shape.' })),
    response: Type.Optional(Type.Union([Type.Literal('image'), Type.Literal('json')], { default: 'image' })),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    timeout: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Seconds, 5-60, default 60.' })),
  },
  closed,
);
/** The text fields of the multipart form, as they are checked after parsing. */
export const ImageMultipartFields = Type.Object(
  {
    settings: Type.Optional(Type.String({ maxLength: 100_000 })),
    response: Type.Optional(Type.Union([Type.Literal('image'), Type.Literal('json')])),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    timeout: Type.Optional(Type.Integer({ minimum: 5, maximum: 60 })),
  },
  closed,
);

export const ImageResult = Type.Object(
  {
    jobId: Type.String(),
    itemId: Type.String(),
    status: Type.Union([Type.Literal('done'), Type.Literal('processing')]),
    charged: Type.Integer({ description: '1 for a clean result, 0 otherwise.' }),
    review: Type.Union([Type.Literal('none'), Type.Literal('red')]),
    refunded: Type.Boolean(),
    fileUrl: Type.String(),
    statusUrl: Type.String(),
    reviewUrl: Type.String(),
    item: Item,
  },
  closed,
);
export type ImageResult = Static<typeof ImageResult>;

export const Preset = Type.Object(
  {
    id: Type.String(),
    label: Type.String(),
    width: Type.Integer({ description: 'Canvas width; 0 = same as source.' }),
    height: Type.Integer(),
    fillPercent: Type.Number({
      description: 'Share of the canvas the subject spans; 0 = not set (the photo keeps its framing).',
    }),
    paddingPercent: Type.Number({ description: '0 = not set.' }),
    background: Type.Union([Type.Literal('white'), Type.Literal('transparent'), Type.Literal('inherit')]),
    format: Type.Union([Type.Literal('png'), Type.Literal('jpeg'), Type.Literal('webp'), Type.Literal('auto')]),
    quality: Type.Integer({ description: 'Encoder quality; 90 where the marketplace documents none.' }),
    align: Type.Union([Type.Literal('center'), Type.Literal('bottom')]),
    maxBytes: Type.Optional(Type.Integer({ description: 'Marketplace upload limit.' })),
    verified: Type.Boolean({ description: "True only where the marketplace's own documentation backs the figures." }),
    source: Type.Optional(Type.String()),
    sourceUrl: Type.Optional(Type.String()),
    notes: Type.Optional(Type.String()),
    verifiedAt: Type.Optional(Type.String()),
  },
  closed,
);
export const PresetList = Type.Object({ presets: Type.Array(Preset) }, closed);

export const Account = Type.Object(
  {
    credits: Type.Object(
      {
        total: Nullable(Type.Integer()),
        plan: Type.Integer(),
        pack: Type.Integer(),
        planResetsInDays: Nullable(Type.Integer()),
        expiring: Nullable(Type.Object({ credits: Type.Integer(), at: Type.String(), inDays: Type.Integer() }, closed)),
      },
      closed,
    ),
    license: Nullable(
      Type.Object(
        {
          tier: Type.Integer(),
          status: Type.Union([
            Type.Literal('purchased'),
            Type.Literal('active'),
            Type.Literal('deactivated'),
            Type.Literal('refunded'),
          ]),
          allowance: Type.Integer(),
          jobLimit: Type.Integer(),
          nextRefreshAt: Nullable(Type.String()),
          activatedAt: Nullable(Type.String()),
        },
        closed,
      ),
    ),
    spendOrder: Type.Array(Type.Union([Type.Literal('plan'), Type.Literal('pack')])),
    limits: Type.Object(
      {
        photosPerBatch: Type.Integer(),
        activeBatches: Type.Integer(),
        requestsPerMinute: Type.Integer(),
        photosPerHour: Type.Integer(),
        resultsKeptForHours: Type.Integer(),
      },
      closed,
    ),
    auth: Type.Object(
      {
        via: Type.Union([Type.Literal('key'), Type.Literal('session')]),
        key: Nullable(Type.String({ description: "The key's display prefix; null for a studio session." })),
      },
      closed,
    ),
  },
  closed,
);

export const LedgerEntry = Type.Object(
  {
    id: Type.Integer(),
    jobId: Nullable(Type.String()),
    itemId: Nullable(Type.String()),
    kind: Type.String({
      description: 'reserve, commit, release, claim, grant, purchase, welcome, refresh, expire or adjust',
    }),
    pool: Type.Union([Type.Literal('plan'), Type.Literal('pack')]),
    amount: Type.Integer({ description: 'Signed movement.' }),
    units: Type.Integer({
      description: 'Credits the row concerns, unsigned (a commit moves nothing: its units are the credits charged).',
    }),
    balanceAfter: Type.Integer(),
    reason: Nullable(Type.String()),
    createdAt: Type.String({
      format: 'date-time',
      description: 'ISO 8601 with microseconds; unique per account, and the cursor for `before`.',
    }),
  },
  closed,
);
export const LedgerPage = Type.Object(
  { entries: Type.Array(LedgerEntry), hasMore: Type.Boolean(), nextBefore: Nullable(Type.String()) },
  closed,
);

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

export const ItemRetryRequest = Type.Object(
  { tier: Type.Optional(Tier) },
  { ...closed, description: '`tier` light (1 credit, the default) or heavy (2 credits).' },
);
export type ItemRetryRequest = Static<typeof ItemRetryRequest>;

export const DownloadQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('png'), Type.Literal('jpeg'), Type.Literal('webp')], {
        description:
          'Converts every rendered file (also the preset folders); cut-outs stay PNG, originals as uploaded.',
      }),
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
