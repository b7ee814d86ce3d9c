import { Type } from '@sinclair/typebox';
import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { IdParams } from '../schemas/common.schemas.ts';
import { Job, JobDefaults, JobSummary } from '../../domain/batch.schemas.ts';
import {
  CreateJobMultipart,
  CreateJobRequest,
  type CreateJobRequest as CreateJobRequestT,
  GetJobQuery,
  JobCreated,
  JobWithStopped,
  ListJobsQuery,
  StartRequest,
} from '../schemas/jobs.schemas.ts';
import { isMultipart, parseJsonField, receiveFormInMemory } from '../multipart.ts';
import { check } from '../validate.ts';
import { jsonBody, multipartBodies, problems, type RouteApp, sendStored } from './route-kit.ts';
import { fingerprint, IDEMPOTENCY_RULES } from '../../services/idempotency.service.ts';

export function registerJobRoutes(
  app: RouteApp,
  c: Pick<Container, 'batches' | 'clock' | 'config' | 'idempotency' | 'queries'>,
): void {
  const { batches, idempotency, config } = c;

  multipartBodies.set('POST /v1/jobs', CreateJobMultipart);
  app.post(
    '/v1/jobs',
    {
      schema: {
        operationId: 'createJob',
        summary: 'Create an empty batch (step 1 of 3; nothing charged)',
        description:
          'Makes an empty batch (`draft`) with the settings every photo starts with (`defaults`), an optional name and an optional webhook. Nothing is reserved or charged until the batch starts. A webhook URL must be https and public; its secret is shown only in this answer. Also takes multipart (fields as JSON strings, and a `backgroundImage` file).',
        tags: ['batches'],
        body: jsonBody(CreateJobRequest),
        response: { 201: JobCreated, ...problems(400, 503, 507) },
      },
    },
    async (request, reply) => {
      let input: CreateJobRequestT = request.body ?? {};
      let background: Buffer | null = null;
      if (isMultipart(request)) {
        const form = await receiveFormInMemory(request, { fileSize: config.maxImageBytes, files: 1 });
        check(
          Type.Object({ options: Type.Optional(Type.String()) }, { additionalProperties: false }),
          form.fields,
          'body',
        );
        const defaults = parseJsonField(form.fields.options, 'options');
        input = defaults === undefined ? {} : { defaults: check(JobDefaults, defaults, 'body/options') };
        const file = form.files[0];
        if (file) {
          if (file.field !== 'background')
            throw new AppError('VALIDATION', 'The only file field is "background".', {
              errors: [{ path: `body/${file.field}`, message: 'unknown file field' }],
            });
          if (file.truncated)
            throw new AppError('VALIDATION', 'The background image is larger than the per-image limit.', {
              errors: [{ path: 'body/background', message: 'too large' }],
            });
          background = file.data;
        }
      }
      const created = await batches.createJob(request.auth.accountId, input, background);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/v1/jobs',
    {
      schema: {
        operationId: 'listJobs',
        summary: 'List batches, newest first, without photos',
        description:
          "The account's batches, newest first, each without its photos (JobSummary). Page with `before` (the `nextBefore` of the previous page) and filter by `status`.",
        tags: ['batches'],
        querystring: ListJobsQuery,
        response: {
          200: Type.Object({
            jobs: Type.Array(JobSummary),
            hasMore: Type.Boolean(),
            nextBefore: Type.Union([Type.Integer(), Type.Null()]),
          }),
          ...problems(400),
        },
      },
    },
    async (request) => {
      const q = request.query;
      return c.queries.listJobs(request.auth.accountId, { limit: q.limit ?? 20, status: q.status, before: q.before });
    },
  );

  app.get(
    '/v1/jobs/:id',
    {
      schema: {
        operationId: 'getJob',
        summary: 'Read a batch; optionally only what changed since a time, optionally waiting for a change',
        description:
          'The batch with every photo. With `since` (a previous `updatedAt`), only the photos changed since then (`delta: true`); with `wait` (seconds, up to 60) as well, the answer waits for a change: a long-poll for clients that do not read the event stream. `fields=summary` leaves the photos out.',
        tags: ['batches'],
        params: IdParams,
        querystring: GetJobQuery,
        response: { 200: Type.Union([Job, JobSummary]), ...problems(400, 404) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const q = request.query;
      const accountId = request.auth.accountId;
      if (q.wait) {
        const arrived = c.clock();
        const abort = new AbortController();
        request.raw.once('close', () => abort.abort());
        // Something must change strictly after `since` (or after arrival): a client passing back updatedAt waits for news.
        await c.queries.waitForChange(accountId, id, (q.since ?? arrived) + 1, q.wait * 1000, {
          signal: abort.signal,
          stages: q.fields !== 'summary',
        });
      }
      if (q.fields === 'summary') return c.queries.getSummary(accountId, id);
      return c.queries.getJob(accountId, id, { since: q.since });
    },
  );

  app.delete(
    '/v1/jobs/:id',
    {
      schema: {
        operationId: 'deleteJob',
        summary: 'Delete a batch now (not while running)',
        description:
          'Deletes the batch with its photos, files, events and webhook deliveries. Refused with 409 while it is running: stop it first (POST /v1/jobs/{id}/cancel). What was charged stays charged.',
        tags: ['batches'],
        params: IdParams,
        response: { 204: Type.Null(), ...problems(404, 409) },
      },
    },
    async (request, reply) => {
      await batches.deleteJob(request.auth.accountId, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/jobs/:id/start',
    {
      schema: {
        operationId: 'startJob',
        summary: 'Charge and start a draft (step 3 of 3); Idempotency-Key honoured',
        description: `Reserves one credit per photo that runs, plan pool first, then pack. ${IDEMPOTENCY_RULES}`,
        tags: ['batches'],
        params: IdParams,
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:-]{8,128}$' })),
        }),
        body: jsonBody(StartRequest),
        response: { 202: Job, ...problems(400, 402, 404, 409, 503) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const body = request.body ?? {};
      const key = idempotency.checkKey(request.headers['idempotency-key']);
      const result = await idempotency.run(
        request.auth.accountId,
        `start:${id}`,
        key,
        fingerprint(JSON.stringify(body)),
        async () => {
          const job = await batches.start(request.auth.accountId, id, body);
          return {
            status: 202,
            headers: { 'content-type': 'application/json; charset=utf-8' },
            body: Buffer.from(JSON.stringify(job)),
          };
        },
      );
      return sendStored(reply, result);
    },
  );

  app.post(
    '/v1/jobs/:id/continue',
    {
      schema: {
        operationId: 'continueJob',
        summary: 'Run the held photos (after a sample run or a stop); charged here',
        description:
          'Runs the photos a sample run or a stop left `held`: their credits are reserved now (402 NO_CREDITS when the balance is short) and charged as each photo finishes clean. Idempotent with `Idempotency-Key`.',
        tags: ['batches'],
        params: IdParams,
        response: { 202: Job, ...problems(402, 404, 409) },
      },
    },
    async (request, reply) => reply.code(202).send(await batches.continue(request.auth.accountId, request.params.id)),
  );

  app.post(
    '/v1/jobs/:id/cancel',
    {
      schema: {
        operationId: 'cancelJob',
        summary: 'Stop a running batch; queued photos are held again and their credits released',
        description:
          'Stops a running batch: photos not yet at the model go back to `held` and their credits are released at once; a photo already at the model finishes and is charged as usual. Continue (POST /v1/jobs/{id}/continue) runs the held photos later.',
        tags: ['batches'],
        params: IdParams,
        response: { 200: JobWithStopped, ...problems(404, 409) },
      },
    },
    async (request) => batches.cancel(request.auth.accountId, request.params.id),
  );
}
