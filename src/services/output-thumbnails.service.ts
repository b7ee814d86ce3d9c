// The output thumbnail (thumbUrl): the worker stores it just after the photo is done (photo-worker.ts),
// off the answer's path. A request that comes before it is stored, or after storing it failed, gets one
// made from the output now, and kept.
import type { BlobStore } from '../adapters/blob-store.ts';
import type { ItemRow } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import { resultFiles } from './blob-keys.ts';

export class OutputThumbnails {
  constructor(
    private readonly deps: {
      blobs: BlobStore;
      renderer: { thumbnail(data: Buffer): Promise<Buffer> };
      queries: Pick<BatchQueries, 'getItem'>;
    },
  ) {}

  /** The thumbnail of a finished photo read with its account's scope (`item`). */
  async get(accountId: string, item: ItemRow): Promise<Buffer> {
    const { blobs, renderer, queries } = this.deps;
    const files = resultFiles(item);
    const stored = await blobs.find(files.thumb);
    if (stored) return stored;
    const output = await blobs.find(files.output);
    // Re-rendered or deleted since the row was read.
    if (!output) throw notFound('photo');
    const thumb = await renderer.thumbnail(output);
    await blobs.put(files.thumb, thumb);
    // Re-rendered (new files) or deleted meanwhile: this one must not stay behind its row.
    const now = await queries.getItem(accountId, item.job_id, item.id).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    });
    if (!now || resultFiles(now).thumb !== files.thumb) await blobs.delete(files.thumb);
    return thumb;
  }
}
