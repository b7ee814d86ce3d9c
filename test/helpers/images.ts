// Test images made on the fly with sharp (deterministic): a dark product square on white, and the
// awkward inputs of real life (EXIF rotation, CMYK, 16 bit, alpha, truncated, lying headers).
import sharp from 'sharp';
import zlib from 'node:zlib';

/** A `w`x`h` white photo with a dark square covering the middle half. */
export async function productPhoto(w = 400, h = 300, format: 'jpeg' | 'png' | 'webp' = 'jpeg'): Promise<Buffer> {
  const square = await sharp({
    create: { width: Math.round(w / 2), height: Math.round(h / 2), channels: 3, background: { r: 30, g: 60, b: 120 } },
  })
    .png()
    .toBuffer();
  const img = sharp({ create: { width: w, height: h, channels: 3, background: { r: 255, g: 255, b: 255 } } }).composite(
    [{ input: square, left: Math.round(w / 4), top: Math.round(h / 4) }],
  );
  return img[format]().toBuffer();
}

export async function exifRotated(): Promise<Buffer> {
  // Stored 400x300 with orientation 6 (rotate 90° clockwise to view): viewed as 300x400.
  return sharp(await productPhoto(400, 300))
    .withMetadata({ orientation: 6 })
    .jpeg()
    .toBuffer();
}

export async function cmykJpeg(): Promise<Buffer> {
  return sharp(await productPhoto())
    .toColourspace('cmyk')
    .jpeg()
    .toBuffer();
}

export async function png16(): Promise<Buffer> {
  return sharp(await productPhoto(200, 200, 'png'))
    .toColourspace('rgb16')
    .png()
    .toBuffer();
}

/** Product on a transparent background (an already cut-out photo). */
export async function transparentPng(): Promise<Buffer> {
  const square = await sharp({
    create: { width: 100, height: 100, channels: 4, background: { r: 30, g: 60, b: 120, alpha: 1 } },
  })
    .png()
    .toBuffer();
  return sharp({ create: { width: 200, height: 200, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: square, left: 50, top: 50 }])
    .png()
    .toBuffer();
}

export async function truncatedJpeg(): Promise<Buffer> {
  const full = await productPhoto(800, 600);
  return full.subarray(0, Math.floor(full.length / 2));
}

/** A valid PNG header declaring width x height, with no real pixel data. */
export function hugePngHeader(width = 100000, height = 100000): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(10))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export interface RawZipEntry {
  name: string;
  data: Buffer;
  /** Deflate the data (default: stored). */
  deflate?: boolean;
  /** Lie about the uncompressed size in the headers. */
  declaredSize?: number;
  /** Use already-deflated bytes as the entry's compressed data. */
  compressed?: Buffer;
  uncompressedSize?: number;
}

/** A hand-made ZIP: lets tests write names and sizes that honest archivers refuse to write. */
export function makeZip(entries: RawZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const compressed = e.compressed ?? (e.deflate ? zlib.deflateRawSync(e.data) : e.data);
    const method = e.compressed || e.deflate ? 8 : 0;
    const size = e.declaredSize ?? e.uncompressedSize ?? e.data.length;
    const crc = e.compressed ? 0 : zlib.crc32(e.data);
    // Local and central headers carry the same fields (flags, method, time, date, crc, sizes, name
    // length); the central header has them 2 bytes further on.
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(0x800, at);
      header.writeUInt16LE(method, at + 2);
      header.writeUInt32LE(crc >>> 0, at + 8);
      header.writeUInt32LE(compressed.length, at + 12);
      header.writeUInt32LE(size, at + 16);
      header.writeUInt16LE(name.length, at + 20);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    fields(local, 6);
    locals.push(local, name, compressed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    fields(central, 8);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + compressed.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
