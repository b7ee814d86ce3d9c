// One file of a photo (GET /v1/jobs/{id}/items/{itemId}/file): the upload as it came, the thumbnails,
// the cut-out, or the output, converted when asked. The route only shapes the answer.
import { AppError } from '../errors.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { ImageRenderer } from '../adapters/images/renderer.ts';
import type { ImageFormat, Optimize } from '../domain/batch.schemas.ts';
import type { ItemRow } from '../db/schema.ts';
import { presetLimit } from '../presets/presets.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import type { InputThumbnails } from './input-thumbnails.service.ts';
import type { OutputThumbnails } from './output-thumbnails.service.ts';
import { resultFiles } from './blob-keys.ts';
import { outputName } from './job-view.ts';

type FileVariant = 'input' | 'input-thumb' | 'output' | 'thumb' | 'cutout';

export interface FileRequest {
  variant?: FileVariant;
  format?: ImageFormat;
  optimize?: Optimize;
  /** The file is saved rather than shown: a file name goes with it, and the output defaults to `marketplace`. */
  download: boolean;
}

export interface FileAnswer {
  data: Buffer;
  /** An image format, or the upload's own (`source`) when the upload is sent as it came. */
  format: ImageFormat | 'webp' | { source: string };
  /** Set when the file is to be saved: the name to save it under. */
  fileName?: string;
}

export class FileService {
  constructor(
    private readonly deps: {
      blobs: BlobStore;
      renderer: Pick<ImageRenderer, 'exportOutput'>;
      queries: Pick<BatchQueries, 'getItem'>;
      inputThumbs: InputThumbnails;
      outputThumbs: OutputThumbnails;
    },
  ) {}

  /** A finished photo's output as stored (what its fileUrl answers without `format` or `optimize`). */
  storedOutput(item: ItemRow): Promise<Buffer> {
    return this.deps.blobs.get(resultFiles(item).output);
  }

  async get(accountId: string, jobId: string, itemId: string, request: FileRequest): Promise<FileAnswer> {
    const { blobs, queries } = this.deps;
    const item = await queries.getItem(accountId, jobId, itemId);
    const variant = request.variant ?? 'output';
    if (variant !== 'output' && (request.format || request.optimize)) {
      throw new AppError('VALIDATION', '`format` and `optimize` apply to the output only.', {
        errors: [{ path: 'querystring/format', message: 'only with variant=output' }],
      });
    }
    const baseName = item.name.split('/').pop()!;
    const named = (name: string) => (request.download ? { fileName: name } : {});
    if (variant === 'input')
      return { data: await blobs.get(item.input_blob), format: { source: item.source_format }, ...named(baseName) };
    if (variant === 'input-thumb') return { data: await this.deps.inputThumbs.get(accountId, item), format: 'webp' };
    if (item.status !== 'done' || !item.output_format) {
      throw new AppError('CONFLICT', 'The photo has no output yet.', { reason: 'NOT_DONE', itemId });
    }
    const files = resultFiles(item);
    if (variant === 'thumb') return { data: await this.deps.outputThumbs.get(accountId, item), format: 'webp' };
    if (variant === 'cutout')
      return {
        data: await blobs.get(files.cutout),
        format: 'png',
        ...named(outputName(baseName, 'png').replace(/\.png$/, '-cutout.png')),
      };
    const stored = await blobs.get(files.output);
    const storedFormat = item.output_format;
    const format = request.format ?? storedFormat;
    const optimize = request.optimize ?? (request.download ? 'marketplace' : 'off');
    const data = await this.deps.renderer.exportOutput(
      stored,
      storedFormat,
      format,
      optimize,
      presetLimit(item.settings),
    );
    return { data, format, ...named(outputName(baseName, format)) };
  }
}
