// Re-rendering from stored cut-outs: apply (saved, free) and preview (not saved).
import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { IdParams, ItemParams } from '../schemas/common.schemas.ts';
import { Job } from '../../domain/batch.schemas.ts';
import { APPLIED_HEADERS } from '../openapi.ts';
import { ApplyMultipart, ApplyRequest, PreviewRequest } from '../../domain/render.schemas.ts';
import { isMultipart, parseJsonField, receiveFormInMemory } from '../multipart.ts';
import { check } from '../validate.ts';
import { imageContent, jsonBody, multipartBodies, problems, type RouteApp } from './route-kit.ts';
import { FORMAT_FILES } from '@matte/client/formats';

export function registerRenderRoutes(app: RouteApp, c: Pick<Container, 'config' | 'render'>): void {
  multipartBodies.set('POST /v1/jobs/{id}/apply', ApplyMultipart);
  app.post(
    '/v1/jobs/:id/apply',
    {
      schema: {
        operationId: 'applySettings',
        summary: 'Re-render finished photos with changed settings, from their stored cut-outs (free, no model call)',
        description:
          'Each selected photo gets the patch over its own settings, is rendered from its stored cut-out, and its `rev` goes up; the ledger does not move. ' +
          'All new settings are checked before anything is rendered (400 changes nothing). 409 CONFLICT `NOT_DONE` when a named photo has not finished, or when none has. ' +
          'The answer is the Job; `X-Matte-Applied` counts the photos re-rendered, and `X-Matte-Skipped` those re-run or re-rendered by another request meanwhile, which keep that change.',
        tags: ['photos'],
        params: IdParams,
        body: jsonBody(ApplyRequest),
        response: { 200: Job, ...problems(400, 404, 409) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      let body = request.body;
      let image: Buffer | null = null;
      if (isMultipart(request)) {
        const form = await receiveFormInMemory(request, { fileSize: c.config.maxImageBytes, files: 1 });
        const fields = check(ApplyMultipart, form.fields, 'body');
        body = check(ApplyRequest, parseJsonField(fields.payload, 'payload'), 'body/payload');
        const file = form.files[0];
        if (file) {
          if (file.field !== 'image')
            throw new AppError('VALIDATION', 'The only file field is "image".', {
              errors: [{ path: `body/${file.field}`, message: 'unknown file field' }],
            });
          if (file.truncated)
            throw new AppError('VALIDATION', 'The background image is larger than the per-image limit.', {
              errors: [{ path: 'body/image', message: 'too large' }],
            });
          image = file.data;
        }
      }
      if (!body)
        throw new AppError('VALIDATION', 'A body is required: JSON, or multipart with `payload`.', {
          errors: [{ path: 'body', message: 'required' }],
        });
      const { job, applied, skipped } = await c.render.apply(request.auth.accountId, id, body, image);
      return reply.header(APPLIED_HEADERS.applied, applied).header(APPLIED_HEADERS.skipped, skipped).send(job);
    },
  );

  app.post(
    '/v1/jobs/:id/items/:itemId/preview',
    {
      schema: {
        operationId: 'previewItem',
        summary: 'Render one finished photo with other settings; nothing is saved',
        description:
          'Answers the image with `X-Output-Size: <width>x<height>`. 409 CONFLICT `NOT_DONE` when the photo has not finished. Free.',
        tags: ['photos'],
        params: ItemParams,
        body: PreviewRequest,
        response: {
          200: {
            description: 'The rendered image',
            headers: { 'X-Output-Size': { type: 'string', description: '<width>x<height> of the image' } },
            content: {
              ...imageContent(),
            },
          },
          ...problems(400, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { id, itemId } = request.params;
      const rendered = await c.render.preview(request.auth.accountId, id, itemId, request.body);
      reply.header('x-output-size', `${rendered.width}x${rendered.height}`).header('cache-control', 'no-store');
      return reply.type(FORMAT_FILES[rendered.format].contentType).send(rendered.output);
    },
  );
}
