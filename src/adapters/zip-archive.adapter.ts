// Reads uploaded ZIPs entry by entry, defending against the classic archive attacks: path traversal
// (`../`, absolute names), bombs (declared totals checked before inflating anything, and yauzl's
// validateEntrySizes stops an entry that inflates past its declared size), and entry floods.
import yauzl from 'yauzl';
import type { Readable } from 'node:stream';
import { count } from '../domain/photo-refusals.ts';

export interface ZipLimits {
  maxEntries: number;
  maxTotalBytes: number;
  maxEntryBytes: number;
}

export type ZipEntry = { name: string; data: Buffer } | { name: string; reason: string };

export class ZipError extends Error {}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const EMPTY_ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

export function looksLikeZip(head: Buffer): boolean {
  return head.subarray(0, 4).equals(ZIP_MAGIC) || head.subarray(0, 4).equals(EMPTY_ZIP_MAGIC);
}

/** Entries that are not photos a person put there: folders, macOS metadata, hidden files. Skipped silently. */
function isNoise(name: string): boolean {
  if (name.endsWith('/')) return true;
  const base = name.split('/').pop() ?? '';
  return name.startsWith('__MACOSX/') || base.startsWith('.') || base === 'Thumbs.db' || base === 'desktop.ini';
}

/** A safe relative path, or the reason it is not. */
export function checkEntryName(raw: string): { name: string } | { reason: string } {
  const name = raw.replace(/\\/g, '/');
  if (name.length === 0 || name.length > 1024) return { reason: 'Entry name is empty or too long.' };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(name)) return { reason: 'Entry name contains control characters.' };
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name))
    return { reason: 'Absolute paths are not allowed inside a ZIP.' };
  if (name.split('/').some((part) => part === '..')) return { reason: 'Paths with ".." are not allowed inside a ZIP.' };
  return { name: name.replace(/^(\.\/)+/, '') };
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    // decodeStrings false: yauzl would otherwise abort the whole archive on one bad name; we judge names per entry.
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: false },
      (err, zip) => (err || !zip ? reject(new ZipError('The file is not a readable ZIP archive.')) : resolve(zip)),
    ),
  );
}

function readStream(zip: yauzl.ZipFile, entry: yauzl.Entry, cap: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream?: Readable) => {
      if (err || !stream) return reject(err ?? new Error('no stream'));
      const chunks: Buffer[] = [];
      let total = 0;
      stream.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > cap) {
          stream.destroy(new Error('entry larger than declared'));
          return;
        }
        chunks.push(chunk);
      });
      stream.on('error', reject);
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  });
}

/** A ZIP's entries as named inside it (the name decoded as its flag says), in the archive's order. */
async function entriesOf(zip: yauzl.ZipFile, maxEntries: number): Promise<{ entry: yauzl.Entry; rawName: string }[]> {
  if (zip.entryCount > maxEntries)
    throw new ZipError(`The ZIP has ${zip.entryCount} entries; at most ${maxEntries} are read.`);
  const entries: yauzl.Entry[] = await new Promise((resolve, reject) => {
    const all: yauzl.Entry[] = [];
    zip.on('entry', (e: yauzl.Entry) => {
      all.push(e);
      zip.readEntry();
    });
    zip.on('end', () => resolve(all));
    zip.on('error', () => reject(new ZipError('The ZIP archive is corrupt.')));
    zip.readEntry();
  });
  return entries.map((entry) => ({
    entry,
    rawName: (entry.fileName as unknown as Buffer).toString(
      (entry.generalPurposeBitFlag & 0x800) !== 0 ? 'utf8' : 'latin1',
    ),
  }));
}

/**
 * Every entry a person put in the ZIP, by the rules readZip applies (names checked, folders and metadata
 * skipped), without inflating any: a name and its size, or the reason it is refused.
 */
export async function listZip(
  file: string,
  maxEntries: number,
): Promise<({ name: string; size: number } | { name: string; reason: string })[]> {
  const zip = await openZip(file);
  try {
    const out: ({ name: string; size: number } | { name: string; reason: string })[] = [];
    for (const { entry, rawName } of await entriesOf(zip, maxEntries)) {
      const checked = checkEntryName(rawName);
      if ('reason' in checked) out.push({ name: rawName, reason: checked.reason });
      else if (!isNoise(checked.name)) out.push({ name: checked.name, size: entry.uncompressedSize });
    }
    return out;
  } finally {
    zip.close();
  }
}

/** One entry of a ZIP, by the name listZip gave it, read whole (at most `maxBytes`). */
export async function readZipEntry(file: string, name: string, maxBytes: number): Promise<Buffer> {
  const zip = await openZip(file);
  try {
    for (const { entry, rawName } of await entriesOf(zip, Infinity)) {
      const checked = checkEntryName(rawName);
      if ('name' in checked && checked.name === name) {
        if (entry.uncompressedSize > maxBytes) throw new ZipError(`${name} is larger than ${maxBytes} bytes.`);
        return await readStream(zip, entry, entry.uncompressedSize);
      }
    }
    throw new ZipError(`${name} is no longer in the ZIP.`);
  } finally {
    zip.close();
  }
}

export async function* readZip(file: string, limits: ZipLimits): AsyncGenerator<ZipEntry> {
  const zip = await openZip(file);
  try {
    const entries = await entriesOf(zip, limits.maxEntries);
    const declared = entries.reduce((sum, e) => sum + e.entry.uncompressedSize, 0);
    if (declared > limits.maxTotalBytes) {
      throw new ZipError(
        `The ZIP unpacks to ${count(declared)} bytes, more than the ${count(limits.maxTotalBytes)}-byte limit.`,
      );
    }
    let inflated = 0;
    for (const { entry, rawName } of entries) {
      const checked = checkEntryName(rawName);
      if ('reason' in checked) {
        yield { name: rawName, reason: checked.reason };
        continue;
      }
      if (isNoise(checked.name)) continue;
      if (entry.uncompressedSize > limits.maxEntryBytes) {
        yield { name: checked.name, reason: `File is larger than ${limits.maxEntryBytes} bytes.` };
        continue;
      }
      try {
        const data = await readStream(zip, entry, Math.min(limits.maxEntryBytes, entry.uncompressedSize));
        inflated += data.length;
        if (inflated > limits.maxTotalBytes) throw new ZipError('The ZIP unpacks to more than the size limit.');
        if (looksLikeZip(data))
          yield { name: checked.name, reason: 'A ZIP inside a ZIP is not read; add it as a file of its own.' };
        else yield { name: checked.name, data };
      } catch (err) {
        if (err instanceof ZipError) throw err;
        yield { name: checked.name, reason: 'Entry is corrupt or larger than its header declares.' };
      }
    }
  } finally {
    zip.close();
  }
}
