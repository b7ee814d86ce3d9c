// The filesystem blob store: whole files or none, keys kept under the root, and copies that cost no bytes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/adapters/blob-store.ts';

const dirs: string[] = [];
function store(): { dir: string; blobs: FsBlobStore } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-blobs-'));
  dirs.push(dir);
  return { dir, blobs: new FsBlobStore(dir) };
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const leftovers = (dir: string) => fs.readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.tmp'));

describe('FsBlobStore', () => {
  it('check resolves while the root can be written, and rejects with the reason once it is gone', async () => {
    const { dir, blobs } = store();
    await expect(blobs.check()).resolves.toBeUndefined();
    fs.rmSync(dir, { recursive: true });
    await expect(blobs.check()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('put, get, find, stat and delete; a missing key is undefined to find and stat, an error to get', async () => {
    const { dir, blobs } = store();
    await blobs.put('a/b/c.png', Buffer.from('one'));
    expect((await blobs.get('a/b/c.png')).toString()).toBe('one');
    expect((await blobs.find('a/b/c.png'))?.toString()).toBe('one');
    expect(await blobs.stat('a/b/c.png')).toEqual({ size: 3 });
    expect(await blobs.find('a/b/none.png')).toBeUndefined();
    expect(await blobs.stat('a/b/none.png')).toBeUndefined();
    await expect(blobs.get('a/b/none.png')).rejects.toMatchObject({ code: 'ENOENT' });
    await blobs.delete('a/b/c.png');
    await blobs.delete('a/b/c.png');
    expect(await blobs.find('a/b/c.png')).toBeUndefined();
    expect(leftovers(dir)).toEqual([]);
  });

  it('writes large blobs whole, replaces a blob whole, and leaves no temporary file when the write fails', async () => {
    const { dir, blobs } = store();
    const big = Buffer.alloc(3_300_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
    await blobs.put('r/cutout.png', big);
    expect(Buffer.compare(await blobs.get('r/cutout.png'), big)).toBe(0);
    await blobs.put('r/cutout.png', Buffer.from('short'));
    expect((await blobs.get('r/cutout.png')).toString()).toBe('short');
    // The key is a folder: the rename fails after the bytes were written; the temporary file goes.
    fs.mkdirSync(path.join(dir, 'r/folder'));
    await expect(blobs.put('r/folder', big)).rejects.toThrow();
    expect(leftovers(dir)).toEqual([]);
  });

  it('putParts writes each part as soon as it and those before it are there, shows the blob only when whole, and stores nothing when a part fails', async () => {
    const { dir, blobs } = store();
    const deferred = () => {
      let resolve!: (v: Uint8Array) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<Uint8Array>((res, rej) => ((resolve = res), (reject = rej)));
      return { promise, resolve, reject };
    };
    const [a, b, c] = [deferred(), deferred(), deferred()];
    const tempFile = () => leftovers(dir).map((f) => path.join(dir, String(f)))[0];
    const writing = blobs.putParts('r/cutout.png', [a.promise, b.promise, c.promise], Promise.resolve(Buffer.alloc(0)));
    // The third part before the second: nothing past the first is written until the second is there.
    c.resolve(Buffer.from('-tail'));
    a.resolve(Buffer.from('head'));
    await new Promise((r) => setTimeout(r, 50));
    expect(fs.readFileSync(tempFile()).toString()).toBe('head');
    expect(await blobs.find('r/cutout.png')).toBeUndefined();
    b.resolve(Buffer.from('-middle'));
    await writing;
    expect((await blobs.get('r/cutout.png')).toString()).toBe('head-middle-tail');
    expect(leftovers(dir)).toEqual([]);

    // A part that fails (a band of the cut-out): the rejection is the caller's, and nothing is left.
    const [d, e] = [deferred(), deferred()];
    const failing = blobs.putParts('r/other.png', [d.promise, e.promise], Promise.resolve(Buffer.alloc(0)));
    d.resolve(Buffer.from('first'));
    e.reject(new Error('band failed'));
    await expect(failing).rejects.toThrow('band failed');
    expect(await blobs.find('r/other.png')).toBeUndefined();
    expect(leftovers(dir)).toEqual([]);
  });

  it('copy links the bytes: one file on disk, two names, each deleted on its own', async () => {
    const { dir, blobs } = store();
    await blobs.put('job/img/cutout.png', Buffer.from('pixels'));
    await blobs.put('job/img/output', Buffer.from('an older output'));
    // Replaces what the target held.
    await blobs.copy('job/img/cutout.png', 'job/img/output');
    expect((await blobs.get('job/img/output')).toString()).toBe('pixels');
    const a = fs.statSync(path.join(dir, 'job/img/cutout.png'));
    const b = fs.statSync(path.join(dir, 'job/img/output'));
    expect(b.ino).toBe(a.ino);
    expect(a.nlink).toBe(2);
    await blobs.delete('job/img/cutout.png');
    expect((await blobs.get('job/img/output')).toString()).toBe('pixels');
    // Into a folder that does not exist yet.
    await blobs.copy('job/img/output', 'other/img/output');
    expect((await blobs.get('other/img/output')).toString()).toBe('pixels');
    expect(leftovers(dir)).toEqual([]);
  });

  it('copy of a missing key fails and leaves nothing behind; keys never leave the root', async () => {
    const { dir, blobs } = store();
    await expect(blobs.copy('job/none.png', 'job/output')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await blobs.find('job/output')).toBeUndefined();
    expect(leftovers(dir)).toEqual([]);
    await blobs.put('x.png', Buffer.from('x'));
    await expect(blobs.copy('x.png', '../outside.png')).rejects.toThrow(/escapes the store/);
    await expect(blobs.copy('../../etc/passwd', 'y.png')).rejects.toThrow(/escapes the store/);
    await expect(blobs.put('../outside.png', Buffer.from('x'))).rejects.toThrow(/escapes the store/);
  });
});
