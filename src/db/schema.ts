// Row types as Kysely sees them. Times are server-clock milliseconds (bigint columns, read as numbers
// on both dialects); booleans are 0/1 integers; structured values are JSON text, read as the value it holds,
// parsed and checked on the way out of the database (json-columns.ts).
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';
import type {
  ClaimReason,
  ClaimVerdict,
  EventName,
  ImageFormat,
  ItemReview,
  ItemStatus,
  JobStatus,
  Stage,
  Tier,
} from '../domain/batch.schemas.ts';
import type { DeliveryStatus } from '../domain/event.schemas.ts';
import type { ItemErrorCode } from '../errors.ts';
import type { Json, NullableJson } from './json-columns.ts';
import type { CreditPool, LedgerKind, LicenseStatus, PurchaseStatus } from '../domain/account-states.ts';

export interface AccountTable {
  id: string;
  email: string;
  plan_credits: number;
  pack_credits: number;
  created_at: number;
  /** scrypt hash (see services/password.ts); null until a password is set. */
  password_hash: string | null;
  license_id: string | null;
  /** Set when the account was deleted: its keys are revoked, its batches and files gone; the ledger stays. */
  deleted_at: number | null;
  /** Time of the account's newest ledger row in microseconds; each new row is stamped later than it. */
  ledger_clock_us: number;
}

