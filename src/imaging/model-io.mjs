// The model's tensors as pixels: the photo's RGB into ISNet's normalised float input, and its float
// output back to an 8-bit mask with the figures the quality check reads. Plain JavaScript: the model's
// worker thread imports it, and starts without the TypeScript loader of its parent.

/** (v - 128) / 256 for every byte value: a table read is cheaper than the arithmetic, 3 million times a photo. */
const NORMALISED = Float32Array.from({ length: 256 }, (_, v) => (v - 128) / 256);

/**
 * HWC uint8 RGB → CHW float32 normalised (v - 128) / 256, as ISNet was trained, written into `out`
 * (3 planes of rgb.length / 3). A loop and not sharp: libvips' linear() casts back to 8 bit for
 * 8-bit input, so it cannot produce these floats.
 * @param {Uint8Array} rgb
 * @param {Float32Array} out
 */
export function fillModelInput(rgb, out) {
  const plane = rgb.length / 3;
  for (let i = 0, p = 0; i < plane; i++, p += 3) {
    out[i] = NORMALISED[rgb[p]];
    out[plane + i] = NORMALISED[rgb[p + 1]];
    out[2 * plane + i] = NORMALISED[rgb[p + 2]];
  }
}

/**
 * The model's output (0..1, `size` x `size`) → uint8 mask, with the figures the quality check needs
 * (the bytes' histogram, the box of bytes >= 128), in one pass.
 * @param {Float32Array} out
 * @param {number} size
 * @returns {{ mask: Uint8Array<ArrayBuffer>, histogram: Uint32Array<ArrayBuffer>, bbox: { x: number, y: number, width: number, height: number } | null }}
 */
export function maskFromOutput(out, size) {
  const mask = new Uint8Array(size * size);
  for (let i = 0; i < mask.length; i++) {
    const v = out[i];
    mask[i] = v <= 0 ? 0 : v >= 1 ? 255 : (v * 255 + 0.5) | 0;
  }
  return { mask, ...maskStatistics(mask, size) };
}

/**
 * The model's output at `width` x `height` (the photo's aspect ratio) stretched to `size` x `size` by
 * bilinear interpolation between pixel centres, as if the model had run on the photo squeezed square: the
 * quality check and the cut-out read the square mask (docs/performance.md, "The photo's own aspect ratio").
 * An output already `size` square is answered as it is.
 * @param {Float32Array} out
 * @param {number} width
 * @param {number} height
 * @param {number} size
 * @returns {Float32Array}
 */
export function stretchToSquare(out, width, height, size) {
  if (width === size && height === size) return out;
  const axis = (/** @type {number} */ n) => {
    const lo = new Int32Array(size);
    const hi = new Int32Array(size);
    const t = new Float32Array(size);
    for (let i = 0; i < size; i++) {
      const at = Math.min(n - 1, Math.max(0, ((i + 0.5) * n) / size - 0.5));
      lo[i] = Math.floor(at);
      hi[i] = Math.min(n - 1, lo[i] + 1);
      t[i] = at - lo[i];
    }
    return { lo, hi, t };
  };
  const xs = axis(width);
  const ys = axis(height);
  // Across each source row first, then down: two passes of size x height and size x size.
  const across = new Float32Array(size * height);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0, o = y * size; x < size; x++, o++) {
      const a = out[row + xs.lo[x]];
      across[o] = a + (out[row + xs.hi[x]] - a) * xs.t[x];
    }
  }
  const square = new Float32Array(size * size);
  for (let y = 0; y < size; y++) {
    const top = ys.lo[y] * size;
    const bottom = ys.hi[y] * size;
    const t = ys.t[y];
    for (let x = 0, o = y * size; x < size; x++, o++) {
      const a = across[top + x];
      square[o] = a + (across[bottom + x] - a) * t;
    }
  }
  return square;
}

/**
 * Histogram of a square mask's values and the box of its pixels >= 128 (as maskFromOutput reports them;
 * the heavy tier's merged mask is measured again with it).
 * @param {Uint8Array} mask
 * @param {number} size
 * @returns {{ histogram: Uint32Array<ArrayBuffer>, bbox: { x: number, y: number, width: number, height: number } | null }}
 */
export function maskStatistics(mask, size) {
  const histogram = new Uint32Array(256);
  let minX = size,
    minY = size,
    maxX = -1,
    maxY = -1;
  for (let y = 0, i = 0; y < size; y++) {
    for (let x = 0; x < size; x++, i++) {
      const v = mask[i];
      histogram[v]++;
      if (v >= 128) {
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (y < minY) minY = y;
        if (y > maxY) maxY = y;
      }
    }
  }
  return { histogram, bbox: maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 } };
}
