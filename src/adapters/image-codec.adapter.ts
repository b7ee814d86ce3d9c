// Every sharp (libvips) call of the service lives here. Untrusted input always goes through
// limitInputPixels: libvips reads the declared size from the header and refuses before decoding.
import sharp, { type Metadata, type Sharp } from 'sharp';
import { PhotoError } from '../errors.ts';
import type { ImageFormat, Optimize } from '../domain/batch.schemas.ts';

// libvips' own cache holds decoded tiles of images we never read twice; turn it off to keep memory flat.
sharp.cache(false);
sharp.concurrency(1);

/**
 * libvips threads per image operation (MATTE_IMAGE_THREADS, default 1). Two halve the large resizes of
 * a single photo (a 1024² mask up to 2000²: 130 → 60 ms), at some cost to batch throughput.
 */
export function setImageThreads(threads: number): void {
  sharp.concurrency(threads);
}

export const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp']);
/** Working resolution cap: a cutout keeps source size up to this long edge (4096 px ≈ 67 MB of RGBA). */
export const MAX_WORKING_EDGE = 4096;
export const THUMB_EDGE = 512;
/**
 * Thumbnails: WebP effort 2 instead of the default 4 halves the encode (46 → 24 ms for a product photo) for files 5% larger.
 * alphaQuality 80 (lossy alpha instead of lossless) takes another 11% off a cut-out's thumbnail (24.1 → 21.3 ms)
 * and 2% off its size, for alpha off by at most 1 of 255 (mean 0.024) on the bench photo.
 */
/** How a photo is squeezed to the model's square input (aspect ratio not kept, as the model was trained): toModelInput, cropToModelInput and modelInputFrom alike. */
const MODEL_RESIZE = { fit: 'fill', kernel: 'lanczos3' } as const;

const THUMB_WEBP = { quality: 80, effort: 2, alphaQuality: 80 } as const;

export interface ProbeResult {
  format: string;
  width: number;
  height: number;
}

export interface DecodedImage {
  /** Raw RGB, 3 channels, 8 bit, EXIF orientation applied, flattened onto white. */
  rgb: Buffer;
  /** Source alpha (1 channel) when the input had transparency, else null. */
  alpha: Buffer | null;
  width: number;
  height: number;
  source: { width: number; height: number; format: string };
}

export interface RenderPlan {
  canvas: { width: number; height: number };
  /** Region of the cutout drawn (after flip/rotate). */
  crop: { left: number; top: number; width: number; height: number };
  /** Where and how large it lands on the canvas. */
  place: { left: number; top: number; width: number; height: number };
  background: { kind: 'transparent' } | { kind: 'color'; r: number; g: number; b: number } | { kind: 'image'; data: Buffer };
  flip: boolean;
  rotate: 0 | 90 | 180 | 270;
  corrections: { sharpen: number; brightness: number; contrast: number; saturation: number };
  scale: 1 | 2 | 4;
}

const WHITE = { r: 255, g: 255, b: 255 };

/** Straight RGBA from colours (grey or RGB, `channels` a pixel) and a separate alpha plane. */
function interleave(colour: Buffer, channels: number, alpha: Buffer, pixels: number): Buffer {
  const rgba = Buffer.alloc(pixels * 4);
  for (let i = 0, p = 0; i < pixels; i++, p += channels) {
    rgba[i * 4] = colour[p];
    rgba[i * 4 + 1] = colour[p + (channels >= 3 ? 1 : 0)];
    rgba[i * 4 + 2] = colour[p + (channels >= 3 ? 2 : 0)];
    rgba[i * 4 + 3] = alpha[i];
  }
  return rgba;
}

function open(input: Buffer, maxPixels: number): Sharp {
  // failOn 'error': a truncated or corrupt file is an error, not a grey half-image. pages: 1 takes the first frame of an animation.
  return sharp(input, { limitInputPixels: maxPixels, failOn: 'error', pages: 1 });
}

function asPhotoError(err: unknown, maxPixels: number): PhotoError {
  const message = err instanceof Error ? err.message : String(err);
  if (/pixel limit/i.test(message)) return new PhotoError('TOO_LARGE', `Image has more than ${maxPixels} pixels.`, true);
  return new PhotoError('INVALID_IMAGE', 'The file is not a readable JPEG, PNG or WebP image.', true);
}

