import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { IdParams, ItemParams } from '../schemas/common.schemas.ts';
import { JobWithCharged, JobWithRetried, RetryRequest } from '../schemas/jobs.schemas.ts';
import { ItemRetryRequest } from '../schemas/items.schemas.ts';
import { Job } from '../../domain/batch.schemas.ts';
import { ReviewQueue } from '../../domain/review.schemas.ts';
import { jsonBody, problems, type RouteApp } from './route-kit.ts';
import { ReportRequest, ReportVerdict } from '../../domain/report.schemas.ts';
import { Type } from '@sinclair/typebox';

export function registerReviewRoutes(app: RouteApp, c: Pick<Container, 'reports' | 'reruns' | 'review'>): void {
  app.get(
    '/v1/jobs/:id/review',
    {
      schema: {
        operationId: 'getReviewQueue',
        summary: 'Photos flagged by the check (not charged) or failed: failures first, then the lowest scores',
        description:
          "What needs a person's eye in a batch: photos the check flagged (finished, not charged) and photos that failed, failures first, then the lowest scores, each with a one-line reason, its flags and what can be done (report, re-run).",
        tags: ['review'],
        params: IdParams,
        response: { 200: ReviewQueue, ...problems(404) },
      },
    },
    async (request) => c.review.queue(request.auth.accountId, request.params.id),
  );

  app.post(
    '/v1/jobs/:id/retry',
    {
      schema: {
        operationId: 'retryItems',
        summary: 'Run photos through the model again (one credit each; heavy tier two), reserved at once',
        description:
          'Body: `itemIds` (finished or failed photos) or `failed: true` (every failed photo), and `tier`. The batch runs again (`job.started`) and counts against the two running batches. ' +
          '409 CONFLICT `reason`: NOTHING_TO_RETRY, PHOTO_BUSY (a photo is queued or at the model), HELD (held for a sample run: continue instead), NOT_STARTED (a draft); 409 TOO_MANY_ACTIVE; 402 NO_CREDITS (nothing changed).',
        tags: ['review'],
        params: IdParams,
        body: RetryRequest,
        response: { 202: JobWithRetried, ...problems(400, 402, 404, 409) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if ((body.itemIds === undefined) === (body.failed === undefined)) {
        throw new AppError('VALIDATION', 'Give exactly one of itemIds and failed: true.', {
          errors: [{ path: 'body/itemIds', message: 'exactly one of itemIds, failed' }],
        });
      }
      const selection = body.itemIds ? { itemIds: body.itemIds } : { failed: true as const };
      return reply
        .code(202)
        .send(await c.reruns.retry(request.auth.accountId, request.params.id, selection, body.tier ?? 'light'));
    },
  );

  app.post(
    '/v1/jobs/:id/items/:itemId/retry',
    {
      schema: {
        operationId: 'retryItem',
        summary: 'Run one photo again (1 credit; heavy tier 2), reserved at once',
        description:
          '409 CONFLICT `reason`: PHOTO_BUSY (queued or at the model), HELD (held for a sample run), NOT_STARTED; 409 TOO_MANY_ACTIVE; 402 NO_CREDITS.',
        tags: ['review'],
        params: ItemParams,
        // Optional: no body is the light tier.
        body: jsonBody(ItemRetryRequest),
        response: { 202: JobWithCharged, ...problems(400, 402, 404, 409) },
      },
    },
    async (request, reply) => {
      const { id, itemId } = request.params;
      const tier = request.body?.tier ?? 'light';
      return reply.code(202).send(await c.reruns.retryItem(request.auth.accountId, id, itemId, tier));
    },
  );

  app.post(
    '/v1/jobs/:id/items/:itemId/report',
    {
      schema: {
        operationId: 'reportItem',
        summary: 'Report a broken result; refunded when the pixel check agrees',
        description:
          "The marked region is checked against the cut-out and the photo's colours (no model call). `background-kept`: kept pixels in the region have the colours of the background beside them, join the background the cut-out dropped and reach two pixels or more in from the cut. " +
          "`hole`: the region holds a transparent area enclosed by the product whose colours are not the background's. `missing-part`: the region's cut-away pixels have colours unlike the background and join the product. " +
          "`extra-object`: the region's kept pixels belong to parts apart from the main product that add up to at least 0.5% of its size (a few stray pixels are no object). `rough-edges`: the outline in the region is ragged and cuts against the colours. " +
          "An accepted report refunds the photo (ledger kind `claim`, to the pools it was charged from) and sets `refunded`; every report is kept in the photo's `claims`. " +
          'Two reports per result: a re-run makes a new result that may be reported again. ' +
          '409 CONFLICT `reason`: NOT_DONE (not finished, or failed), ALREADY_REFUNDED (flagged by the check or refunded by a report: nothing was charged), NO_ATTEMPTS_LEFT (two reports made). 400 when the region is not on the cut-out.',
        tags: ['review'],
        params: ItemParams,
        body: ReportRequest,
        response: {
          200: Type.Object({ job: Job, verdict: ReportVerdict }, { additionalProperties: false }),
          ...problems(400, 404, 409),
        },
      },
    },
    async (request) => {
      const { id, itemId } = request.params;
      return c.reports.report(request.auth.accountId, id, itemId, request.body);
    },
  );
}
