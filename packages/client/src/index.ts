// @matte/client: a typed client for the Matte API. Works in Node 20+ and in browsers.
export { MatteClient, createMatteClient, idempotencyKey } from './client.ts';
export type { Api, CutOut, HeavyModel, MatteClientOptions, PhotoInput } from './client.ts';
export { MatteApiError, MatteConnectionError, errorFromResponse, type Problem } from './errors.ts';
export { retryingFetch, safeToRepeat, type RetryOptions } from './retry.ts';
export { pacedFetch, type PaceOptions } from './pacing.ts';
export { followBatch, type BatchFollower, type BatchSnapshot, type BatchUpdate, type FollowOptions } from './events.ts';
export { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookEvent } from './webhooks.ts';
export type * from './types.ts';
export type { paths, components, operations, webhooks } from './schema.ts';
export {
  PATTERN_TOKENS,
  PatternError,
  UniqueNames,
  baseName,
  fillPattern,
  parsePattern,
  safePart,
  type PatternToken,
  type TokenValues,
} from './zip-names.ts';
export {
  FORMAT_FILES,
  OUTPUT_FORMATS,
  extensionOf,
  formatOfExtension,
  INPUT_EXTENSIONS,
  INPUT_FORMATS,
  INPUT_FORMATS_OR_ZIPS,
  INPUT_FORMATS_TEXT,
  isOutputFormat,
  type OutputFormat,
} from './formats.ts';