interface ApiKeyTable {
  id: string;
  account_id: string;
  name: string;
  /** First characters of the secret, shown to the user to tell keys apart. */
  prefix: string;
  /** SHA-256 of the whole secret; the secret itself is never stored. */
  hash: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

interface JobTable {
  id: string;
  account_id: string;
  name: string | null;
  /** `batch` (POST /v1/jobs) or `image` (POST /v1/images, a one-photo call). */
  origin: Generated<'batch' | 'image'>;
  status: JobStatus;
  options: Json<'options'>;
  background_blob: string | null;
  webhook_url: string | null;
  webhook_secret: string | null;
  /** "all" or the event names the webhook is sent. */
  webhook_events: NullableJson<'webhook_events'>;
  /** Files the intake turned away, with why. */
  rejected: Json<'rejected'>;
  /** Last event sequence number handed out for this batch. */
  event_seq: number;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  cancel_requested_at: number | null;
  /** Set when the batch finishes: finished_at + result TTL. */
  expires_at: number | null;
}

interface ItemTable {
  id: string;
  job_id: string;
  account_id: string;
  position: number;
  name: string;
  status: ItemStatus;
  /** 1 when the photo belongs to the sample run of a sample start. */
  sample: number;
  tier: Tier;
  settings: Json<'settings'>;
  input_blob: string;
  input_bytes: number;
  source_width: number;
  source_height: number;
  source_format: string;
  error_code: ItemErrorCode | null;
  error_message: string | null;
  error_input_fault: number | null;
  review: ItemReview;
  refunded: number;
  /** Credits held for the current run, by pool. */
  reserved_plan: number;
  reserved_pack: number;
  /** Credits taken for the photo's current result, and the pools they came from. */
  charged: number;
  charged_plan: Generated<number>;
  charged_pack: Generated<number>;
  rev: number;
  attempts: number;
  stage: Stage | null;
  quality: NullableJson<'quality'>;
  meta: NullableJson<'meta'>;
  output_format: ImageFormat | null;
  /** Files of the current result (null: the fixed keys of blobKeys). */
  cutout_blob: string | null;
  output_blob: string | null;
  thumb_blob: string | null;
  /** The model's cut-out while the photo is touched up (cutout_blob is then the touched-up one); else null. */
  model_cutout_blob: string | null;
  /** What the seller's touch-up did, while there is one. */
  touch_up: NullableJson<'touch_up'>;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  stage_started_at: number | null;
  finished_at: number | null;
}

export interface LedgerTable {
  id: Generated<number>;
  account_id: string;
  job_id: string | null;
  item_id: string | null;
  kind: LedgerKind;
  pool: CreditPool;
  amount: number;
  units: number;
  balance_after: number;
  reason: string | null;
  created_at: number;
  /** Microseconds, strictly increasing per account: the order and the paging cursor of the ledger. */
  at_us: number;
}

interface JobEventTable {
  job_id: string;
  seq: number;
  event: EventName;
  at: number;
  data: Json<'data'>;
}

interface IdempotencyTable {
  account_id: string;
  scope: string;
  key: string;
  fingerprint: string;
  state: 'in_progress' | 'done';
  status_code: number | null;
  response: NullableJson<'response'>;
  created_at: number;
  /** While in progress: after this time the record is taken to be abandoned (its process died). */
  locked_until: number | null;
}

export interface LicenseTable {
  id: string;
  /** SHA-256 of the code; the code itself is shown once, to the operator who created it. */
  code_hash: string;
  code_prefix: string;
  tier: number;
  /** Plan credits per month. */
  allowance: number;
  /** Photos per batch under this licence (at most the service-wide 200). */
  job_limit: number;
  status: LicenseStatus;
  account_id: string | null;
  created_at: number;
  activated_at: number | null;
  next_refresh_at: number | null;
}

interface SessionTable {
  /** SHA-256 of the session cookie's value. */
  id: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface PurchaseTable {
  id: string;
  account_id: string;
  pack_id: string;
  credits: number;
  provider: string;
  provider_ref: string | null;
  status: PurchaseStatus;
  created_at: number;
  completed_at: number | null;
}

/** A subject's rate-limit windows (json-columns.ts, RateWindows). */
interface RateLimitTable {
  subject: string;
  windows: Json<'windows'>;
  updated_at: number;
}

interface ClaimTable {
  id: string;
  item_id: string;
  job_id: string;
  account_id: string;
  /** items.attempts when reported: the model run whose result is reported. */
  attempt: number;
  reason: ClaimReason;
  /** In cut-out pixels. */
  region: Json<'region'>;
  note: string | null;
  verdict: ClaimVerdict;
  confidence: number;
  evidence: string;
  metrics: Json<'metrics'>;
  /** Credits given back (0 when rejected). */
  credits: number;
  created_at: number;
}

interface WebhookDeliveryTable {
  id: string;
  job_id: string;
  /** The event's per-batch sequence number (job_events.seq). */
  event_seq: number;
  event: EventName;
  /** The batch's webhookUrl when the event happened. */
  url: string;
  /** The event object: the exact body of every attempt. */
  payload: Json<'payload'>;
  status: DeliveryStatus;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due; null once delivered or given up. */
  next_attempt_at: number | null;
  /** The process sending the current attempt, until lease_expires_at. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  delivered_at: number | null;
  given_up_at: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
}

export interface Database {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  jobs: JobTable;
  items: ItemTable;
  ledger: LedgerTable;
  job_events: JobEventTable;
  idempotency_keys: IdempotencyTable;
  licenses: LicenseTable;
  sessions: SessionTable;
  purchases: PurchaseTable;
  rate_limits: RateLimitTable;
  claims: ClaimTable;
  webhook_deliveries: WebhookDeliveryTable;
}

export type AccountRow = Selectable<AccountTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type JobRow = Selectable<JobTable>;
export type NewJob = Insertable<JobTable>;
export type JobUpdate = Updateable<JobTable>;
export type ItemRow = Selectable<ItemTable>;
export type NewItem = Insertable<ItemTable>;
export type ItemUpdate = Updateable<ItemTable>;
export type LedgerRow = Selectable<LedgerTable>;
export type IdempotencyRow = Selectable<IdempotencyTable>;
export type NewIdempotencyRecord = Insertable<IdempotencyTable>;
export type LicenseRow = Selectable<LicenseTable>;
export type SessionRow = Selectable<SessionTable>;
export type PurchaseRow = Selectable<PurchaseTable>;
export type ClaimRow = Selectable<ClaimTable>;
export type NewClaim = Insertable<ClaimTable>;
export type DeliveryRow = Selectable<WebhookDeliveryTable>;
export type NewDelivery = Insertable<WebhookDeliveryTable>;
