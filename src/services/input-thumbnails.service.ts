// The input thumbnail (inputThumbUrl): made at intake for photos added to a batch, so that it is there
// before the run, and made when first asked for where intake made none. POST /v1/images decodes its
// photo once, for the model, and leaves the thumbnail out of the answer's way: a second decode of the
// upload there cost the answer about 20 ms (measured, see the README's latency paragraph), and most
// callers of the one-photo shortcut never look at it.
import type { BlobStore } from '../adapters/blob-store.ts';
import type { ItemRow } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import { blobKeys } from './blob-keys.ts';
import type { PhotoInspector } from './intake.service.ts';

export class InputThumbnails {
  constructor(
    private readonly deps: {
      blobs: BlobStore;
      inspector: Pick<PhotoInspector, 'thumbnail'>;
      queries: Pick<BatchQueries, 'getItem'>;
    },
  ) {}

  /** The thumbnail of a photo read with its account's scope (`item`), made and stored if it is missing. */
  async get(accountId: string, item: ItemRow): Promise<Buffer> {
    const { blobs, inspector, queries } = this.deps;
    const key = blobKeys.inputThumb(item.job_id, item.id);
    const stored = await blobs.find(key);
    if (stored) return stored;
    const input = await blobs.find(item.input_blob);
    // The batch was deleted (or expired) since the photo was read.
    if (!input) throw notFound('photo');
    const thumb = await inspector.thumbnail(input);
    await blobs.put(key, thumb);
    // Deleted meanwhile: its files are gone, and this one must not stay behind alone.
    const still = await queries.getItem(accountId, item.job_id, item.id).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    });
    if (!still) {
      await blobs.delete(key);
      throw notFound('photo');
    }
    return thumb;
  }
}
