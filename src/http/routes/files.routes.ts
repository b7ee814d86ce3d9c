import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { ItemParams } from '../schemas/common.schemas.ts';
import { FileQuery, type FileQuery as FileQueryT } from '../schemas/requests.schemas.ts';
import { binary, IMAGE_MIME, problems } from './route-kit.ts';
import { resultFiles } from '../../services/blob-keys.ts';
import { presetLimit } from '../../presets/presets.ts';
import { outputName } from '../../services/job-view.ts';
import { attachment } from '../content-disposition.ts';
import type { ImageFormat } from '../schemas/common.schemas.ts';

export function registerFileRoutes(app: FastifyInstance, c: Container): void {
  const { blobs, codec } = c;
  app.get(
    '/v1/jobs/:id/items/:itemId/file',
    {
      schema: {
        operationId: 'getItemFile',
        summary: 'One file of a photo; every URL in a batch answer points here',
        description: '`format` converts the output (JPEG flattens onto white); `optimize` defaults to `marketplace` with `download`, `off` otherwise.',
        tags: ['files'],
        params: ItemParams,
        querystring: FileQuery,
        response: {
          200: {
            description: 'The file',
            content: { 'image/png': { schema: binary('PNG') }, 'image/jpeg': { schema: binary('JPEG') }, 'image/webp': { schema: binary('WebP') }, 'application/octet-stream': { schema: binary('Original upload') } },
          },
          ...problems(400, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { id, itemId } = request.params as { id: string; itemId: string };
      const q = request.query as FileQueryT;
      const item = await c.queries.getItem(request.auth.accountId, id, itemId);
      const variant = q.variant ?? 'output';
      if (variant !== 'output' && (q.format || q.optimize)) {
        throw new AppError('VALIDATION', '`format` and `optimize` apply to the output only.', { errors: [{ path: 'querystring/format', message: 'only with variant=output' }] });
      }
      const download = q.download !== undefined;
      reply.header('cache-control', 'private, max-age=300');
      switch (variant) {
        case 'input': {
          const data = await blobs.get(item.input_blob);
          const mime = (IMAGE_MIME as Record<string, string | undefined>)[item.source_format] ?? 'application/octet-stream';
          if (download) reply.header('content-disposition', attachment(item.name.split('/').pop()!));
          return reply.type(mime).send(data);
        }
        case 'input-thumb':
          return reply.type('image/webp').send(await c.inputThumbs.get(request.auth.accountId, item));
        default:
          break;
      }
      if (item.status !== 'done' || !item.output_format) {
        throw new AppError('CONFLICT', 'The photo has no output yet.', { reason: 'NOT_DONE', itemId });
      }
      const files = resultFiles(item);
      if (variant === 'thumb') return reply.type('image/webp').send(await c.outputThumbs.get(request.auth.accountId, item));
      if (variant === 'cutout') {
        if (download) reply.header('content-disposition', attachment(outputName(item.name.split('/').pop()!, 'png').replace(/\.png$/, '-cutout.png')));
        return reply.type('image/png').send(await blobs.get(files.cutout));
      }
      const stored = await blobs.get(files.output);
      const format = (q.format ?? item.output_format) as ImageFormat;
      const optimize = q.optimize ?? (download ? 'marketplace' : 'off');
      const data = await codec.exportOutput(stored, item.output_format as ImageFormat, format, optimize, presetLimit(item.settings));
      if (download) reply.header('content-disposition', attachment(outputName(item.name.split('/').pop()!, format)));
      return reply.type(IMAGE_MIME[format]).send(data);
    },
  );
}
