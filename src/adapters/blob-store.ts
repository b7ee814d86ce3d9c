// Files live behind this small interface: the local filesystem now, an object store later.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { errorCode } from '../errors.ts';

export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  /**
   * A blob written as its parts arrive: each part, in order, as soon as it and every part before it
   * have resolved, so that writing the first overlaps making the rest. As with put, a reader never
   * sees part of it. If a part rejects, nothing is stored and that rejection is passed on.
   * `whole` is the parts joined (the caller makes it anyway); a store may keep it (RecentBlobs does).
   */
  putParts(key: string, parts: Promise<Uint8Array>[], whole: Promise<Buffer>): Promise<void>;
  /**
   * `to` gets the bytes of `from` (replacing whatever it held), without writing them again where the
   * store can: a hard link on a filesystem, a server-side copy in an object store. Either key may be
   * deleted afterwards without touching the other.
   */
  copy(from: string, to: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** Undefined when the blob does not exist (get throws then). */
  find(key: string): Promise<Buffer | undefined>;
  /** Undefined when the blob does not exist. */
  stat(key: string): Promise<{ size: number } | undefined>;
  createReadStream(key: string): Readable;
  /** Removes one blob; nothing happens when it does not exist. */
  delete(key: string): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
  /** Resolves when the store can be written now, rejects with the reason when not (readiness). */
  check(): Promise<void>;
}

/** What a file operation answers, or undefined when the file does not exist; other errors stay errors. */
async function unlessMissing<T>(operation: Promise<T>): Promise<T | undefined> {
  try {
    return await operation;
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * `parts` into a new file at `file`, each as soon as it and those before it are there.
 * fs.promises.writeFile writes 512 KiB at a time, each write a trip through libuv's pool (seven for a
 * 2000x2000 cut-out, behind whatever image work is queued there); a file handle's write takes a whole
 * part in one, looping only if the system writes less.
 */
async function writeParts(file: string, parts: (Uint8Array | Promise<Uint8Array>)[]): Promise<void> {
  const handle = await fsp.open(file, 'wx');
  try {
    for (const part of parts) {
      const data = await part;
      for (let at = 0; at < data.length;) at += (await handle.write(data, at, data.length - at)).bytesWritten;
    }
  } finally {
    await handle.close();
  }
}

/** Keys are relative paths made by the service (never by users); each is checked to stay under the root. */
export class FsBlobStore implements BlobStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    fs.mkdirSync(this.root, { recursive: true });
  }

  async check(): Promise<void> {
    await fs.promises.access(this.root, fs.constants.W_OK);
  }

  private resolve(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`blob key escapes the store: ${key}`);
    return full;
  }

  async put(key: string, data: Buffer): Promise<void> {
    await this.write(key, [data]);
  }

  /** The parts are written; `whole` is not needed here. */
  async putParts(key: string, parts: Promise<Uint8Array>[], _whole?: Promise<Buffer>): Promise<void> {
    // A part that fails while an earlier one is written is heard here, once, not as an unhandled rejection.
    for (const part of parts) part.catch(() => undefined);
    await this.write(key, parts);
  }

  private async write(key: string, parts: (Uint8Array | Promise<Uint8Array>)[]): Promise<void> {
    const full = this.resolve(key);
    await fsp.mkdir(path.dirname(full), { recursive: true });
    // Write then rename: a reader never sees half a file, and a crash leaves only a stray temp file.
    const tmp = `${full}.${randomUUID()}.tmp`;
    try {
      await writeParts(tmp, parts);
      await fsp.rename(tmp, full);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  }

  async copy(from: string, to: string): Promise<void> {
    const source = this.resolve(from);
    const full = this.resolve(to);
    await fsp.mkdir(path.dirname(full), { recursive: true });
    // Linked (or copied) under a temporary name, then renamed: as put, a reader never sees half a file.
    const tmp = `${full}.${randomUUID()}.tmp`;
    try {
      try {
        await fsp.link(source, tmp);
      } catch (err) {
        // Filesystems without hard links (or across devices): the bytes are copied.
        if (!['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK'].includes(errorCode(err) ?? '')) throw err;
        await fsp.copyFile(source, tmp);
      }
      await fsp.rename(tmp, full);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<Buffer> {
    return fsp.readFile(this.resolve(key));
  }

  async find(key: string): Promise<Buffer | undefined> {
    return unlessMissing(fsp.readFile(this.resolve(key)));
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    const s = await unlessMissing(fsp.stat(this.resolve(key)));
    return s && { size: s.size };
  }

  createReadStream(key: string): Readable {
    return fs.createReadStream(this.resolve(key));
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.resolve(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    await fsp.rm(this.resolve(prefix), { recursive: true, force: true });
  }
}

/** `store` with every failed operation reported to `onError` (a missing key is an answer, not a failure). */
export function reportingErrors(store: BlobStore, onError: (operation: string) => void): BlobStore {
  const watch = <T>(operation: string, run: () => Promise<T>): Promise<T> =>
    run().catch((err: unknown) => {
      if (errorCode(err) !== 'ENOENT') onError(operation);
      throw err;
    });
  return {
    put: (key, data) => watch('put', () => store.put(key, data)),
    putParts: (key, parts, whole) => watch('put', () => store.putParts(key, parts, whole)),
    copy: (from, to) => watch('copy', () => store.copy(from, to)),
    get: (key) => watch('get', () => store.get(key)),
    find: (key) => watch('get', () => store.find(key)),
    stat: (key) => watch('stat', () => store.stat(key)),
    createReadStream: (key) =>
      store.createReadStream(key).on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') onError('read');
      }),
    delete: (key) => watch('delete', () => store.delete(key)),
    deletePrefix: (prefix) => watch('delete', () => store.deletePrefix(prefix)),
    // Readiness reports its own failures: not counted as a failed operation.
    check: () => store.check(),
  };
}