/** Whether exportOutput answers a stored output of this format and size as it is (nothing to convert). */
export function exportKeepsStored(storedFormat: ImageFormat, storedBytes: number, format: ImageFormat, optimize: Optimize, maxBytes?: number): boolean {
  const overLimit = maxBytes !== undefined && storedBytes > maxBytes;
  return format === storedFormat && (optimize === 'off' || (optimize === 'marketplace' && !overLimit));
}

export class ImageCodec {
  constructor(private readonly maxPixels: number) {}

  /** Reads the header only: format and declared size, refusing oversized or unsupported images. */
  async probe(input: Buffer): Promise<ProbeResult> {
    let meta: Metadata;
    try {
      meta = await sharp(input, { limitInputPixels: this.maxPixels }).metadata();
    } catch (err) {
      throw asPhotoError(err, this.maxPixels);
    }
    if (!meta.format || !ACCEPTED_FORMATS.has(meta.format)) throw new PhotoError('INVALID_IMAGE', `Unsupported image format${meta.format ? ` (${meta.format})` : ''}; send JPEG, PNG or WebP.`, true);
    const width = meta.width ?? 0;
    const height = meta.height ?? 0;
    if (width * height > this.maxPixels) throw new PhotoError('TOO_LARGE', `Image is ${width}x${height}, more than ${this.maxPixels} pixels.`, true);
    const swap = (meta.orientation ?? 1) >= 5;
    return { format: meta.format, width: swap ? height : width, height: swap ? width : height };
  }

  /** Full decode: orientation, colour space (CMYK, 16 bit, grey → 8-bit sRGB), first frame, alpha split off. */
  async decode(input: Buffer): Promise<DecodedImage> {
    try {
      const meta = await sharp(input, { limitInputPixels: this.maxPixels }).metadata();
      const base = open(input, this.maxPixels).rotate().toColourspace('srgb');
      const oriented = await base.clone().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
      const { width: srcW, height: srcH, channels } = oriented.info;
      const scale = Math.min(1, MAX_WORKING_EDGE / Math.max(srcW, srcH));
      const width = Math.max(1, Math.round(srcW * scale));
      const height = Math.max(1, Math.round(srcH * scale));
      const raw = { width: srcW, height: srcH, channels };
      const resized = (img: Sharp) => (scale < 1 ? img.resize(width, height, { fit: 'fill' }) : img);
      const hasAlpha = channels === 4 || channels === 2;
      // Transparent inputs: RGB flattened onto white (what a product shot on white looks like to the model),
      // and the source alpha kept so that what was transparent stays transparent in the cutout.
      // Plain 3-channel input at working size is already what we need: no second pass.
      const rgb =
        channels === 3 && scale === 1
          ? oriented.data
          : await resized(sharp(oriented.data, { raw }).flatten({ background: WHITE }).removeAlpha())
              .toColourspace('srgb')
              .raw()
              .toBuffer();
      const alpha = hasAlpha ? await resized(sharp(oriented.data, { raw }).extractChannel((channels - 1) as 1 | 3)).raw().toBuffer() : null;
      return { rgb, alpha, width, height, source: { width: srcW, height: srcH, format: meta.format ?? 'unknown' } };
    } catch (err) {
      if (err instanceof PhotoError) throw err;
      throw asPhotoError(err, this.maxPixels);
    }
  }

  /**
   * The model's square input made straight from the file, in one libvips pipeline without the photo's
   * full decode in between: the same bytes as toModelInput(decode(input)) for a file where that holds,
   * opaque 8-bit RGB (or a palette) without an EXIF rotation, within the working size (tested; a rotated
   * or 16-bit file comes out a little different). Null for any other file: make it from the decode.
   * The file is decoded whole on the way (failOn 'error'), so a truncated one fails as decode fails.
   */
  async modelInputFrom(input: Buffer, size: number): Promise<Buffer | null> {
    try {
      const meta = await sharp(input, { limitInputPixels: this.maxPixels }).metadata();
      const plain =
        meta.channels === 3 && !meta.hasAlpha && meta.depth === 'uchar' && (meta.orientation ?? 1) === 1 && Math.max(meta.width ?? Infinity, meta.height ?? Infinity) <= MAX_WORKING_EDGE;
      if (!plain) return null;
      // No shrink-on-load: the file's pixels are resized as the decode's are, or the bytes would differ.
      return await open(input, this.maxPixels).toColourspace('srgb').resize(size, size, { ...MODEL_RESIZE, fastShrinkOnLoad: false }).raw().toBuffer();
    } catch (err) {
      throw asPhotoError(err, this.maxPixels);
    }
  }

