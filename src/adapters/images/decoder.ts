// Photos in: the header check, the full decode to working-size RGB, and the model's square input.
import sharp, { type Metadata, type Sharp } from 'sharp';
import { PhotoError } from '../../errors.ts';
import type { ModelInput } from '../mask-model.adapter.ts';
import { ACCEPTED_FORMATS, asPhotoError, open, WHITE } from './sharp.ts';
import { MAX_WORKING_EDGE } from '../../domain/batch-rules.ts';
import { PHOTO_REFUSALS } from '../../domain/photo-refusals.ts';
import { nativeCutout } from '../../imaging/native.mjs';

/**
 * How a photo is scaled to the model's input (squeezed square, aspect ratio not kept, as the model was trained;
 * or at its own aspect ratio). A reduction is lanczos3's; an enlargement on both axes, libvips' bicubic affine
 * (its choice for any kernel but nearest and linear), which native/enlarge.c makes byte for byte in a fifth of
 * the CPU (enlargeRgb): change this kernel and the C enlargement must go too.
 */
const MODEL_RESIZE = { fit: 'fill', kernel: 'lanczos3' } as const;

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

export class ImageDecoder {
  constructor(private readonly maxPixels: number) {}

  /** Reads the header only: format and declared size, refusing oversized or unsupported images. */
  async probe(input: Buffer): Promise<ProbeResult> {
    if (input.length === 0) throw new PhotoError('INVALID_IMAGE', PHOTO_REFUSALS.empty, true);
    let meta: Metadata;
    try {
      meta = await sharp(input, { limitInputPixels: this.maxPixels }).metadata();
    } catch (err) {
      const refusal = asPhotoError(err, this.maxPixels);
      if (refusal.code !== 'TOO_LARGE') throw refusal;
      // Over the limit: the header read again without it (no pixels are decoded) names the size in the message.
      const size = await sharp(input, { limitInputPixels: false })
        .metadata()
        .catch(() => null);
      if (!size?.width || !size.height) throw refusal;
      throw new PhotoError('TOO_LARGE', PHOTO_REFUSALS.tooManyPixels(this.maxPixels, size.width, size.height), true);
    }
    if (!meta.format || !ACCEPTED_FORMATS.has(meta.format))
      throw new PhotoError('INVALID_IMAGE', PHOTO_REFUSALS.unsupportedFormat(meta.format), true);
    const width = meta.width ?? 0;
    const height = meta.height ?? 0;
    if (width * height > this.maxPixels)
      throw new PhotoError('TOO_LARGE', PHOTO_REFUSALS.tooManyPixels(this.maxPixels, width, height), true);
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
      const alpha = hasAlpha
        ? await resized(sharp(oriented.data, { raw }).extractChannel(channels === 4 ? 3 : 1))
            .raw()
            .toBuffer()
        : null;
      return { rgb, alpha, width, height, source: { width: srcW, height: srcH, format: meta.format ?? 'unknown' } };
    } catch (err) {
      if (err instanceof PhotoError) throw err;
      throw asPhotoError(err, this.maxPixels);
    }
  }

  /**
   * Resizes raw RGB to the model's input: `size` (MaskModel.inputSize), the model's square (aspect ratio not
   * kept, as the model was trained) or the photo's own aspect ratio. A number is a square of that side.
   */
  async toModelInput(img: DecodedImage, size: number | { width: number; height: number }): Promise<ModelInput> {
    const { width, height } = typeof size === 'number' ? { width: size, height: size } : size;
    if (nativeCutout && img.width < width && img.height < height) {
      const enlarged = await nativeCutout.enlargeRgb(img.rgb, img.width, img.height, width, height);
      return { rgb: Buffer.from(enlarged.buffer, enlarged.byteOffset, enlarged.byteLength), width, height };
    }
    const rgb = await sharp(img.rgb, { raw: { width: img.width, height: img.height, channels: 3 } })
      .resize(width, height, MODEL_RESIZE)
      .raw()
      .toBuffer();
    return { rgb, width, height };
  }

  /** A photo (RGB) reduced to w x h: the edge refinement's grid, made while the model runs. */
  async reduceRgb(img: { rgb: Buffer; width: number; height: number }, w: number, h: number): Promise<Buffer> {
    return sharp(img.rgb, { raw: { width: img.width, height: img.height, channels: 3 } })
      .resize(w, h, { fit: 'fill' })
      .raw()
      .toBuffer();
  }

  /** An encoded image's size and format, from its header. */
  async size(input: Buffer): Promise<{ width: number; height: number; format: string }> {
    const meta = await sharp(input, { limitInputPixels: this.maxPixels }).metadata();
    return { width: meta.width ?? 0, height: meta.height ?? 0, format: meta.format ?? 'unknown' };
  }
}
