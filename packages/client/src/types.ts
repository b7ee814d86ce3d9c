// Names for the shapes the helpers take and return, picked out of the generated schema.ts.
import type { components, paths, webhooks } from './schema.ts';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

export type Account = Json<paths['/v1/account']['get']['responses'][200]>;
export type Batch = Json<paths['/v1/jobs/{id}']['get']['responses'][200]>;
/** A batch as GET /v1/jobs/{id} answers it with every photo (`fields=full`, the default). */
export type FullBatch = Extract<Batch, { items: unknown }>;
export type BatchItem = FullBatch['items'][number];
export type BatchList = Json<paths['/v1/jobs']['get']['responses'][200]>;
export type BatchQuery = NonNullable<paths['/v1/jobs']['get']['parameters']['query']>;
export type CreateBatchRequest = NonNullable<Json<NonNullable<paths['/v1/jobs']['post']['requestBody']>>>;
export type CreatedBatch = Json<paths['/v1/jobs']['post']['responses'][201]>;
export type BatchDefaults = NonNullable<CreateBatchRequest['defaults']>;
export type StartRequest = NonNullable<Json<NonNullable<paths['/v1/jobs/{id}/start']['post']['requestBody']>>>;
export type AddedItems = Json<paths['/v1/jobs/{id}/items']['post']['responses'][200]>;
export type CancelledBatch = Json<paths['/v1/jobs/{id}/cancel']['post']['responses'][200]>;
export type ReviewQueue = Json<paths['/v1/jobs/{id}/review']['get']['responses'][200]>;
export type DownloadQuery = NonNullable<paths['/v1/jobs/{id}/download']['get']['parameters']['query']>;
export type FileQuery = NonNullable<paths['/v1/jobs/{id}/items/{itemId}/file']['get']['parameters']['query']>;
export type Presets = Json<paths['/v1/presets']['get']['responses'][200]>;
export type LedgerPage = Json<paths['/v1/credits/ledger']['get']['responses'][200]>;
export type ItemRetried = Json<paths['/v1/jobs/{id}/items/{itemId}/retry']['post']['responses'][202]>;
/** Brush strokes for a finished photo's cut-out (POST …/touch-up): `erase` or `restore`, snapped to edges by default. */
export type TouchUpRequest = Json<paths['/v1/jobs/{id}/items/{itemId}/touch-up']['post']['requestBody']>;
export type TouchUpStroke = TouchUpRequest['strokes'][number];
/** An event of a batch (SSE and webhooks): `job.started`, `item.done`… */
export type JobEvent = NonNullable<Json<NonNullable<webhooks['jobEvent']['post']['requestBody']>>>;
/** A studio session (POST /v1/session): who is signed in and the CSRF token its changes carry. */
export type StudioSession = Json<paths['/v1/session']['get']['responses'][200]>;
/** An API key as the studio lists it (never its secret). */
export type ApiKey = Json<paths['/v1/keys']['get']['responses'][200]>['keys'][number];
/** What a seller may report of a result (POST …/report): `background-kept`, `missing-part`… */
export type ClaimReason = components['schemas']['ClaimReason'];
