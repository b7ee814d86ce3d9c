// The things themselves, as TypeBox schemas: settings, photos, batches, quality. One source for the
// TypeScript types, request validation and the OpenAPI document; imported by http, services, the
// pipeline and adapters alike, and importing none of them. Objects are closed unless the spec marks them open.
import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox';
import { OUTPUT_FORMATS } from '@matte/client/formats';
import { ITEM_ERROR_CODES } from '../errors.ts';

const closed = { additionalProperties: false } as const;

/** A schema accepting exactly the strings of a closed list, in its order. */
export const oneOf = <T extends string>(values: readonly T[], options: SchemaOptions = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Int = (opts: object = {}) => Type.Integer(opts);
const Ms = (description: string) => Type.Integer({ minimum: 0, description });

export const BBox = Type.Object(
  { x: Type.Number(), y: Type.Number(), width: Type.Number(), height: Type.Number() },
  { ...closed, description: 'A region in cutout pixels.' },
);
export type BBox = Static<typeof BBox>;

export const Align = Type.Union([
  Type.Literal('center'),
  Type.Literal('top-left'),
  Type.Literal('top-right'),
  Type.Literal('bottom-left'),
  Type.Literal('bottom-right'),
]);
export type Align = Static<typeof Align>;

export const BackgroundMode = Type.Union([
  Type.Literal('transparent'),
  Type.Literal('white'),
  Type.Literal('solid'),
  Type.Literal('image'),
]);
export const Scale = Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(4)]);
export const Rotate = Type.Union([Type.Literal(0), Type.Literal(90), Type.Literal(180), Type.Literal(270)]);
export const ImageFormat = Type.Union(OUTPUT_FORMATS.map((f) => Type.Literal(f)));
export type ImageFormat = Static<typeof ImageFormat>;
export const Optimize = Type.Union([
  Type.Literal('marketplace'),
  Type.Literal('lossless'),
  Type.Literal('web'),
  Type.Literal('off'),
]);
export type Optimize = Static<typeof Optimize>;

const CustomSize = Type.Object(
  { width: Int({ minimum: 100, maximum: 8000 }), height: Int({ minimum: 100, maximum: 8000 }) },
  closed,
);

const settingsFields = {
  presetId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Marketplace preset id (GET /v1/presets), `original` or `custom`.',
  }),
  customSize: CustomSize,
  background: Type.Object(
    {
      mode: BackgroundMode,
      color: Type.Optional(Type.String({ pattern: '^#?[0-9A-Fa-f]{6}$', description: 'Hex colour for mode `solid`.' })),
    },
    closed,
  ),
  align: Align,
  scale: Scale,
  fill: Type.Number({ minimum: 0.5, maximum: 1, description: 'How much of the canvas the subject spans.' }),
  flip: Type.Boolean({ description: 'Mirror horizontally.' }),
  rotate: Rotate,
  foregroundScale: Type.Number({ minimum: 0.25, maximum: 1 }),
  sharpen: Type.Number({ minimum: 0, maximum: 100 }),
  brightness: Type.Number({ minimum: -30, maximum: 30 }),
  contrast: Type.Number({ minimum: -30, maximum: 30 }),
  saturation: Type.Number({ minimum: -50, maximum: 50 }),
};

export const JobDefaults = Type.Object(
  {
    presetId: Type.Optional(settingsFields.presetId),
    customSize: Type.Optional(settingsFields.customSize),
    background: Type.Optional(settingsFields.background),
    align: Type.Optional(settingsFields.align),
    scale: Type.Optional(settingsFields.scale),
    fill: Type.Optional(settingsFields.fill),
    flip: Type.Optional(settingsFields.flip),
    rotate: Type.Optional(settingsFields.rotate),
    foregroundScale: Type.Optional(settingsFields.foregroundScale),
    sharpen: Type.Optional(settingsFields.sharpen),
    brightness: Type.Optional(settingsFields.brightness),
    contrast: Type.Optional(settingsFields.contrast),
    saturation: Type.Optional(settingsFields.saturation),
    trial: Type.Optional(Int({ minimum: 1, maximum: 200, description: 'Alias of `sample`.' })),
  },
  {
    ...closed,
    description:
      'Settings every photo starts with; every field has a default (presetId `original`, background transparent, align center, scale 1, corrections 0).',
  },
);
export type JobDefaults = Static<typeof JobDefaults>;

