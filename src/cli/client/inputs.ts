// What `matte remove` sends: files, folders (recursively) and ZIPs (expanded here, so each photo in one can
// be skipped when its result is already in OUT). Each photo gets a stable key, the path of its result under
// OUT without the extension: a folder's photos keep their sub-folders, a ZIP's photos go in a folder named
// after it.
import fs from 'node:fs';
import path from 'node:path';
import { listZip, readZipEntry } from '../../adapters/zip-archive.adapter.ts';
import { UsageError } from './usage-error.ts';

export const PHOTO_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.webp']);
const MAX_ZIP_ENTRIES = 10_000;
// Larger than any photo the server takes (it says so per photo); a bound on what one entry may inflate to here.
const MAX_ZIP_ENTRY_BYTES = 1 << 30;

export interface PhotoSource {
  /** Result path under OUT, without extension (posix separators). */
  key: string;
  /** The name it is uploaded with. */
  name: string;
  /** Where it came from, for messages. */
  origin: string;
  read(): Promise<Uint8Array>;
}

const stripExt = (p: string) => p.slice(0, p.length - path.extname(p).length);
const posix = (p: string) => p.split(path.sep).join('/');

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** The photos of a ZIP, each read from it when sent; its entries judged by the server's ZIP rules (zip-archive.adapter.ts). */
async function zipPhotos(file: string, prefix: string): Promise<PhotoSource[]> {
  let entries: Awaited<ReturnType<typeof listZip>>;
  try {
    entries = await listZip(file, MAX_ZIP_ENTRIES);
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
  const refused = entries.find((e) => 'reason' in e);
  // A refused name (an absolute path, "..") would put a result outside OUT: the whole ZIP is refused.
  if (refused && 'reason' in refused) throw new UsageError(`${file}: ${refused.name}: ${refused.reason}`);
  return entries
    .filter((e) => PHOTO_EXTENSIONS.has(path.posix.extname(e.name).toLowerCase()))
    .map((entry) => ({
      key: `${prefix}/${stripExt(entry.name)}`,
      name: path.posix.basename(entry.name),
      origin: `${file}:${entry.name}`,
      read: () => readZipEntry(file, entry.name, MAX_ZIP_ENTRY_BYTES),
    }));
}

function fileSource(file: string, key: string): PhotoSource {
  return { key, name: path.basename(file), origin: file, read: () => fs.promises.readFile(file) };
}

/**
 * Every photo under `paths`: a file as it is (whatever its extension: the server says what it is not), a
 * folder's photos and ZIPs found recursively, a ZIP's photos. Keys are unique; a duplicate key is refused.
 */
export async function collectPhotos(paths: string[]): Promise<PhotoSource[]> {
  const out: PhotoSource[] = [];
  for (const given of paths) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(given);
    } catch {
      throw new UsageError(`${given}: no such file or folder`);
    }
    if (stat.isDirectory()) {
      for (const file of walk(given)) {
        const rel = posix(path.relative(given, file));
        const ext = path.extname(file).toLowerCase();
        if (ext === '.zip') out.push(...(await zipPhotos(file, stripExt(rel))));
        else if (PHOTO_EXTENSIONS.has(ext)) out.push(fileSource(file, stripExt(rel)));
      }
    } else if (path.extname(given).toLowerCase() === '.zip') {
      out.push(...(await zipPhotos(given, stripExt(path.basename(given)))));
    } else {
      out.push(fileSource(given, stripExt(path.basename(given))));
    }
  }
  const seen = new Map<string, string>();
  for (const p of out) {
    const before = seen.get(p.key.toLowerCase());
    if (before)
      throw new UsageError(
        `${p.origin} and ${before} would both be written as ${p.key}.*; rename one or run them apart`,
      );
    seen.set(p.key.toLowerCase(), p.origin);
  }
  return out;
}
