// GET /v1/jobs/{id}/download: the batch's ZIP, streamed.
import type { Container } from '../../container.ts';
import { IdParams } from '../schemas/common.schemas.ts';
import { DownloadQuery } from '../schemas/jobs.schemas.ts';
import { binary, problems, type RouteApp } from './route-kit.ts';
import { attachment } from '../content-disposition.ts';

export function registerDownloadRoutes(app: RouteApp, c: Pick<Container, 'downloads'>): void {
  app.get(
    '/v1/jobs/:id/download',
    {
      schema: {
        operationId: 'downloadJob',
        summary: 'ZIP of finished photos, streamed',
        description:
          'Every option is checked before the first byte (400, 404, 409 answer as problem+json). Files that need no conversion go in as stored; when every file does, the answer has a Content-Length. ' +
          '409 CONFLICT `NOT_DONE` when no photo has finished, or a photo named in `items` has not.',
        tags: ['files'],
        params: IdParams,
        querystring: DownloadQuery,
        response: {
          200: { description: 'The ZIP archive', content: { 'application/zip': { schema: binary('ZIP archive') } } },
          ...problems(400, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const zip = await c.downloads.archive(request.auth.accountId, id, request.query);
      reply
        .type('application/zip')
        .header('content-disposition', attachment(zip.fileName))
        .header('cache-control', 'private, no-store');
      if (zip.size !== undefined) reply.header('content-length', zip.size);
      return reply.send(zip.stream);
    },
  );
}
