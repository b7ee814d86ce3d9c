// Input thumbnails made when first asked for: kept once made, and never left behind by a batch that
// went away meanwhile.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { FsBlobStore } from '../../src/adapters/blob-store.ts';
import { ImageRenderer } from '../../src/adapters/images/renderer.ts';
import { AppError, notFound } from '../../src/errors.ts';
import type { ItemRow } from '../../src/db/schema.ts';
import { blobKeys } from '../../src/services/blob-keys.ts';
import { InputThumbnails } from '../../src/services/input-thumbnails.service.ts';
import { productPhoto } from '../helpers/images.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function setup(exists: () => boolean) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-thumbs-'));
  dirs.push(dir);
  const blobs = new FsBlobStore(dir);
  const item = { id: 'img_1', job_id: 'job_1', input_blob: blobKeys.input('job_1', 'img_1') } as ItemRow;
  const queries = {
    getItem: async () => {
      if (!exists()) throw notFound('photo');
      return item;
    },
  };
  const renderer = new ImageRenderer(100_000_000);
  let made = 0;
  const inspector = { thumbnail: (data: Buffer) => (made++, renderer.thumbnail(data)) };
  return { dir, blobs, item, thumbs: new InputThumbnails({ blobs, inspector, queries }), made: () => made };
}

describe('input thumbnails', () => {
  it('are made from the upload when missing, kept, and read back after that', async () => {
    const s = await setup(() => true);
    await s.blobs.put(s.item.input_blob, await productPhoto(900, 600));
    const first = await s.thumbs.get('acc_1', s.item);
    expect(await sharp(first).metadata()).toMatchObject({ format: 'webp', width: 512, height: 341 });
    expect((await s.blobs.get(blobKeys.inputThumb('job_1', 'img_1'))).equals(first)).toBe(true);
    const second = await s.thumbs.get('acc_1', s.item);
    expect(second.equals(first)).toBe(true);
    expect(s.made()).toBe(1);
  });

  it('a batch deleted before or while the thumbnail is made: 404, and no file left behind', async () => {
    // Its files already gone.
    const gone = await setup(() => false);
    await expect(gone.thumbs.get('acc_1', gone.item)).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(gone.made()).toBe(0);
    // Deleted while the thumbnail was made: the upload was still there, the row no longer is.
    let alive = true;
    const racing = await setup(() => alive);
    await racing.blobs.put(racing.item.input_blob, await productPhoto(300, 200));
    const made = racing.thumbs.get('acc_1', racing.item);
    alive = false;
    await expect(made).rejects.toBeInstanceOf(AppError);
    expect(racing.made()).toBe(1);
    expect(await racing.blobs.stat(blobKeys.inputThumb('job_1', 'img_1'))).toBeUndefined();
  });

  it('a storage failure is not taken for a missing photo', async () => {
    const s = await setup(() => true);
    await s.blobs.put(s.item.input_blob, await productPhoto(300, 200));
    // The thumbnail's key is a directory: reading it fails with EISDIR, which must surface.
    fs.mkdirSync(path.join(s.dir, blobKeys.inputThumb('job_1', 'img_1')), { recursive: true });
    await expect(s.thumbs.get('acc_1', s.item)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});
