// The members of every resource, copied from the product specification's lists (its "Resources and their
// fields" and the answers under "Endpoints"), not from our own schemas: a member our schemas gain that the
// specification does not list is an extra member a strict client rejects, and this is what catches it.
// `required` are the members marked R; `open` objects may carry more (the specification marks Problem and
// JobEvent.data open).

export interface Shape {
  name: string;
  members: string[];
  required: string[];
  open?: boolean;
  /** The shape of a member's value (an object) or of each element (an array). */
  nested?: Record<string, Shape>;
}

const shape = (
  name: string,
  required: string[],
  optional: string[] = [],
  nested: Record<string, Shape> = {},
  open = false,
): Shape => ({ name, members: [...required, ...optional], required, nested, open });

export const BBox = shape('BBox', ['x', 'y', 'width', 'height']);
const Counts = shape('Counts', ['total', 'held', 'pending', 'processing', 'done', 'failed', 'refunded']);
const Estimate = shape('Estimate', ['perImageMs', 'remainingMs', 'heldMs', 'now']);
const Rejected = shape('Rejected', ['name', 'reason']);
const ItemError = shape('ItemError', ['code', 'message']);
const QualityFlag = shape('QualityFlag', ['code', 'label', 'bbox', 'severity'], [], { bbox: BBox });
const Quality = shape('Quality', ['score', 'flags'], [], { flags: QualityFlag });
const Claim = shape('Claim', ['reason', 'region', 'verdict', 'confidence', 'evidence', 'at'], [], {
  region: BBox,
});
const Size = shape('{width, height}', ['width', 'height']);
const ItemMeta = shape(
  'ItemMeta',
  [],
  ['timings', 'output', 'source', 'cutout', 'bbox', 'subjectFill', 'warnings', 'presetId'],
  {
    timings: shape('Timings', [], ['decode', 'inference', 'diagnose', 'compose', 'encode', 'total']),
    output: shape('ItemMeta.output', ['width', 'height', 'format', 'bytes']),
    source: shape('ItemMeta.source', ['width', 'height'], ['format']),
    cutout: shape('ItemMeta.cutout', ['width', 'height']),
    bbox: BBox,
  },
);
const Settings = shape(
  'Settings',
  ['presetId', 'background', 'align', 'scale', 'sharpen', 'brightness', 'contrast', 'saturation'],
  ['customSize', 'fill', 'flip', 'rotate', 'foregroundScale'],
  { customSize: Size, background: shape('Settings.background', ['mode', 'hasImage'], ['color']) },
);
const Item = shape(
  'Item',
  [
    'id',
    'name',
    'status',
    'inputUrl',
    'review',
    'refunded',
    'claims',
    'canReport',
    'canRerun',
    'tier',
    'credits',
    'settings',
    'rev',
    'updatedAt',
    'attempts',
  ],
  [
    'error',
    'outputName',
    'outputUrl',
    'pngUrl',
    'thumbUrl',
    'inputThumbUrl',
    'cutoutUrl',
    'quality',
    'meta',
    'stage',
    'stageStartedAt',
    'startedAt',
    'finishedAt',
    // Beyond the specification (issue 83): present only while a seller's touch-up replaces the model's cut-out,
    // so that an untouched photo has exactly the specification's members.
    'touchUp',
  ],
  {
    error: ItemError,
    quality: Quality,
    claims: Claim,
    settings: Settings,
    meta: ItemMeta,
    touchUp: shape('TouchUp', ['strokes', 'updatedAt']),
  },
);
const jobSummaryRequired = [
  'id',
  'status',
  'createdAt',
  'updatedAt',
  'options',
  'counts',
  'downloadUrl',
  'continueUrl',
  'estimate',
];
const jobNested = {
  options: shape('Job.options', ['defaults'], ['sample'], { defaults: Settings }),
  counts: Counts,
  estimate: Estimate,
  items: Item,
  rejected: Rejected,
};
export const JobSummary = shape('JobSummary', jobSummaryRequired, ['finishedAt', 'cancelRequestedAt'], jobNested);

/** Job, plus the members an answer adds (`added`, `removed`, …), each required where it is given. */
export const Job = (name = 'Job', extra: string[] = []) =>
  shape(
    name,
    [...jobSummaryRequired, 'items', 'rejected', ...extra],
    ['finishedAt', 'cancelRequestedAt', 'delta'],
    jobNested,
  );
export const JobCreated = shape(
  'JobCreated',
  Job().required,
  [...Job().members.filter((m) => !Job().required.includes(m)), 'webhookUrl', 'webhookSecret', 'webhookEvents'],
  jobNested,
);
export const JobList = shape('GET /v1/jobs', ['jobs', 'hasMore', 'nextBefore'], [], { jobs: JobSummary });