  /** Resizes raw RGB to the model's square input (aspect ratio not kept, as the model was trained). */
  async toModelInput(img: DecodedImage, size: number): Promise<Buffer> {
    return sharp(img.rgb, { raw: { width: img.width, height: img.height, channels: 3 } }).resize(size, size, MODEL_RESIZE).raw().toBuffer();
  }

  /** A region of the working image, squeezed to the model's square input (the heavy tier's crop pass). */
  async cropToModelInput(img: DecodedImage, box: { x: number; y: number; width: number; height: number }, size: number): Promise<Buffer> {
    return sharp(img.rgb, { raw: { width: img.width, height: img.height, channels: 3 } })
      .extract({ left: box.x, top: box.y, width: box.width, height: box.height })
      .resize(size, size, MODEL_RESIZE)
      .raw()
      .toBuffer();
  }

  /** A square 8-bit mask resized to width x height; one channel out (sharp would otherwise give three). */
  async resizeMask(mask: Buffer, maskSize: number, width: number, height: number): Promise<Buffer> {
    return sharp(mask, { raw: { width: maskSize, height: maskSize, channels: 1 } }).resize(width, height, { fit: 'fill', kernel: 'cubic' }).extractChannel(0).raw().toBuffer();
  }

  /** The smaller of two one-channel alphas of the same size, pixel by pixel. */
  async minAlpha(a: Buffer, b: Buffer, width: number, height: number): Promise<Buffer> {
    return sharp(a, { raw: { width, height, channels: 1 } })
      .composite([{ input: b, raw: { width, height, channels: 1 }, blend: 'darken' }])
      .extractChannel(0)
      .raw()
      .toBuffer();
  }

  /** Scales the model's square 8-bit mask back to working size, combined with any source alpha. One channel out. */
  async maskToSize(mask: Buffer, maskSize: number, img: DecodedImage): Promise<Buffer> {
    const scaled = await this.resizeMask(mask, maskSize, img.width, img.height);
    // min(mask, source alpha) via the 'darken' blend of two grey images.
    return img.alpha ? this.minAlpha(scaled, img.alpha, img.width, img.height) : scaled;
  }

  /** Draws a cutout onto a canvas as the plan says; returns raw RGBA. */
  async render(cutout: Buffer, plan: RenderPlan): Promise<{ data: Buffer; width: number; height: number }> {
    let subject = sharp(cutout, { limitInputPixels: this.maxPixels });
    if (plan.flip) subject = subject.flop();
    if (plan.rotate) subject = subject.rotate(plan.rotate);
    // Rotation needs its own pass before extract, or libvips applies them in the wrong order.
    const turned = await subject.png({ compressionLevel: 0 }).toBuffer();
    let piece = sharp(turned).extract(plan.crop).resize(plan.place.width, plan.place.height, { fit: 'fill' });
    const c = plan.corrections;
    if (c.brightness || c.saturation) piece = piece.modulate({ brightness: 1 + c.brightness / 100, saturation: 1 + c.saturation / 100 });
    if (c.contrast) {
      const a = 1 + c.contrast / 100;
      piece = piece.linear([a, a, a, 1], [128 * (1 - a), 128 * (1 - a), 128 * (1 - a), 0]);
    }
    if (c.sharpen) piece = piece.sharpen({ sigma: 0.5 + (c.sharpen / 100) * 2.5 });
    const pieceBuf = await piece.ensureAlpha().png({ compressionLevel: 0 }).toBuffer();
    const { width, height } = plan.canvas;
    let canvas: Sharp;
    if (plan.background.kind === 'image') {
      canvas = sharp(plan.background.data, { limitInputPixels: this.maxPixels }).rotate().resize(width, height, { fit: 'cover' }).ensureAlpha();
    } else {
      const bg = plan.background.kind === 'color' ? { ...plan.background, alpha: 1 } : { r: 0, g: 0, b: 0, alpha: 0 };
      canvas = sharp({ create: { width, height, channels: 4, background: { r: bg.r, g: bg.g, b: bg.b, alpha: bg.alpha } } });
    }
    let out = sharp(await canvas.composite([{ input: pieceBuf, left: plan.place.left, top: plan.place.top }]).png({ compressionLevel: 0 }).toBuffer());
    if (plan.scale > 1) out = out.resize(width * plan.scale, height * plan.scale, { kernel: 'lanczos3' });
    const result = await out.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    return { data: result.data, width: result.info.width, height: result.info.height };
  }

