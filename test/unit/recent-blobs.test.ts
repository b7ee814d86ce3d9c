// RecentBlobs: what this process just wrote is read back from memory, and everything else (and every
// delete) still goes to the store beneath; memory stays within its bound and its time.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/adapters/blob-store.ts';
import { RecentBlobs } from '../../src/runtime/recent-blobs.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup(opts = { maxBytes: 100, ttlMs: 1000 }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-recent-'));
  dirs.push(dir);
  const disk = new FsBlobStore(dir);
  let now = 0;
  const blobs = new RecentBlobs(disk, opts, () => now);
  return { dir, disk, blobs, later: (ms: number) => (now += ms) };
}

describe('RecentBlobs', () => {
  it('writes through to the store, and answers a fresh blob from memory (the same bytes)', async () => {
    const { dir, disk, blobs } = setup();
    const data = Buffer.from('fresh result');
    await blobs.put('jobs/j/a/out.png', data);
    expect((await disk.get('jobs/j/a/out.png')).toString()).toBe('fresh result');
    // Served from memory: the file's removal behind its back does not show yet.
    fs.rmSync(path.join(dir, 'jobs/j/a/out.png'));
    expect(await blobs.get('jobs/j/a/out.png')).toBe(data);
    expect(await blobs.find('jobs/j/a/out.png')).toBe(data);
    expect(await blobs.stat('jobs/j/a/out.png')).toEqual({ size: data.length });
    expect(blobs.heldBytes).toBe(data.length);
  });

  it('putParts writes the parts through to the store and keeps the whole it was given', async () => {
    const { dir, disk, blobs } = setup();
    const whole = Buffer.from('head-band-tail');
    await blobs.putParts(
      'jobs/j/a/cutout.png',
      [
        Promise.resolve(Buffer.from('head-')),
        Promise.resolve(Buffer.from('band-')),
        Promise.resolve(Buffer.from('tail')),
      ],
      Promise.resolve(whole),
    );
    expect((await disk.get('jobs/j/a/cutout.png')).toString()).toBe('head-band-tail');
    fs.rmSync(path.join(dir, 'jobs/j/a/cutout.png'));
    expect(await blobs.get('jobs/j/a/cutout.png')).toBe(whole);
    // A failed write keeps nothing.
    await expect(
      blobs.putParts('jobs/j/a/other.png', [Promise.reject(new Error('band failed'))], Promise.resolve(whole)),
    ).rejects.toThrow('band failed');
    expect(await blobs.find('jobs/j/a/other.png')).toBeUndefined();
    expect(blobs.heldBytes).toBe(whole.length);
  });

  it('reads what it did not write from the store beneath', async () => {
    const { disk, blobs } = setup();
    await disk.put('other/process.png', Buffer.from('elsewhere'));
    expect((await blobs.get('other/process.png')).toString()).toBe('elsewhere');
    expect(await blobs.find('missing')).toBeUndefined();
    expect(await blobs.stat('missing')).toBeUndefined();
    await expect(blobs.get('missing')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(blobs.heldBytes).toBe(0);
  });

  it('keeps a copy under its new name too, and forgets on delete and deletePrefix', async () => {
    const { disk, blobs } = setup();
    await blobs.put('jobs/j/a/cutout.png', Buffer.from('cut'));
    await blobs.copy('jobs/j/a/cutout.png', 'jobs/j/a/output');
    expect((await blobs.get('jobs/j/a/output')).toString()).toBe('cut');
    expect((await disk.get('jobs/j/a/output')).toString()).toBe('cut');
    await blobs.delete('jobs/j/a/output');
    await expect(blobs.get('jobs/j/a/output')).rejects.toMatchObject({ code: 'ENOENT' });
    await blobs.put('jobs/jx/b/keep.png', Buffer.from('other batch'));
    await blobs.deletePrefix('jobs/j');
    await expect(blobs.get('jobs/j/a/cutout.png')).rejects.toMatchObject({ code: 'ENOENT' });
    // A prefix is a folder: jobs/jx is not under jobs/j.
    expect((await blobs.get('jobs/jx/b/keep.png')).toString()).toBe('other batch');
    expect(blobs.heldBytes).toBe('other batch'.length);
  });

  it('holds no more than its bytes (oldest out first), nothing larger than them, and nothing past its time', async () => {
    const { dir, blobs, later } = setup({ maxBytes: 100, ttlMs: 1000 });
    await blobs.put('a', Buffer.alloc(40, 1));
    await blobs.put('b', Buffer.alloc(40, 2));
    await blobs.put('c', Buffer.alloc(40, 3));
    expect(blobs.heldBytes).toBe(80);
    await blobs.put('huge', Buffer.alloc(101, 4));
    expect(blobs.heldBytes).toBe(80);
    // Gone from memory, so a read goes to disk: remove the files to see which answers come from where.
    for (const key of ['a', 'b', 'c', 'huge']) fs.rmSync(path.join(dir, key));
    await expect(blobs.get('a')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(blobs.get('huge')).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await blobs.get('c'))[0]).toBe(3);
    later(1001);
    await expect(blobs.get('c')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(blobs.heldBytes).toBe(0);
  });

  it('a failed write keeps nothing, and a rewrite replaces what was held', async () => {
    const { blobs } = setup();
    await expect(blobs.put('../escape', Buffer.from('x'))).rejects.toThrow(/escapes/);
    expect(blobs.heldBytes).toBe(0);
    await blobs.put('k', Buffer.from('one'));
    await blobs.put('k', Buffer.from('three'));
    expect((await blobs.get('k')).toString()).toBe('three');
    expect(blobs.heldBytes).toBe(5);
  });
});
