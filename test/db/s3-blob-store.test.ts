// The S3 blob store against a real S3-compatible server (s3rver): the same contract as the filesystem store,
// byte-for-byte round trips of single, multipart and streamed writes, server-side copies, prefix deletes
// that stop at the prefix, and a failed streamed write that leaves nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseS3Url, s3Client, S3BlobStore } from '../../src/adapters/s3-blob-store.ts';
import { startS3, type S3Server } from '../helpers/s3.ts';

let s3: S3Server;
let blobs: S3BlobStore;
const client = () =>
  s3Client({
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
beforeAll(async () => {
  s3 = await startS3();
  blobs = new S3BlobStore(client(), parseS3Url(`s3://${s3.bucket}/tenant-a/files`));
});
afterAll(() => s3?.close());

function noise(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  let x = seed >>> 0;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

describe('S3BlobStore on s3rver', () => {
  it('parses s3:// locations and refuses others', () => {
    expect(parseS3Url('s3://matte')).toEqual({ bucket: 'matte', prefix: '' });
    expect(parseS3Url('s3://matte/a/b/')).toEqual({ bucket: 'matte', prefix: 'a/b' });
    expect(() => parseS3Url('https://matte/a')).toThrow(/s3:\/\/bucket/);
    expect(() => parseS3Url('s3://')).toThrow();
  });

  it('put, get, find, stat and delete under the prefix; a missing key is undefined to find and stat, ENOENT to get', async () => {
    await blobs.put('job_1/a/input', Buffer.from('one'));
    expect((await blobs.get('job_1/a/input')).toString()).toBe('one');
    expect((await blobs.find('job_1/a/input'))?.toString()).toBe('one');
    expect(await blobs.stat('job_1/a/input')).toEqual({ size: 3 });
    expect(s3.objects()).toContain('tenant-a/files/job_1/a/input');
    expect(await blobs.find('job_1/none')).toBeUndefined();
    expect(await blobs.stat('job_1/none')).toBeUndefined();
    await expect(blobs.get('job_1/none')).rejects.toMatchObject({ code: 'ENOENT' });
    await blobs.delete('job_1/a/input');
    await blobs.delete('job_1/a/input');
    expect(await blobs.find('job_1/a/input')).toBeUndefined();
    await expect(blobs.put('../escape', Buffer.from('x'))).rejects.toThrow(/escapes the store/);
    await expect(blobs.put('a//b', Buffer.from('x'))).rejects.toThrow(/escapes the store/);
  });

  it('round-trips bytes exactly: a single PUT, a multipart upload, streamed parts, and a streamed read', async () => {
    const small = noise(1_000_003, 1);
    const large = noise(21 * 1024 * 1024 + 7, 2); // three parts of 8 MiB
    await blobs.put('job_2/small', small);
    await blobs.put('job_2/large', large);
    expect(Buffer.compare(await blobs.get('job_2/small'), small)).toBe(0);
    expect(Buffer.compare(await blobs.get('job_2/large'), large)).toBe(0);
    expect(await blobs.stat('job_2/large')).toEqual({ size: large.length });

    const parts = [noise(5_000_000, 3), noise(6_000_000, 4), noise(123, 5)];
    await blobs.putParts(
      'job_2/streamed',
      parts.map((p) => Promise.resolve(p)),
      Promise.resolve(Buffer.concat(parts)),
    );
    expect(Buffer.compare(await blobs.get('job_2/streamed'), Buffer.concat(parts))).toBe(0);

    const chunks: Buffer[] = [];
    for await (const chunk of blobs.createReadStream('job_2/large')) chunks.push(chunk as Buffer);
    expect(chunks.length).toBeGreaterThan(1);
    expect(Buffer.compare(Buffer.concat(chunks), large)).toBe(0);
    const reading = blobs.createReadStream('job_2/none');
    await expect(new Promise((_, reject) => reading.on('error', reject))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("a streamed write whose part fails stores nothing, and the failure is the part's own", async () => {
    // (Upload aborts the multipart upload; s3rver answers 405 to the abort, real S3 stores clean it up.)
    const failing = blobs.putParts(
      'job_3/cutout',
      [Promise.resolve(noise(9 * 1024 * 1024, 6)), Promise.reject(new Error('band failed'))],
      Promise.resolve(Buffer.alloc(0)),
    );
    await expect(failing).rejects.toThrow('band failed');
    expect(await blobs.find('job_3/cutout')).toBeUndefined();
  });

  it('copies on the server, replacing the target; each key is deleted on its own', async () => {
    const bytes = noise(300_000, 7);
    await blobs.put('job_4/img/cutout.png', bytes);
    await blobs.put('job_4/img/output', Buffer.from('older'));
    await blobs.copy('job_4/img/cutout.png', 'job_4/img/output');
    expect(Buffer.compare(await blobs.get('job_4/img/output'), bytes)).toBe(0);
    await blobs.delete('job_4/img/cutout.png');
    expect(Buffer.compare(await blobs.get('job_4/img/output'), bytes)).toBe(0);
    await expect(blobs.copy('job_4/none', 'job_4/x')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('deletes a prefix as a folder: everything under it, nothing that only starts with the same letters', async () => {
    for (const key of ['job_5/a/input', 'job_5/a/output', 'job_5/b/input', 'job_55/a/input'])
      await blobs.put(key, Buffer.from(key));
    await blobs.deletePrefix('job_5');
    expect(await blobs.find('job_5/a/input')).toBeUndefined();
    expect(await blobs.find('job_5/b/input')).toBeUndefined();
    expect((await blobs.get('job_55/a/input')).toString()).toBe('job_55/a/input');
    await blobs.deletePrefix('job_404');
  });

  it('says whether its bucket answers', async () => {
    await blobs.check();
    const other = new S3BlobStore(client(), parseS3Url('s3://no-such-bucket'));
    await expect(other.check()).rejects.toBeTruthy();
  });
});