  /** Encodes raw RGBA. JPEG has no alpha: it is flattened onto white. */
  async encodeRaw(raw: { data: Buffer; width: number; height: number }, format: ImageFormat, optimize: Optimize, opaque: boolean): Promise<Buffer> {
    const img = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } });
    return this.encode(opaque ? img.removeAlpha() : img, format, optimize);
  }

  /**
   * The bytes to send for a stored output: as stored when nothing needs converting, else converted.
   * `marketplace` keeps the stored encoding unless it is over the preset's upload limit (`maxBytes`),
   * then steps the quality down until it fits; `lossless` and `web` always re-encode.
   */
  async exportOutput(stored: Buffer, storedFormat: ImageFormat, format: ImageFormat, optimize: Optimize, maxBytes?: number): Promise<Buffer> {
    if (exportKeepsStored(storedFormat, stored.length, format, optimize, maxBytes)) return stored;
    let out = await this.convert(stored, format, optimize === 'marketplace' ? 'off' : optimize);
    if (optimize !== 'marketplace' || maxBytes === undefined) return out;
    for (const quality of [85, 75, 65, 50]) {
      if (out.length <= maxBytes || format === 'png') break;
      const img = sharp(stored, { limitInputPixels: this.maxPixels });
      out = await (format === 'jpeg' ? img.flatten({ background: WHITE }).jpeg({ quality, mozjpeg: true }) : img.webp({ quality })).toBuffer();
    }
    if (out.length > maxBytes && format === 'png') out = await this.convert(stored, 'png', 'web');
    return out;
  }

  /** Converts a stored image to another format. */
  async convert(input: Buffer, format: ImageFormat, optimize: Optimize): Promise<Buffer> {
    return this.encode(sharp(input, { limitInputPixels: this.maxPixels }), format, optimize);
  }

  private encode(img: Sharp, format: ImageFormat, optimize: Optimize): Promise<Buffer> {
    switch (format) {
      case 'jpeg':
        return img
          .flatten({ background: WHITE })
          .jpeg({ quality: optimize === 'web' ? 80 : optimize === 'lossless' ? 95 : 90, mozjpeg: optimize !== 'off' })
          .toBuffer();
      case 'webp':
        return img.webp(optimize === 'lossless' ? { lossless: true } : { quality: optimize === 'web' ? 80 : 90, alphaQuality: 100 }).toBuffer();
      case 'png':
        // 'off' favours speed (zlib level 6); the optimised exports spend more effort for smaller files.
        return img.png({ compressionLevel: optimize === 'off' ? 6 : 9, adaptiveFiltering: optimize !== 'off', palette: optimize === 'web' }).toBuffer();
    }
  }

  /** Share of an image's outermost two-pixel ring that is exactly RGB 255 and opaque (a pure white background). */
  async borderWhiteShare(input: Buffer): Promise<number> {
    const { data, info } = await sharp(input, { limitInputPixels: this.maxPixels }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const { width: w, height: h } = info;
    let ring = 0;
    let white = 0;
    const visit = (x: number, y: number) => {
      const i = (y * w + x) * 4;
      ring++;
      if (data[i] === 255 && data[i + 1] === 255 && data[i + 2] === 255 && data[i + 3] === 255) white++;
    };
    for (let y = 0; y < h; y++) {
      if (y < 2 || y >= h - 2) for (let x = 0; x < w; x++) visit(x, y);
      else for (const x of [0, 1, w - 2, w - 1]) if (x >= 0 && x < w) visit(x, y);
    }
    return ring ? white / ring : 0;
  }

  /** The photo reduced to w x h (RGB): the edge refinement's grid, made while the model runs. */
  async reduceRgb(img: DecodedImage, w: number, h: number): Promise<Buffer> {
    return sharp(img.rgb, { raw: { width: img.width, height: img.height, channels: 3 } }).resize(w, h, { fit: 'fill' }).raw().toBuffer();
  }

  /** The model's square mask and input reduced to `edge` x `edge` for the quality check (one and three channels). */
  async checkGrid(mask: Buffer, rgb: Buffer, size: number, edge: number): Promise<{ mask: Buffer; rgb: Buffer }> {
    const reduce = (input: Buffer, channels: 1 | 3) => sharp(input, { raw: { width: size, height: size, channels } }).resize(edge, edge, { fit: 'fill', kernel: 'linear' });
    const [m, c] = await Promise.all([reduce(mask, 1).extractChannel(0).raw().toBuffer(), reduce(rgb, 3).raw().toBuffer()]);
    return { mask: m, rgb: c };
  }

  /**
   * An image (encoded, or raw RGBA when `raw` is given) as straight RGBA of at most `maxEdge` pixels on
   * its long edge, never enlarged (npm run bench's claim figures read ground-truth cut-outs this way).
   * Colour and alpha are scaled apart, so the colours under transparent pixels survive: a resize of
   * RGBA would weigh them by their alpha, and turn every transparent pixel black.
   */
  async rgbaWithin(input: Buffer, maxEdge: number, raw?: { width: number; height: number }): Promise<{ rgba: Buffer; width: number; height: number }> {
    const base = raw ? sharp(input, { raw: { ...raw, channels: 4 } }) : sharp(input, { limitInputPixels: this.maxPixels });
    const fit = { fit: 'inside', withoutEnlargement: true, kernel: 'linear' } as const;
    // sharp orders its operations itself (resize before removeAlpha), so the colours are taken out
    // in a pass of their own before they are scaled.
    const full = await base.clone().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    const [colour, alpha] = await Promise.all([
      sharp(full.data, { raw: { width: full.info.width, height: full.info.height, channels: full.info.channels } }).resize(maxEdge, maxEdge, fit).raw().toBuffer({ resolveWithObject: true }),
      base.clone().ensureAlpha().extractChannel(3).resize(maxEdge, maxEdge, fit).raw().toBuffer(),
    ]);
    const { width, height, channels } = colour.info;
    return { rgba: interleave(colour.data, channels, alpha, width * height), width, height };
  }

  /**
   * What the report check reads for a result: the cut-out's alpha at most `maxEdge` pixels on its long
   * edge, with the colours of the uploaded photo under it (oriented and in sRGB as the pipeline decodes
   * it, transparent photos flattened onto white). A cut-out keeps no colour where it is transparent, so
   * the photo is where the check sees what was cut away.
   */
  async photoUnderCutout(photo: Buffer, cutout: Buffer, maxEdge: number): Promise<{ rgba: Buffer; width: number; height: number }> {
    const fit = { fit: 'inside', withoutEnlargement: true, kernel: 'linear' } as const;
    const alpha = await sharp(cutout, { limitInputPixels: this.maxPixels }).ensureAlpha().extractChannel(3).resize(maxEdge, maxEdge, fit).raw().toBuffer({ resolveWithObject: true });
    const { width, height } = alpha.info;
    // Orientation and colour first, in a pass of their own: sharp would otherwise order them after the resize.
    const upright = await open(photo, this.maxPixels).rotate().toColourspace('srgb').flatten({ background: WHITE }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const colour = await sharp(upright.data, { raw: { width: upright.info.width, height: upright.info.height, channels: upright.info.channels } })
      .resize(width, height, { fit: 'fill', kernel: 'linear' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { rgba: interleave(colour.data, colour.info.channels, alpha.data, width * height), width, height };
  }

  /** WebP thumbnail of raw straight RGBA (a cut-out's preview), at most 512 px on its long edge. */
  async thumbnailRaw(raw: { data: Buffer; width: number; height: number }): Promise<Buffer> {
    return sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } })
      .resize(THUMB_EDGE, THUMB_EDGE, { fit: 'inside', withoutEnlargement: true })
      .webp(THUMB_WEBP)
      .toBuffer();
  }

  /** WebP thumbnail, at most 512 px on its long edge. */
  async thumbnail(input: Buffer): Promise<Buffer> {
    return sharp(input, { limitInputPixels: this.maxPixels, pages: 1 })
      .rotate()
      .resize(THUMB_EDGE, THUMB_EDGE, { fit: 'inside', withoutEnlargement: true })
      .webp(THUMB_WEBP)
      .toBuffer();
  }

  async size(input: Buffer): Promise<{ width: number; height: number; format: string }> {
    const meta = await sharp(input, { limitInputPixels: this.maxPixels }).metadata();
    return { width: meta.width ?? 0, height: meta.height ?? 0, format: meta.format ?? 'unknown' };
  }
}
