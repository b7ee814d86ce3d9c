import path from 'node:path';
import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { IdParams, ItemParams } from '../schemas/common.schemas.ts';
import { Job } from '../../domain/batch.schemas.ts';
import { JobWithAdded, JobWithRemoved } from '../schemas/jobs.schemas.ts';
import { DeleteItemsRequest, ItemsMultipart, UrlItemsRequest } from '../schemas/items.schemas.ts';
import { isMultipart, receiveForm } from '../multipart.ts';
import { sourcesFromFiles, sourcesFromUrls } from '../../services/photo-sources.ts';
import { jsonBody, multipartBodies, problems, type RouteApp } from './route-kit.ts';
import { MAX_PHOTOS_PER_BATCH } from '../../domain/batch-rules.ts';
import { intakeLimits } from '../photo-budget.ts';
import { INPUT_FORMATS_OR_ZIPS } from '@matte/client/formats';

export function registerItemRoutes(
  app: RouteApp,
  c: Pick<Container, 'accounts' | 'batches' | 'config' | 'intake' | 'limits' | 'queries'>,
): void {
  const { batches, config } = c;

  multipartBodies.set('POST /v1/jobs/{id}/items', ItemsMultipart);
  app.post(
    '/v1/jobs/:id/items',
    {
      schema: {
        operationId: 'addItems',
        summary: `Add photos to a draft (step 2 of 3): files (${INPUT_FORMATS_OR_ZIPS.replace(', or ', ', ')}) or links`,
        description: `Refused files and links come back in \`rejected\` with a reason; the rest is added. Counts against the key's hourly photo budget (2,000 by default; 429 RATE_LIMITED when it is spent, and photos past it are refused in \`rejected\`). Limits: ${MAX_PHOTOS_PER_BATCH} photos per batch (or the licence's lower batch limit); each uploaded file (ZIPs included) at most MATTE_MAX_UPLOAD_BYTES (default 256 MiB); each image at most MATTE_MAX_IMAGE_BYTES (default 50 MiB) and MATTE_MAX_INPUT_PIXELS (default 100 megapixels); a ZIP at most MATTE_MAX_ZIP_ENTRIES entries (default 1000) unpacking to at most MATTE_MAX_ZIP_UNCOMPRESSED_BYTES (default 1 GiB); entries with absolute or ".." paths are refused, folders inside are kept in the photo name; macOS metadata and hidden files are skipped. A ZIP inside a ZIP is refused.`,
        tags: ['photos'],
        params: IdParams,
        body: jsonBody(UrlItemsRequest),
        response: { 200: JobWithAdded, ...problems(400, 404, 409, 413, 415, 500, 507) },
      },
      // Multipart bodies stream to disk; the JSON form (links) stays small.
      bodyLimit: 1024 * 1024,
    },
    async (request) => {
      const { id } = request.params;
      const accountId = request.auth.accountId;
      // Refuse before reading a large upload into temp files.
      const job = await c.queries.requireJob(accountId, id);
      if (job.status !== 'draft')
        throw new AppError('NOT_DRAFT', 'Photos can only be added before the batch is started.');
      const limits = await intakeLimits(c, request);
      if (isMultipart(request)) {
        const form = await receiveForm(request, path.join(config.dataDir, 'tmp'), {
          fileSize: config.maxUploadBytes,
          files: 500,
        });
        try {
          if (Object.keys(form.fields).length) {
            throw new AppError('VALIDATION', 'Only files are accepted in this form.', {
              errors: Object.keys(form.fields).map((f) => ({ path: `body/${f}`, message: 'is not a known field' })),
            });
          }
          if (form.files.length === 0)
            throw new AppError('VALIDATION', 'Send at least one file in the "files" field.', {
              errors: [{ path: 'body/files', message: 'required' }],
            });
          return await c.intake.addPhotos(accountId, id, sourcesFromFiles(form.files, config), limits);
        } finally {
          await form.cleanup();
        }
      }
      const body = request.body;
      if (!body || ((body.urls ?? []).length === 0 && !body.zipUrl)) {
        throw new AppError('VALIDATION', 'Send files (multipart) or at least one link (urls or zipUrl).', {
          errors: [{ path: 'body/urls', message: 'must not be empty' }],
        });
      }
      return c.intake.addPhotos(accountId, id, sourcesFromUrls(body.urls ?? [], body.zipUrl, config), limits);
    },
  );

  app.delete(
    '/v1/jobs/:id/items',
    {
      schema: {
        operationId: 'deleteItems',
        summary: 'Remove several photos; photos in flight and unknown ids are skipped, nothing is refunded',
        description:
          'Removes the listed photos of a batch that is not running. Photos at the model and unknown ids are skipped and listed; a removed photo that was charged keeps its charge.',
        tags: ['photos'],
        params: IdParams,
        body: DeleteItemsRequest,
        response: { 200: JobWithRemoved, ...problems(400, 404) },
      },
    },
    async (request) => batches.deleteItems(request.auth.accountId, request.params.id, request.body.itemIds),
  );

  app.delete(
    '/v1/jobs/:id/items/:itemId',
    {
      schema: {
        operationId: 'deleteItem',
        summary: 'Remove one photo (409 while it is at the model)',
        description:
          'Removes one photo and its files. 409 while it is queued or at the model; a charged photo keeps its charge.',
        tags: ['photos'],
        params: ItemParams,
        response: { 200: Job, ...problems(404, 409) },
      },
    },
    async (request) => {
      const { id, itemId } = request.params;
      return batches.deleteItem(request.auth.accountId, id, itemId);
    },
  );
}
