// A BlobStore in front of another that keeps what this process wrote in the last seconds, in memory,
// and answers reads of it from there. The common case it serves: a photo's result is written by the
// worker and read back moments later by the request that waits for it (POST /v1/images answers the
// stored file), a photo's upload is read back by the worker that claims it. From disk each read is a
// copy into fresh memory; from an object store it would be a round trip.
// Safe to keep because blobs are never rewritten in place: a result is written under a key of its own
// (blob-keys.ts) and replaced by a new key, never by new bytes under the old one. Deletes made through
// this store drop the copy at once; a delete made by another process leaves this process's copy
// readable until it expires (ttlMs), and only to a caller that still holds the key. Buffers are shared,
// not copied: what put() was given, and what get() answers, must not be changed afterwards (nothing in
// the service changes a blob's bytes once written).
import type { Readable } from 'node:stream';
import type { BlobStore } from '../adapters/blob-store.ts';

interface Entry {
  data: Buffer;
  at: number;
}

export class RecentBlobs implements BlobStore {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly inner: BlobStore,
    private readonly opts: { maxBytes: number; ttlMs: number },
    private readonly clock: () => number = Date.now,
  ) {}

  /** Bytes held in memory now. */
  get heldBytes(): number {
    return this.bytes;
  }

  check(): Promise<void> {
    return this.inner.check();
  }

  async put(key: string, data: Buffer): Promise<void> {
    this.forget(key);
    await this.inner.put(key, data);
    this.remember(key, data);
  }

  async putParts(key: string, parts: Promise<Uint8Array>[], whole: Promise<Buffer>): Promise<void> {
    this.forget(key);
    await this.inner.putParts(key, parts, whole);
    this.remember(key, await whole);
  }

  async copy(from: string, to: string): Promise<void> {
    this.forget(to);
    await this.inner.copy(from, to);
    // The same bytes under both names, counted twice against maxBytes: the bound errs on the safe side.
    const source = this.recent(from);
    if (source) this.remember(to, source);
  }

  async get(key: string): Promise<Buffer> {
    return this.recent(key) ?? this.inner.get(key);
  }

  async find(key: string): Promise<Buffer | undefined> {
    return this.recent(key) ?? this.inner.find(key);
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    const data = this.recent(key);
    return data ? { size: data.length } : this.inner.stat(key);
  }

  createReadStream(key: string): Readable {
    return this.inner.createReadStream(key);
  }

  async delete(key: string): Promise<void> {
    this.forget(key);
    await this.inner.delete(key);
  }

  async deletePrefix(prefix: string): Promise<void> {
    const start = prefix.endsWith('/') ? prefix : `${prefix}/`;
    for (const key of [...this.entries.keys()]) if (key === prefix || key.startsWith(start)) this.forget(key);
    await this.inner.deletePrefix(prefix);
  }

  private recent(key: string): Buffer | undefined {
    this.expire();
    return this.entries.get(key)?.data;
  }

  private remember(key: string, data: Buffer): void {
    // A blob larger than the whole room is only written, never kept.
    if (data.length > this.opts.maxBytes) return;
    this.entries.set(key, { data, at: this.clock() });
    this.bytes += data.length;
    this.expire();
    // Oldest first: a Map keeps insertion order.
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.opts.maxBytes) break;
      this.forget(oldest);
    }
  }

  private expire(): void {
    const cutoff = this.clock() - this.opts.ttlMs;
    for (const [key, entry] of this.entries) {
      if (entry.at > cutoff) break;
      this.forget(key);
    }
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.data.length;
  }
}
