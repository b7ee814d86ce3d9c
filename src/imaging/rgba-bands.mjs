// A band of a cut-out's rows as straight RGBA pixels, and the band reduced for the thumbnail. The cut-out
// writer's worker threads lay out their bands side by side into one shared buffer
// (cutout-writer.worker.mjs), which one PNG encode then compresses (cutout-writer.ts). Plain JavaScript:
// the worker threads import it.

/** Byte order of this host: a pixel's four bytes are written as one 32-bit number. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * A band of straight RGBA rows written into `out`, from RGB and alpha planes of `rows` rows, and the band
 * reduced by `factor` for a thumbnail (the average of each factor x factor block, weighted by alpha as a
 * resize must; blocks cut by the right or bottom edge average what they hold).
 *  - `sourceAlpha` (the photo's own transparency) caps the alpha, which is changed in place.
 *  - Fully transparent pixels get RGB 0: the old background is not kept hidden under alpha 0 (strip the
 *    alpha and it would reappear), and runs of zeros compress well.
 *  - Each row is worked through only from its first to its last visible pixel, whole blocks at a time;
 *    the rest of the row is zeros. The transparent margins around a product are most of a cut-out's pixels.
 * @param {Uint8Array} rgb @param {Uint8Array} alpha @param {Uint8Array | null} sourceAlpha
 * @param {number} width @param {number} rows
 * @param {number} factor the reduction; every band but the last holds a whole number of blocks
 * @param {Uint8Array} out room for the band's pixels, width x rows x 4 bytes, at a multiple of 4 bytes
 * @returns {{ data: Uint8Array, width: number, height: number }} the reduction, RGBA
 */
export function bandRgba(rgb, alpha, sourceAlpha, width, rows, factor, out) {
  if (out.byteOffset % 4 !== 0 || out.length < width * rows * 4)
    throw new RangeError('bandRgba: the room for the pixels is too small or not aligned to 4 bytes');
  const pixels = new Uint32Array(out.buffer, out.byteOffset, width * rows);
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
  for (let y = 0; y < rows; y++) {
    const start = y * width;
    let from = 0;
    while (from < width && alpha[start + from] === 0) from++;
    let to = width;
    while (to > from && alpha[start + to - 1] === 0) to--;
    const firstBlock = Math.floor(from / factor);
    const x0 = Math.min(width, firstBlock * factor);
    const x1 = to <= from ? x0 : Math.min(width, Math.ceil(to / factor) * factor);
    pixels.fill(0, start, start + x0);
    pixels.fill(0, start + x1, start + width);
    // A block's columns at a time: its sums are kept in locals and added once.
    for (let cx = firstBlock, x = x0, i = start + x0; x < x1; cx++) {
      const blockEnd = Math.min(width, x + factor);
      let sr = 0,
        sg = 0,
        sb = 0,
        sa = 0;
      for (; x < blockEnd; x++, i++) {
        const a = alpha[i];
        if (a === 0) {
          pixels[i] = 0;
          continue;
        }
        const j = i * 3;
        const r = rgb[j],
          g = rgb[j + 1],
          b = rgb[j + 2];
        pixels[i] = (r << rShift) | (g << gShift) | (b << bShift) | (a << aShift);
        sr += r * a;
        sg += g * a;
        sb += b * a;
        sa += a;
      }
      if (sa !== 0) {
        const s = cx * 4;
        sums[s] += sr;
        sums[s + 1] += sg;
        sums[s + 2] += sb;
        sums[s + 3] += sa;
      }
    }
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
  return { data: preview, width: pw, height: ph };
}
