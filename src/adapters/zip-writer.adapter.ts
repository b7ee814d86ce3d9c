// Streams a ZIP archive (yazl): entries are opened one at a time, when the archive reaches them, so a
// 200-photo download holds one photo in memory, not the archive. Photos are already compressed:
// entries are stored, which also makes the archive's size known up front when every entry's is.
import { Readable } from 'node:stream';
import yazl from 'yazl';

export interface ZipSource {
  name: string;
  /** Bytes, when known before the entry is opened (then the archive's total can be known too). */
  size?: number;
  mtime?: Date;
  open(): Promise<Readable | Buffer>;
}

export function writeZip(sources: ZipSource[]): { stream: Readable; size: Promise<number | undefined> } {
  const zip = new yazl.ZipFile();
  for (const source of sources) {
    const options = {
      compress: false,
      ...(source.size !== undefined ? { size: source.size } : {}),
      ...(source.mtime ? { mtime: source.mtime } : {}),
    };
    zip.addReadStreamLazy(source.name, options, (cb) => {
      source.open().then(
        (data) => cb(null, Buffer.isBuffer(data) ? Readable.from([data]) : data),
        (err: unknown) => cb(err, Readable.from([])),
      );
    });
  }
  const stream = zip.outputStream as Readable;
  // A source that fails (a file removed meanwhile) ends the download with an error, not a bad archive.
  (zip as unknown as NodeJS.EventEmitter).on('error', (err: Error) => stream.destroy(err));
  const known = sources.every((s) => s.size !== undefined);
  // yazl tells the total at once when every entry's size is known, and only mid-stream otherwise.
  const size = new Promise<number | undefined>((resolve) => {
    zip.end({ forceZip64Format: false, comment: '' }, ((total: number) =>
      resolve(known && total >= 0 ? total : undefined)) as () => void);
    if (!known) resolve(undefined);
  });
  return { stream, size };
}
