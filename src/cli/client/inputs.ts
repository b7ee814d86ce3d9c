// What `matte remove` sends: files, folders (recursively) and ZIPs (expanded here, so each photo in one can
// be skipped when its result is already in OUT). Each photo gets a stable key, the path of its result under
// OUT without the extension: a folder's photos keep their sub-folders, a ZIP's photos go in a folder named
// after it.
import fs from 'node:fs';
import path from 'node:path';
import { listZip, readZipEntry, ZipError } from '../../adapters/zip-archive.adapter.ts';
import { UsageError } from './usage-error.ts';
import { INPUT_EXTENSIONS, INPUT_FORMATS_TEXT } from '@matte/client/formats';
import { errorCode, errorMessage } from '../../errors.ts';

const PHOTO_EXTENSIONS = INPUT_EXTENSIONS;
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

/** A file left out, and why: one line of the summary. */
export interface SkippedFile {
  origin: string;
  reason: string;
}

/** The photos of a ZIP, each read from it when sent; its entries judged by the server's ZIP rules (zip-archive.adapter.ts). */
async function zipPhotos(file: string, prefix: string, skipped: SkippedFile[]): Promise<PhotoSource[]> {
  let entries: Awaited<ReturnType<typeof listZip>>;
  try {
    entries = await listZip(file, MAX_ZIP_ENTRIES);
  } catch (err) {
    skipped.push({ origin: file, reason: errorMessage(err) });
    return [];
  }
  const refused = entries.find((e) => 'reason' in e);
  // A refused name (an absolute path, "..") would put a result outside OUT: the whole ZIP is left out.
  if (refused && 'reason' in refused) {
    skipped.push({ origin: file, reason: `${refused.name}: ${refused.reason}` });
    return [];
  }
  const out: PhotoSource[] = [];
  for (const entry of entries) {
    if (PHOTO_EXTENSIONS.has(path.posix.extname(entry.name).toLowerCase()))
      out.push({
        key: `${prefix}/${stripExt(entry.name)}`,
        name: path.posix.basename(entry.name),
        origin: `${file}/${entry.name}`,
        read: () =>
          readZipEntry(file, entry.name, MAX_ZIP_ENTRY_BYTES).catch((err: unknown) => {
            // The ZIP's own refusals say what is wrong; anything else is an entry that does not inflate.
            throw err instanceof ZipError ? err : new Error(`the ZIP entry is damaged (${errorMessage(err)})`);
          }),
      });
    else if (!isJunk(entry.name)) skipped.push({ origin: `${file}/${entry.name}`, reason: UNSUPPORTED });
  }
  return out;
}

/** Files a system leaves beside photos, passed over without a word: hidden files, macOS forks, Windows thumbnails. */
function isJunk(name: string): boolean {
  const base = path.posix.basename(name);
  return base.startsWith('.') || name.startsWith('__MACOSX/') || /^(thumbs\.db|desktop\.ini)$/i.test(base);
}

const UNSUPPORTED = `not a photo Matte takes (${INPUT_FORMATS_TEXT}, or a ZIP of them)`;

function fileSource(file: string, key: string): PhotoSource {
  return { key, name: path.basename(file), origin: file, read: () => fs.promises.readFile(file) };
}

/** Whether `file` can be read (its permissions, a broken link): a file that cannot is left out, with the reason. */
function unreadable(file: string): string | null {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return null;
  } catch (err) {
    return `cannot be read (${errorCode(err) ?? errorMessage(err)})`;
  }
}

/**
 * Every photo under `paths`: a file as it is (whatever its extension: the server says what it is not), a
 * folder's photos and ZIPs found recursively, a ZIP's photos. Keys are unique; a duplicate key is refused.
 * A path that does not exist is a usage error; a file that cannot be read, a ZIP that cannot be opened and a
 * file in a folder or ZIP that is not a photo are left out, each with its reason, and the rest goes on.
 */
export async function collectPhotos(paths: string[]): Promise<{ sources: PhotoSource[]; skipped: SkippedFile[] }> {
  const out: PhotoSource[] = [];
  const skipped: SkippedFile[] = [];
  const take = async (file: string, key: string, inFolder: boolean) => {
    const ext = path.extname(file).toLowerCase();
    const why = unreadable(file);
    if (why) skipped.push({ origin: file, reason: why });
    else if (ext === '.zip') out.push(...(await zipPhotos(file, key, skipped)));
    else if (!inFolder || PHOTO_EXTENSIONS.has(ext)) out.push(fileSource(file, key));
    else if (!isJunk(path.basename(file))) skipped.push({ origin: file, reason: UNSUPPORTED });
  };
  for (const given of paths) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(given);
    } catch {
      throw new UsageError(`${given}: no such file or folder`);
    }
    if (stat.isDirectory()) {
      for (const file of walk(given)) await take(file, stripExt(posix(path.relative(given, file))), true);
    } else {
      await take(given, stripExt(path.basename(given)), false);
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
  return { sources: out, skipped };
}
