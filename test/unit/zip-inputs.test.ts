// The command's ZIP inputs (`matte remove photos.zip`) go through the server's one ZIP reader
// (zip-archive.adapter.ts): the same junk skipped, the same names refused, each photo read when sent.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectPhotos } from '../../src/cli/client/inputs.ts';
import { UsageError } from '../../src/cli/client/usage-error.ts';
import { makeZip } from '../helpers/images.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-zip-inputs-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const zipOf = (name: string, entries: { name: string; data: Buffer; deflate?: boolean }[]) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, makeZip(entries));
  return file;
};

describe('ZIP inputs of the command', () => {
  it('takes the photos, skips folders, macOS metadata and hidden files, and reads each photo when asked', async () => {
    const photo = Buffer.from('a photo, as far as the command knows');
    const file = zipOf('shop.zip', [
      { name: 'shoes/', data: Buffer.alloc(0) },
      { name: 'shoes/red.JPG', data: photo, deflate: true },
      { name: '__MACOSX/shoes/._red.JPG', data: Buffer.from('fork') },
      { name: 'shoes/.DS_Store', data: Buffer.from('junk') },
      { name: 'Thumbs.db', data: Buffer.from('junk') },
      { name: 'notes.txt', data: Buffer.from('not a photo') },
    ]);
    const photos = await collectPhotos([file]);
    expect(photos.map((p) => [p.key, p.name])).toEqual([['shop/shoes/red', 'red.JPG']]);
    expect(Buffer.from(await photos[0]!.read()).equals(photo)).toBe(true);
  });

  it('refuses a ZIP whose names would leave the output folder, or that is no ZIP, in one line', async () => {
    const escaping = zipOf('evil.zip', [{ name: '../../outside.jpg', data: Buffer.from('x') }]);
    await expect(collectPhotos([escaping])).rejects.toThrow(UsageError);
    await expect(collectPhotos([escaping])).rejects.toThrow(/outside\.jpg: Paths with "\.\." are not allowed/);
    const absolute = zipOf('abs.zip', [{ name: '/etc/x.jpg', data: Buffer.from('x') }]);
    await expect(collectPhotos([absolute])).rejects.toThrow(/Absolute paths/);
    const notZip = path.join(dir, 'fake.zip');
    fs.writeFileSync(notZip, 'no archive here');
    await expect(collectPhotos([notZip])).rejects.toThrow(/fake\.zip: The file is not a readable ZIP archive\./);
  });
});
