// sharp (libvips), set up once for the whole process, and what every image adapter shares: how untrusted
// input is opened and how libvips' errors become the spec's photo errors. The adapters are split by what
// their callers need: decoding photos for the model (decoder.ts), rendering and encoding outputs
// (renderer.ts), and the rasters the quality checks read (rasters.ts). Untrusted input always goes
// through limitInputPixels: libvips reads the declared size from the header and refuses before decoding.
import sharp, { type Sharp } from 'sharp';
import { PhotoError } from '../../errors.ts';
import { PHOTO_REFUSALS } from '../../domain/photo-refusals.ts';
import { INPUT_FORMATS } from '@matte/client/formats';

// libvips' own cache holds decoded tiles of images we never read twice; turn it off to keep memory flat.
sharp.cache(false);
// One libvips thread per operation by default: the model's two threads already fill two cores.
sharp.concurrency(1);

/**
 * libvips threads per image operation (MATTE_IMAGE_THREADS, default 1). Two halve the large resizes of
 * a single photo (a 1024² mask up to 2000²: 130 → 60 ms), at some cost to batch throughput.
 */
export function setImageThreads(threads: number): void {
  sharp.concurrency(threads);
}

export const ACCEPTED_FORMATS: ReadonlySet<string> = new Set(Object.keys(INPUT_FORMATS));
export const THUMB_EDGE = 512;
export const WHITE = { r: 255, g: 255, b: 255 };

/** An untrusted image, opened with the pixel limit on. */
export function open(input: Buffer, maxPixels: number): Sharp {
  // failOn 'error': a truncated or corrupt file is an error, not a grey half-image. pages: 1 takes the first frame of an animation.
  return sharp(input, { limitInputPixels: maxPixels, failOn: 'error', pages: 1 });
}

/** libvips' refusal as the photo error the spec names. */
export function asPhotoError(err: unknown, maxPixels: number): PhotoError {
  const message = err instanceof Error ? err.message : String(err);
  if (/pixel limit/i.test(message)) return new PhotoError('TOO_LARGE', PHOTO_REFUSALS.tooManyPixels(maxPixels), true);
  return new PhotoError('INVALID_IMAGE', PHOTO_REFUSALS.unreadable, true);
}

/** Straight RGBA from colours (grey or RGB, `channels` a pixel) and a separate alpha plane. */
export function interleave(colour: Buffer, channels: number, alpha: Buffer, pixels: number): Buffer {
  const rgba = Buffer.alloc(pixels * 4);
  for (let i = 0, p = 0; i < pixels; i++, p += channels) {
    rgba[i * 4] = colour[p];
    rgba[i * 4 + 1] = colour[p + (channels >= 3 ? 1 : 0)];
    rgba[i * 4 + 2] = colour[p + (channels >= 3 ? 2 : 0)];
    rgba[i * 4 + 3] = alpha[i];
  }
  return rgba;
}