export const Settings = Type.Object(
  {
    presetId: settingsFields.presetId,
    customSize: Type.Optional(settingsFields.customSize),
    background: Type.Object(
      {
        mode: BackgroundMode,
        color: Type.Optional(Type.String()),
        hasImage: Type.Boolean({ description: 'A background image is set (never returned).' }),
      },
      closed,
    ),
    align: Align,
    scale: Scale,
    fill: Type.Optional(settingsFields.fill),
    flip: Type.Optional(settingsFields.flip),
    rotate: Type.Optional(settingsFields.rotate),
    foregroundScale: Type.Optional(settingsFields.foregroundScale),
    sharpen: Type.Number(),
    brightness: Type.Number(),
    contrast: Type.Number(),
    saturation: Type.Number(),
  },
  { ...closed, description: 'How a photo is rendered; changing them never runs the model.' },
);
export type Settings = Static<typeof Settings>;

export const JobStatus = Type.Union(
  [
    Type.Literal('draft'),
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('paused'),
    Type.Literal('done'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
  ],
  {
    description:
      'draft = photos still being added, nothing charged; paused = queued photos finished, some still held (a stopped batch is paused); failed = every photo failed; cancelled = a one-photo request whose photo never started.',
  },
);
export type JobStatus = Static<typeof JobStatus>;
export const ItemStatus = Type.Union(
  [
    Type.Literal('held'),
    Type.Literal('pending'),
    Type.Literal('processing'),
    Type.Literal('done'),
    Type.Literal('failed'),
  ],
  {
    description:
      'held = waiting (a draft, a sample run or a stopped batch; photos are held when added); pending = queued; processing = at the model.',
  },
);
export type ItemStatus = Static<typeof ItemStatus>;
export const Stage = Type.Union([
  Type.Literal('decode'),
  Type.Literal('inference'),
  Type.Literal('diagnose'),
  Type.Literal('compose'),
  Type.Literal('encode'),
]);
export type Stage = Static<typeof Stage>;
export const Tier = Type.Union([Type.Literal('light'), Type.Literal('heavy')], {
  description:
    'light = one pass of the model (1 credit); heavy = the strongest model this server runs (2 credits; chosen per photo on a re-run): its heavy model when the operator configured one, else the same model as light.',
});
export type Tier = Static<typeof Tier>;
export const EventName = Type.Union([
  Type.Literal('job.started'),
  Type.Literal('item.done'),
  Type.Literal('item.needs_review'),
  Type.Literal('item.failed'),
  Type.Literal('job.paused'),
  Type.Literal('job.done'),
]);
export type EventName = Static<typeof EventName>;

export const Counts = Type.Object(
  {
    total: Int(),
    held: Int(),
    pending: Int(),
    processing: Int(),
    done: Int(),
    failed: Int(),
    refunded: Int({ description: 'Finished photos that were not charged.' }),
  },
  { ...closed, examples: [{ total: 3, held: 2, pending: 0, processing: 0, done: 1, failed: 0, refunded: 0 }] },
);
export type Counts = Static<typeof Counts>;

export const Estimate = Type.Object(
  {
    perImageMs: Int({ description: 'Recent average time a photo takes.' }),
    remainingMs: Int({ description: 'Rough time to finish what is queued or in flight.' }),
    heldMs: Int({ description: 'Rough time the held photos would take once continued.' }),
    now: Ms('Server clock at serialisation.'),
  },
  closed,
);
export type Estimate = Static<typeof Estimate>;

export const Rejected = Type.Object({ name: Type.String(), reason: Type.String() }, closed);
export type Rejected = Static<typeof Rejected>;

export const ItemErrorCode = oneOf(ITEM_ERROR_CODES);
export const ItemError = Type.Object({ code: ItemErrorCode, message: Type.String() }, closed);

export const QualityFlagCode = Type.Union(
  [
    'background-kept',
    'hole-in-subject',
    'low-confidence',
    'subject-too-small',
    'colour-spill',
    'subject-touches-edge',
    'multiple-objects',
    'uncertain-edges',
    'halo',
  ].map((c) => Type.Literal(c)),
  {
    description:
      'What the automatic check saw. Flags point the seller at something unusual; they do not decide review (the score does). `subject-touches-edge` is raised whenever the subject runs along a side of the photo, usual or not: marketplaces refuse a product cut off by the frame.',
  },
);
export const QualityFlag = Type.Object(
  {
    code: QualityFlagCode,
    label: Type.String(),
    bbox: Nullable(BBox),
    severity: Type.Number({ minimum: 0, maximum: 1 }),
  },
  closed,
);
export type QualityFlag = Static<typeof QualityFlag>;
export const Quality = Type.Object(
  {
    score: Type.Number({ minimum: 0, maximum: 100, description: 'Lower = more likely broken.' }),
    flags: Type.Array(QualityFlag),
  },
  closed,
);
export type Quality = Static<typeof Quality>;

/** A photo's place in review: `red` when the check judged its cut-out broken. */
export const ITEM_REVIEWS = ['none', 'red'] as const;
export type ItemReview = (typeof ITEM_REVIEWS)[number];

/** What a seller may report of a result: the one list the report's schema, the pixel check and the studio read. */
export const CLAIM_REASONS = ['background-kept', 'missing-part', 'hole', 'extra-object', 'rough-edges'] as const;
export type ClaimReason = (typeof CLAIM_REASONS)[number];
export const CLAIM_VERDICTS = ['accepted', 'rejected'] as const;
export type ClaimVerdict = (typeof CLAIM_VERDICTS)[number];

export const Claim = Type.Object(
  {
    reason: oneOf(CLAIM_REASONS),
    region: BBox,
    verdict: oneOf(CLAIM_VERDICTS),
    confidence: Type.Number(),
    evidence: Type.String(),
    at: Ms('When the report was judged.'),
  },
  closed,
);
export type Claim = Static<typeof Claim>;

const Dimensions = { width: Int(), height: Int() };

export const Compliance = Type.Object(
  {
    presetId: Type.String(),
    meets: Type.Boolean({ description: 'Every check passed.' }),
    checks: Type.Array(
      Type.Object(
        {
          check: Type.Union([
            Type.Literal('size'),
            Type.Literal('background'),
            Type.Literal('fill'),
            Type.Literal('bytes'),
          ]),
          ok: Type.Boolean(),
          expected: Type.String(),
          actual: Type.String(),
        },
        closed,
      ),
    ),
    fixed: Type.Array(Type.String(), { description: 'What was done automatically to meet the preset.' }),
  },
  {
    ...closed,
    description:
      'Whether the stored output meets its marketplace preset, checked on the encoded file: pixel size, pure white border, product fill, upload size.',
  },
);
export type Compliance = Static<typeof Compliance>;

export const ItemMeta = Type.Object(
  {
    timings: Type.Optional(
      Type.Object(
        {
          decode: Type.Number(),
          inference: Type.Number(),
          diagnose: Type.Number(),
          compose: Type.Number(),
          encode: Type.Number(),
          total: Type.Number(),
        },
        {
          ...closed,
          description:
            'Milliseconds per stage of the last run: decode (near 0 when the process that received the upload decoded it ahead), ' +
            "inference (the model's own run), diagnose (the automatic check; the cut-out is refined and written beside it), " +
            "compose (the rest of the cut-out, and drawing the output), encode (the output's encoding and thumbnail), total.",
        },
      ),
    ),
    output: Type.Optional(Type.Object({ ...Dimensions, format: ImageFormat, bytes: Int() }, closed)),
    source: Type.Optional(Type.Object({ ...Dimensions, format: Type.Optional(Type.String()) }, closed)),
    cutout: Type.Optional(Type.Object(Dimensions, closed)),
    bbox: Type.Optional(Nullable(BBox)),
    subjectFill: Type.Optional(Nullable(Type.Number())),
    warnings: Type.Optional(Type.Array(Type.String())),
    presetId: Type.Optional(Type.String()),
  },
  closed,
);
export type ItemMeta = Static<typeof ItemMeta>;

/**
 * ItemMeta as stored with the photo: the answer's members, plus the marketplace report of the last render
 * (served by GET …/compliance; the answer's ItemMeta stays as the specification closes it, and carries a
 * failed check as one of its `warnings`).
 */
export const StoredItemMeta = Type.Object({ ...ItemMeta.properties, compliance: Type.Optional(Compliance) }, closed);
export type StoredItemMeta = Static<typeof StoredItemMeta>;

/** What a photo's touch-up did (POST …/touch-up), as the photo answers it. */
export const TouchUp = Type.Object(
  {
    strokes: Int({ description: 'Strokes painted since the model made the cut-out.' }),
    updatedAt: Ms('Server clock of the last touch-up.'),
  },
  {
    ...closed,
    description:
      "Beyond the specification: present only while a seller's touch-up (POST …/touch-up) replaces the model's cut-out; DELETE …/touch-up or a re-run removes it. The photo's files (cutoutUrl, outputUrl, thumbnails, the batch ZIP) follow the touched-up cut-out; `quality`, reports and the charge stay the model's.",
  },
);
export type TouchUp = Static<typeof TouchUp>;

export const Item = Type.Object(
  {
    id: Type.String(),
    name: Type.String({ description: 'File name it was uploaded with (the path inside a ZIP).' }),
    status: ItemStatus,
    error: Type.Optional(ItemError),
    outputName: Type.Optional(Type.String()),
    outputUrl: Type.Optional(
      Type.String({
        description:
          'Current output; append `&format=png|jpeg|webp` to convert, `&download=1` for an attachment; same API key required.',
      }),
    ),
    pngUrl: Type.Optional(Type.String()),
    thumbUrl: Type.Optional(Type.String()),
    inputThumbUrl: Type.Optional(Type.String()),
    cutoutUrl: Type.Optional(Type.String()),
    inputUrl: Type.String(),
    quality: Type.Optional(Quality),
    review: oneOf(ITEM_REVIEWS, {
      description:
        'red: the automatic check judged the cut-out broken (quality.score below 50); the credit was refunded.',
    }),
    refunded: Type.Boolean({
      description: 'Not charged: flagged by the check, or a report the pixel check confirmed.',
    }),
    claims: Type.Array(Claim, {
      description:
        'Every report on this photo and its verdict, oldest first (all results, also those before a re-run).',
    }),
    canReport: Type.Boolean({
      description:
        'True when the photo is finished with an output, was charged (not refunded), and its current result has had fewer than two reports.',
    }),
    canRerun: Type.Boolean(),
    tier: Tier,
    credits: Int({
      description: 'What the photo costs: its tier price while waiting or when charged; 0 once refunded or failed.',
    }),
    settings: Settings,
    rev: Int({ description: 'Bumped on every render; cache-busts file URLs.' }),
    touchUp: Type.Optional(TouchUp),
    meta: Type.Optional(ItemMeta),
    stage: Type.Optional(Stage),
    stageStartedAt: Type.Optional(Ms('')),
    startedAt: Type.Optional(Ms('')),
    finishedAt: Type.Optional(Ms('')),
    updatedAt: Ms('Server clock of last change; use as `since`.'),
    attempts: Int(),
  },
  closed,
);
export type Item = Static<typeof Item>;

export const JobOptions = Type.Object(
  { sample: Type.Optional(Int({ description: 'Photos run first by a sample start.' })), defaults: Settings },
  closed,
);
export type JobOptions = Static<typeof JobOptions>;

const jobSummaryFields = {
  id: Type.String(),
  status: JobStatus,
  createdAt: Ms(''),
  updatedAt: Ms('Server clock of last change; pass back as `since`.'),
  finishedAt: Type.Optional(Ms('')),
  cancelRequestedAt: Type.Optional(Ms('')),
  options: JobOptions,
  counts: Counts,
  downloadUrl: Nullable(Type.String()),
  continueUrl: Nullable(Type.String()),
  estimate: Estimate,
};
export const JobSummary = Type.Object(jobSummaryFields, closed);
export type JobSummary = Static<typeof JobSummary>;

/** The members of Job, for the answers that add a member or two (http/schemas). */
export const jobFields = {
  ...jobSummaryFields,
  items: Type.Array(Item, { description: 'Every photo, or only those changed since `since` when `delta` is true.' }),
  delta: Type.Optional(Type.Boolean({ description: 'True for a `since` response: merge `items` by id.' })),
  rejected: Type.Array(Rejected),
};
export const Job = Type.Object(jobFields, closed);
export type Job = Static<typeof Job>;

export const WebhookEvents = Type.Union([Type.Literal('all'), Type.Array(EventName, { minItems: 1, maxItems: 6 })]);
export type WebhookEvents = Static<typeof WebhookEvents>;
