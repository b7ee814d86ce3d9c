// A PNG written in bands of rows, side by side (the way pigz deflates in parallel): each band's rows
// are deflated on their own, ending on a byte boundary (a sync flush) except the last band, which
// ends the stream. Joined after a zlib header, the bands are one valid zlib stream; its Adler-32
// checksum is combined from the bands' own. Chunks are the PNG specification's (ISO/IEC 15948):
// length, type, data, CRC-32 of type and data. Plain JavaScript: the cut-out writer's worker threads
// import it (cutout-writer.worker.mjs), and so does the side that joins their bands (cutout-writer.ts).
import zlib from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** zlib header: deflate, 32 KiB window, "fastest" level hint; (0x78 << 8 | 0x01) % 31 === 0. */
const ZLIB_HEADER = Buffer.from([0x78, 0x01]);
const ADLER_BASE = 65521;
/** Byte order of this host: bandLines packs a pixel's four bytes into one 32-bit number. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * One PNG chunk: big-endian length, type, data, CRC-32 of type and data.
 * @param {string} type @param {Uint8Array} data
 */
export function pngChunk(type, data) {
  const chunk = Buffer.allocUnsafe(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  chunk.set(data, 8);
  chunk.writeUInt32BE(zlib.crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/**
 * A band of straight RGBA rows as PNG scanlines, from RGB and alpha planes of `rows` rows, and the
 * band reduced by `factor` for a thumbnail (the average of each factor x factor block, weighted by
 * alpha as a resize must; blocks cut by the right or bottom edge average what they hold).
 *  - `sourceAlpha` (the photo's own transparency) caps the alpha, which is changed in place.
 *  - Fully transparent pixels get RGB 0: the old background is not kept hidden under alpha 0 (strip
 *    the alpha and it would reappear), and runs of zeros compress well.
 *  - Rows after the band's first use the "Up" filter (each byte minus the byte above it): on a
 *    2000x2000 product photo it makes the deflated rows 36% smaller and deflate faster than unfiltered.
 *    The first row is unfiltered, so a band needs nothing from the band above it.
 * @param {Uint8Array} rgb @param {Uint8Array} alpha @param {Uint8Array | null} sourceAlpha
 * @param {number} width @param {number} rows
 * @param {number} factor the reduction; every band but the last holds a whole number of blocks
 */
export function bandLines(rgb, alpha, sourceAlpha, width, rows, factor) {
  const stride = 1 + width * 4;
  const lines = Buffer.allocUnsafe(stride * rows);
  // Rows as 32-bit pixels, packed so that their bytes in memory read R, G, B, A.
  let above = new Uint32Array(width);
  let row = new Uint32Array(width);
  const up = new Uint32Array(width);
  const upBytes = new Uint8Array(up.buffer);
  const pw = Math.ceil(width / factor);
  const ph = Math.ceil(rows / factor);
  const preview = new Uint8Array(pw * ph * 4);
  // Whole numbers: a block's sums stay below factor² x 255 x 255 (2^32 at factor 256).
  const sums = new Float64Array(pw * 4);
  if (sourceAlpha) {
    // Capped in place: `alpha` is the caller's to give up (the refinement's fresh answer).
    for (let i = 0; i < alpha.length; i++) if (sourceAlpha[i] < alpha[i]) alpha[i] = sourceAlpha[i];
  }
  const [rShift, gShift, bShift, aShift] = LITTLE_ENDIAN ? [0, 8, 16, 24] : [24, 16, 8, 0];
  // The columns of the row above that hold a visible pixel: [aboveFrom, aboveTo).
  let aboveFrom = width;
  let aboveTo = 0;
  for (let y = 0; y < rows; y++) {
    // Only the columns from the first to the last visible pixel of this row or the one above are worked
    // through, whole blocks at a time: outside them the pixel is 0 and so is its difference from the one
    // above. The transparent margins around a product are most of a cut-out's pixels.
    const start = y * width;
    let from = 0;
    while (from < width && alpha[start + from] === 0) from++;
    let to = width;
    while (to > from && alpha[start + to - 1] === 0) to--;
    if (to === from) [from, to] = [width, 0]; // none visible
    const lo = Math.min(from, aboveFrom);
    const hi = Math.max(to, aboveTo);
    const firstBlock = Math.floor(lo / factor);
    const x0 = Math.min(width, firstBlock * factor);
    const x1 = hi <= lo ? x0 : Math.min(width, Math.ceil(hi / factor) * factor);
    row.fill(0, 0, x0);
    row.fill(0, x1);
    up.fill(0, 0, x0);
    up.fill(0, x1);
    // A block's columns at a time: its sums are kept in locals and added once.
    for (let cx = firstBlock, x = x0, i = start + x0; x < x1; cx++) {
      const blockEnd = Math.min(width, x + factor);
      let sr = 0,
        sg = 0,
        sb = 0,
        sa = 0;
      for (; x < blockEnd; x++, i++) {
        const a = alpha[i];
        let c = 0;
        if (a !== 0) {
          const j = i * 3;
          const r = rgb[j],
            g = rgb[j + 1],
            b = rgb[j + 2];
          c = ((r << rShift) | (g << gShift) | (b << bShift) | (a << aShift)) >>> 0;
          sr += r * a;
          sg += g * a;
          sb += b * a;
          sa += a;
        }
        row[x] = c;
        // Four bytes at once, each minus the one above it modulo 256 (no borrow between bytes). Above
        // the band's first row `above` is all zeros, so there this is the row itself, written unfiltered.
        const q = above[x];
        up[x] = ((c | 0x80808080) - (q & 0x7f7f7f7f)) ^ ((c ^ ~q) & 0x80808080);
      }
      if (sa !== 0) {
        const s = cx * 4;
        sums[s] += sr;
        sums[s + 1] += sg;
        sums[s + 2] += sb;
        sums[s + 3] += sa;
      }
    }
    const o = y * stride;
    lines[o] = y === 0 ? 0 : 2;
    lines.set(upBytes, o + 1);
    const done = above;
    above = row;
    row = done;
    aboveFrom = from;
    aboveTo = to;
    if ((y + 1) % factor === 0 || y === rows - 1) {
      const cy = (y / factor) | 0;
      const blockH = y + 1 - cy * factor;
      for (let cx = 0; cx < pw; cx++) {
        const a = sums[cx * 4 + 3];
        if (a === 0) continue;
        const blockW = Math.min(width, (cx + 1) * factor) - cx * factor;
        const p = (cy * pw + cx) * 4;
        preview[p] = Math.round(sums[cx * 4] / a);
        preview[p + 1] = Math.round(sums[cx * 4 + 1] / a);
        preview[p + 2] = Math.round(sums[cx * 4 + 2] / a);
        preview[p + 3] = Math.round(a / (blockW * blockH));
      }
      sums.fill(0);
    }
  }
  return { lines, preview: { data: preview, width: pw, height: ph } };
}

/**
 * The Adler-32 of two byte runs one after the other, from each run's own and the second's length (zlib's adler32_combine).
 * @param {number} first @param {number} second @param {number} secondLength
 */
export function adler32Combine(first, second, secondLength) {
  const rem = secondLength % ADLER_BASE;
  let sum1 = first & 0xffff;
  let sum2 = (rem * sum1) % ADLER_BASE;
  sum1 += (second & 0xffff) + ADLER_BASE - 1;
  sum2 += (first >>> 16) + (second >>> 16) + ADLER_BASE - rem;
  sum1 %= ADLER_BASE;
  sum2 %= ADLER_BASE;
  return ((sum2 << 16) | sum1) >>> 0;
}

/** The end of a zlib stream finished right after a sync flush: an empty final block (fixed codes). */
const EMPTY_FINAL_BLOCK = [0x03, 0x00];

/**
 * One band of scanlines deflated: an IDAT chunk's data, and the band's Adler-32 and length.
 * zlib level 1 with run-length matches only (Z_RLE): on the Up-filtered rows as small as level 1's
 * output and no slower (docs/performance.md). zlib computes the checksum while it deflates: the rows go
 * in as a zlib stream that is sync-flushed and then finished, which ends it with an empty final block
 * and the Adler-32. The header and the checksum are cut off, and for every band but the last the empty
 * final block too, so that the next band's deflate output may follow.
 * @param {Buffer} lines @param {boolean} last
 * @returns {Promise<{ idat: Buffer, adler: number, length: number }>}
 */
export async function deflateBand(lines, last) {
  // memLevel 9: larger blocks, fewer Huffman tables to build (faster than the default 8 here).
  const options = { level: 1, strategy: zlib.constants.Z_RLE, memLevel: 9, chunkSize: 1 << 22 };
  /** @type {Buffer} */
  const stream = await new Promise((resolve, reject) => {
    const deflate = zlib.createDeflate(options);
    /** @type {Buffer[]} */
    const parts = [];
    deflate.on('data', (/** @type {Buffer} */ chunk) => parts.push(chunk));
    deflate.on('error', reject);
    deflate.on('end', () => resolve(Buffer.concat(parts)));
    deflate.write(lines);
    deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => deflate.end());
  });
  const n = stream.length;
  // zlib ends a stream finished right after a sync flush this way; anything else is a zlib we do not know.
  if (stream[n - 6] !== EMPTY_FINAL_BLOCK[0] || stream[n - 5] !== EMPTY_FINAL_BLOCK[1])
    throw new Error('zlib did not end the band with an empty final block');
  const data = stream.subarray(2, last ? n - 4 : n - 6);
  return { idat: pngChunk('IDAT', data), adler: stream.readUInt32BE(n - 4), length: lines.length };
}

/**
 * What comes before a PNG's bands (joinBands): the signature, the header chunk, and the zlib header in an
 * IDAT chunk of its own.
 * @param {number} width @param {number} height
 */
export function pngHead(width, height) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // colour type: RGBA
  // compression, filter method and interlace all 0
  return Buffer.concat([SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', ZLIB_HEADER)]);
}

/**
 * What comes after a PNG's bands (joinBands): the zlib stream's Adler-32, combined from the bands' own,
 * in an IDAT chunk, and the end chunk.
 * @param {{ adler: number, length: number }[]} bands
 */
export function pngTail(bands) {
  let adler = 1;
  for (const band of bands) adler = adler32Combine(adler, band.adler, band.length);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(adler, 0);
  return Buffer.concat([pngChunk('IDAT', trailer), pngChunk('IEND', new Uint8Array(0))]);
}

/**
 * The PNG of 8-bit straight RGBA from its bands, in order (deflateBand; the last one made with `last`):
 * pngHead, the bands' IDAT chunks, pngTail.
 * @param {number} width @param {number} height
 * @param {{ idat: Uint8Array, adler: number, length: number }[]} bands
 */
export function joinBands(width, height, bands) {
  return Buffer.concat([pngHead(width, height), ...bands.map((b) => b.idat), pngTail(bands)]);
}
