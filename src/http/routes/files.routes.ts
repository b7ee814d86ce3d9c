import type { Container } from '../../container.ts';
import { Type } from '@sinclair/typebox';
import { ItemParams } from '../schemas/common.schemas.ts';
import { FileQuery } from '../schemas/items.schemas.ts';
import { Compliance, Nullable } from '../../domain/batch.schemas.ts';
import { binary, imageContent, problems, type RouteApp } from './route-kit.ts';
import { FORMAT_FILES, isOutputFormat } from '@matte/client/formats';
import { attachment } from '../content-disposition.ts';

export function registerFileRoutes(app: RouteApp, c: Pick<Container, 'files' | 'queries'>): void {
  app.get(
    '/v1/jobs/:id/items/:itemId/file',
    {
      schema: {
        operationId: 'getItemFile',
        summary: 'One file of a photo; every URL in a batch answer points here',
        description:
          '`format` converts the output (JPEG flattens onto white); `optimize` defaults to `marketplace` with `download`, `off` otherwise.',
        tags: ['files'],
        params: ItemParams,
        querystring: FileQuery,
        response: {
          200: {
            description: 'The file',
            content: {
              ...imageContent(),
              'application/octet-stream': { schema: binary('Original upload') },
            },
          },
          ...problems(400, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { id, itemId } = request.params;
      const q = request.query;
      const file = await c.files.get(request.auth.accountId, id, itemId, {
        variant: q.variant,
        format: q.format,
        optimize: q.optimize,
        download: q.download !== undefined,
      });
      reply.header('cache-control', 'private, max-age=300');
      if (file.fileName !== undefined) reply.header('content-disposition', attachment(file.fileName));
      const mime =
        typeof file.format === 'string'
          ? FORMAT_FILES[file.format].contentType
          : isOutputFormat(file.format.source)
            ? FORMAT_FILES[file.format.source].contentType
            : 'application/octet-stream';
      return reply.type(mime).send(file.data);
    },
  );

  app.get(
    '/v1/jobs/:id/items/:itemId/compliance',
    {
      schema: {
        operationId: 'getItemCompliance',
        summary: "Whether a photo's current output meets its marketplace preset, check by check",
        description:
          'Checked on the encoded file as it is uploaded: pixel size, a pure white border, how much of the canvas the product spans, and the upload limit; `fixed` says what the rendering did to meet the preset. ' +
          "`compliance` is null until the photo is rendered, and for the `original` and `custom` presets. A failed check also appears in the photo's `meta.warnings`. `rev` is the render it describes.",
        tags: ['files'],
        params: ItemParams,
        response: {
          200: Type.Object(
            { itemId: Type.String(), rev: Type.Integer(), compliance: Nullable(Compliance) },
            { additionalProperties: false },
          ),
          ...problems(400, 404),
        },
      },
    },
    async (request) => {
      const { id, itemId } = request.params;
      return c.queries.compliance(request.auth.accountId, id, itemId);
    },
  );
}