const ReviewEntry = shape(
  'ReviewEntry',
  [
    'id',
    'name',
    'kind',
    'reason',
    'code',
    'severity',
    'score',
    'bbox',
    'flags',
    'refunded',
    'credits',
    'canReport',
    'canRerun',
    'attempts',
  ],
  ['thumbUrl', 'outputUrl', 'cutoutUrl', 'inputThumbUrl'],
  { bbox: BBox, flags: QualityFlag },
);
export const ReviewQueue = shape(
  'ReviewQueue',
  ['jobId', 'status', 'counts', 'total', 'review', 'failed', 'items', 'updatedAt'],
  [],
  { counts: Counts, items: ReviewEntry },
);

const Preset = shape(
  'Preset',
  [
    'id',
    'label',
    'width',
    'height',
    'fillPercent',
    'paddingPercent',
    'background',
    'format',
    'quality',
    'align',
    'verified',
  ],
  ['maxBytes', 'source', 'sourceUrl', 'notes', 'verifiedAt'],
);
export const PresetList = shape('GET /v1/presets', ['presets'], [], { presets: Preset });

const License = shape('License', ['tier', 'status', 'allowance', 'jobLimit', 'nextRefreshAt', 'activatedAt']);
export const Account = shape('Account', ['credits', 'license', 'spendOrder', 'limits', 'auth'], [], {
  credits: shape('Account.credits', ['total', 'plan', 'pack', 'planResetsInDays', 'expiring'], [], {
    expiring: shape('Account.credits.expiring', ['credits', 'at', 'inDays']),
  }),
  license: License,
  limits: shape('Account.limits', [
    'photosPerBatch',
    'activeBatches',
    'requestsPerMinute',
    'photosPerHour',
    'resultsKeptForHours',
  ]),
  auth: shape('Account.auth', ['via', 'key']),
});

const LedgerEntry = shape('LedgerEntry', [
  'id',
  'jobId',
  'itemId',
  'kind',
  'pool',
  'amount',
  'units',
  'balanceAfter',
  'reason',
  'createdAt',
]);
export const LedgerPage = shape('GET /v1/credits/ledger', ['entries', 'hasMore', 'nextBefore'], [], {
  entries: LedgerEntry,
});

const JOB_EVENT_DATA = ['status', 'counts', 'downloadUrl', 'reviewUrl', 'continueUrl'];
const ITEM_EVENT_DATA = [
  'itemId',
  'name',
  'status',
  'review',
  'score',
  'credits',
  'attempts',
  'error',
  'outputUrl',
  'thumbUrl',
  'inputThumbUrl',
];
/** JobEvent; `data` is open, but carries at least the members the event table names. */
export const JobEvent = (event: string) =>
  shape('JobEvent', ['id', 'event', 'at', 'jobId', 'data'], [], {
    data: shape(
      `JobEvent.data (${event})`,
      event.startsWith('job.') ? JOB_EVENT_DATA : ITEM_EVENT_DATA,
      [],
      event.startsWith('job.') ? { counts: Counts } : {},
      true,
    ),
  });
const Delivery = (event: string) =>
  shape(
    'Delivery',
    [
      'id',
      'event',
      'status',
      'attempts',
      'nextAttemptAt',
      'deliveredAt',
      'givenUpAt',
      'lastStatus',
      'lastError',
      'createdAt',
      'payload',
    ],
    [],
    { payload: JobEvent(event) },
  );
export const Webhooks = (events: string[]) =>
  shape('GET /v1/jobs/{id}/webhooks', ['jobId', 'webhookUrl', 'events', 'maxAttempts', 'deliveries'], [], {
    deliveries: { ...Delivery(events[0]!), name: 'Delivery' },
  });

export const ImageResult = shape(
  'ImageResult',
  ['jobId', 'itemId', 'status', 'charged', 'review', 'refunded', 'fileUrl', 'statusUrl', 'reviewUrl', 'item'],
  [],
  { item: Item },
);

export const Report = shape('report answer', ['job', 'verdict'], [], {
  job: Job(),
  verdict: shape('verdict', ['accepted', 'reason', 'region', 'confidence', 'evidence', 'metrics'], [], {
    region: BBox,
  }),
});

export const Problem = shape('Problem', ['type', 'title', 'status', 'code'], [], {}, true);

/**
 * Every way `value` departs from `spec`: members the specification does not list (on closed objects), and
 * required members missing. Walks nested objects and arrays of objects. An empty list means it conforms.
 */
export function departures(value: unknown, spec: Shape, path = spec.name): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => departures(v, spec, `${path}[${i}]`));
  if (typeof value !== 'object') return [`${path}: expected an object, got ${typeof value}`];
  const out: string[] = [];
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record))
    if (!spec.open && !spec.members.includes(key)) out.push(`${path}.${key}: not a member of ${spec.name}`);
  for (const key of spec.required) if (!(key in record)) out.push(`${path}.${key}: required by ${spec.name}, missing`);
  for (const [key, inner] of Object.entries(spec.nested ?? {}))
    if (key in record) out.push(...departures(record[key], inner, `${path}.${key}`));
  return out;
}
