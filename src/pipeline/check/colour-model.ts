// Colour models of a photo's background and subject: normalised 8x8x8 RGB histograms. The background
// is estimated from the photo's outer ring where the cut-out is transparent (product photos are framed
// with background around the subject); when the subject covers the ring, from every transparent pixel.

/** Width of the outer ring, in grid pixels, that estimates the background. */
export const RING = 6;
/** Fewer background pixels than this in the ring: use every transparent pixel instead. */
const MIN_RING_PIXELS = 50;

export interface ColourModels {
  /** Colour bin (0..511) of each grid pixel. */
  bin: Uint16Array;
  background: Float32Array;
  subject: Float32Array;
}

/** The colour bin (0..511) of each pixel of interleaved 8-bit pixels, `stride` bytes a pixel, RGB first. */
function colourBins(pixels: Uint8Array, stride: number): Uint16Array {
  const bin = new Uint16Array(pixels.length / stride);
  for (let i = 0, p = 0; i < bin.length; i++, p += stride)
    bin[i] = ((pixels[p] >> 5) << 6) | ((pixels[p + 1] >> 5) << 3) | (pixels[p + 2] >> 5);
  return bin;
}

/** Normalised histogram of the colour bins of the picked pixels, with their count. */
function histogram(bin: Uint16Array, pick: (i: number) => boolean): Float32Array & { count?: number } {
  const h: Float32Array & { count?: number } = new Float32Array(512);
  let n = 0;
  for (let i = 0; i < bin.length; i++) {
    if (!pick(i)) continue;
    h[bin[i]]++;
    n++;
  }
  if (n) for (let k = 0; k < 512; k++) h[k] /= n;
  h.count = n;
  return h;
}

function inRing(i: number, width: number, height: number): boolean {
  const x = i % width;
  const y = (i - x) / width;
  return x < RING || y < RING || x >= width - RING || y >= height - RING;
}

/** `pixels`: interleaved 8-bit RGB (stride 3) or RGBA (stride 4); `opaque[i]` marks subject pixels of the cut-out. */
export function colourModels(
  pixels: Uint8Array,
  stride: number,
  opaque: Uint8Array,
  width: number,
  height: number,
): ColourModels {
  const bin = colourBins(pixels, stride);
  let ring = 0;
  for (let i = 0; i < bin.length; i++) if (!opaque[i] && inRing(i, width, height)) ring++;
  const background = histogram(
    bin,
    ring >= MIN_RING_PIXELS ? (i) => !opaque[i] && inRing(i, width, height) : (i) => !opaque[i],
  );
  const subject = histogram(bin, (i) => opaque[i] === 1);
  return { bin, background, subject };
}

/** The pixel's colour is at least twice as common in the background as in the subject. */
export function looksLikeBackground(m: ColourModels, i: number): boolean {
  const k = m.bin[i];
  return m.background[k] > 2 * m.subject[k];
}

/** The pixel's colour is at least twice as common in the subject as in the background, and not rare in it. */
export function looksLikeSubject(m: ColourModels, i: number): boolean {
  const k = m.bin[i];
  return m.subject[k] > 2 * m.background[k] && m.subject[k] > 0.002;
}
