// A seller's touch-up of one finished photo: erase and restore strokes on its cut-out, and the way back to the
// model's cut-out (beyond the spec; docs/touch-up.md).
import type { Container } from '../../container.ts';
import { ItemParams } from '../schemas/common.schemas.ts';
import { Job } from '../../domain/batch.schemas.ts';
import { TouchUpRequest } from '../../domain/touch-up.schemas.ts';
import { problems, type RouteApp } from './route-kit.ts';

export function registerTouchUpRoutes(app: RouteApp, c: Pick<Container, 'touchUps'>): void {
  app.post(
    '/v1/jobs/:id/items/:itemId/touch-up',
    {
      schema: {
        operationId: 'touchUpItem',
        summary: "Erase or restore parts of a finished photo's cut-out with brush strokes (free, no model call)",
        description:
          "Paints the strokes, in order, on the photo's current cut-out: `erase` makes what the brush covers transparent, `restore` brings the photo back there, opaque. Points and `size` are in cut-out pixels (`meta.cutout`). " +
          "With `snap` (the default) each stroke follows the photo's edges: where a broad stroke spills over the edge of what it is laid on, the other side is left as it was, and the stroke may reach a little past its discs into what continues the region it is laid on. `snap: false` paints exactly the strokes' discs. " +
          "Strokes add up over requests. The touched-up cut-out becomes the photo's: `rev` goes up and `cutoutUrl`, `outputUrl`, `pngUrl`, the thumbnails, previews, apply and the batch ZIP follow it; the photo carries `touchUp` (strokes so far, when). " +
          "Free: no credit moves, and `quality` and reports stay the model's. A re-run replaces the cut-out and drops the touch-up; DELETE on this path brings back the model's cut-out. " +
          '400 VALIDATION names the field (an unknown mode, a size outside 1-1000, a stroke without points, a point that is not two numbers, more than 10,000 points in all); 409 CONFLICT `NOT_DONE` when the photo has not finished; nothing is applied then.',
        tags: ['photos'],
        params: ItemParams,
        body: TouchUpRequest,
        response: { 200: Job, ...problems(400, 404, 409, 415) },
      },
      // 10,000 points as JSON numbers with a few decimals: under 300 KB.
      bodyLimit: 1024 * 1024,
    },
    async (request) => {
      const { id, itemId } = request.params;
      return c.touchUps.touchUp(request.auth.accountId, id, itemId, request.body);
    },
  );

  app.delete(
    '/v1/jobs/:id/items/:itemId/touch-up',
    {
      schema: {
        operationId: 'revertTouchUp',
        summary: "Bring back the model's cut-out of a touched-up photo (free)",
        description:
          "Drops the photo's touch-up: its cut-out is the model's again, its output and thumbnails are rendered from it with its settings, `rev` goes up and `touchUp` is gone. A photo that is not touched up is answered as it is. 409 CONFLICT `NOT_DONE` when the photo has not finished.",
        tags: ['photos'],
        params: ItemParams,
        response: { 200: Job, ...problems(404, 409) },
      },
    },
    async (request) => {
      const { id, itemId } = request.params;
      return c.touchUps.revert(request.auth.accountId, id, itemId);
    },
  );
}
