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
    const { sources: photos, skipped } = await collectPhotos([file]);
    expect(photos.map((p) => [p.key, p.name])).toEqual([['shop/shoes/red', 'red.JPG']]);
    // What is not a photo is named, system files are not.
    expect(skipped).toEqual([{ origin: `${file}/notes.txt`, reason: expect.stringMatching(/^not a photo/) }]);
    expect(Buffer.from(await photos[0]!.read()).equals(photo)).toBe(true);
  });

  it('leaves out a ZIP whose names would leave the output folder, or that is no ZIP, with its reason; the rest goes on', async () => {
    const escaping = zipOf('evil.zip', [{ name: '../../outside.jpg', data: Buffer.from('x') }]);
    const absolute = zipOf('abs.zip', [{ name: '/etc/x.jpg', data: Buffer.from('x') }]);
    const notZip = path.join(dir, 'fake.zip');
    fs.writeFileSync(notZip, 'no archive here');
    const good = zipOf('good.zip', [{ name: 'a.jpg', data: Buffer.from('x') }]);
    const { sources, skipped } = await collectPhotos([escaping, absolute, notZip, good]);
    expect(sources.map((s) => s.key)).toEqual(['good/a']);
    expect(skipped.map((s) => s.origin)).toEqual([escaping, absolute, notZip]);
    expect(skipped[0]!.reason).toMatch(/outside\.jpg: Paths with "\.\." are not allowed/);
    expect(skipped[1]!.reason).toMatch(/Absolute paths/);
    expect(skipped[2]!.reason).toBe('The file is not a readable ZIP archive.');
    // A path that is not there is still a mistake in the command: usage, exit 2.
    await expect(collectPhotos([path.join(dir, 'nothing-here')])).rejects.toThrow(UsageError);
  });
});
