// HTTP shapes of the account: its answer and ledger (GET /v1/account, /v1/credits/ledger), and the studio's
// session operations: signing in, API keys, licences, credit packs, deleting the account.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, oneOf } from '../../domain/batch.schemas.ts';
import { CREDIT_POOLS, LEDGER_KINDS, LICENSE_STATUSES, PURCHASE_STATUSES } from '../../domain/account-states.ts';

const closed = { additionalProperties: false } as const;

export const SignInRequest = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { ...closed, description: 'Studio sign-in. Ten attempts per address in 15 minutes, then 429.' },
);
export type SignInRequest = Static<typeof SignInRequest>;

export const SessionInfo = Type.Object(
  {
    accountId: Type.String(),
    email: Type.String(),
    csrfToken: Type.String({
      description: 'Send as X-CSRF-Token on every request that changes something with this session.',
    }),
    expiresAt: Type.Integer({ description: 'Server-clock ms; sign in again after it.' }),
  },
  closed,
);

export const ApiKeyInfo = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String({
      description: 'The first characters of the secret, to tell keys apart (GET /v1/account auth.key).',
    }),
    state: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
    createdAt: Type.Integer(),
    revokedAt: Nullable(Type.Integer()),
    lastUsedAt: Nullable(Type.Integer({ description: 'Within a minute.' })),
  },
  closed,
);
export const ApiKeyList = Type.Object(
  { keys: Type.Array(ApiKeyInfo, { description: 'Active and revoked keys, oldest first.' }) },
  closed,
);
export const CreateKeyRequest = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) }, closed);
export type CreateKeyRequest = Static<typeof CreateKeyRequest>;
export const CreatedKey = Type.Object(
  {
    key: ApiKeyInfo,
    apiKey: Type.String({ description: 'The secret, shown only in this answer; only its hash is stored.' }),
  },
  closed,
);
export const KeyParams = Type.Object({ keyId: Type.String({ maxLength: 64 }) }, closed);

export const RedeemLicenseRequest = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 64, description: 'A licence code (lic_…) from the operator.' }) },
  closed,
);
export type RedeemLicenseRequest = Static<typeof RedeemLicenseRequest>;

export const CreditPack = Type.Object({ id: Type.String(), credits: Type.Integer() }, closed);
export const CreditPackList = Type.Object({ packs: Type.Array(CreditPack) }, closed);
export const PurchaseRequest = Type.Object({ packId: Type.String({ minLength: 1, maxLength: 64 }) }, closed);
export type PurchaseRequest = Static<typeof PurchaseRequest>;
export const Purchase = Type.Object(
  {
    id: Type.String(),
    packId: Type.String(),
    credits: Type.Integer(),
    status: oneOf(PURCHASE_STATUSES, {
      description:
        'pending until the payment provider (this installation: the operator) confirms it; completed adds the credits to the pack pool, once.',
    }),
    provider: Type.String(),
    instructions: Nullable(Type.String({ description: 'What happens next (in the answer to a purchase).' })),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  closed,
);
export const PurchaseList = Type.Object({ purchases: Type.Array(Purchase) }, closed);

export const DeleteAccountRequest = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: 1024, description: "The account's password, to confirm." }) },
  closed,
);
export type DeleteAccountRequest = Static<typeof DeleteAccountRequest>;

export const BatchLabelsQuery = Type.Object(
  {
    ids: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: '^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+){0,99}$',
      description: 'Comma-separated batch ids, at most 100.',
    }),
  },
  closed,
);
export type BatchLabelsQuery = Static<typeof BatchLabelsQuery>;
export const BatchLabels = Type.Object(
  {
    labels: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          name: Nullable(Type.String({ description: 'The name given at creation (CreateJobRequest `name`).' })),
          origin: Type.Union([Type.Literal('batch'), Type.Literal('image')], {
            description: '`batch`: made with POST /v1/jobs. `image`: the batch of a one-photo call (POST /v1/images).',
          }),
        },
        closed,
      ),
      { description: "The account's batches among `ids`; unknown ids are left out." },
    ),
  },
  closed,
);

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
          status: oneOf(LICENSE_STATUSES),
          allowance: Type.Integer(),
          jobLimit: Type.Integer(),
          nextRefreshAt: Nullable(Type.String()),
          activatedAt: Nullable(Type.String()),
        },
        closed,
      ),
    ),
    spendOrder: Type.Array(oneOf(CREDIT_POOLS)),
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
      description: `${LEDGER_KINDS.slice(0, -1).join(', ')} or ${LEDGER_KINDS.at(-1)}`,
    }),
    pool: oneOf(CREDIT_POOLS),
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
