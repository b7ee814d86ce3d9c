// Outputs: a cut-out drawn onto its canvas as a RenderPlan says, encoded, converted for export, and thumbnails.
import sharp, { type Sharp } from 'sharp';
import type { ImageFormat, Optimize } from '../../domain/batch.schemas.ts';
import { exportKeepsStored } from '../../domain/export-rules.ts';
import { THUMB_EDGE, WHITE } from './sharp.ts';

/**
 * Thumbnails: WebP effort 2 instead of the default 4 halves the encode (46 → 24 ms for a product photo) for files 5% larger.
 * alphaQuality 80 (lossy alpha instead of lossless) takes another 11% off a cut-out's thumbnail (24.1 → 21.3 ms)
 * and 2% off its size, for alpha off by at most 1 of 255 (mean 0.024) on the bench photo.
 */
const THUMB_WEBP = { quality: 80, effort: 2, alphaQuality: 80 } as const;

export interface RenderPlan {
  canvas: { width: number; height: number };
  /** Region of the cutout drawn (after flip/rotate). */
  crop: { left: number; top: number; width: number; height: number };
  /** Where and how large it lands on the canvas. */
  place: { left: number; top: number; width: number; height: number };
  background:
    { kind: 'transparent' } | { kind: 'color'; r: number; g: number; b: number } | { kind: 'image'; data: Buffer };
  flip: boolean;
  rotate: 0 | 90 | 180 | 270;
  corrections: { sharpen: number; brightness: number; contrast: number; saturation: number };
  scale: 1 | 2 | 4;
}

export class ImageRenderer {
  constructor(private readonly maxPixels: number) {}

  /** Draws a cutout onto a canvas as the plan says; returns raw RGBA. */
  async render(cutout: Buffer, plan: RenderPlan): Promise<{ data: Buffer; width: number; height: number }> {
    let subject = sharp(cutout, { limitInputPixels: this.maxPixels });
    if (plan.flip) subject = subject.flop();
    if (plan.rotate) subject = subject.rotate(plan.rotate);
    // Rotation needs its own pass before extract, or libvips applies them in the wrong order.
    const turned = await subject.png({ compressionLevel: 0 }).toBuffer();
    let piece = sharp(turned).extract(plan.crop).resize(plan.place.width, plan.place.height, { fit: 'fill' });
    const c = plan.corrections;
    if (c.brightness || c.saturation)
      piece = piece.modulate({ brightness: 1 + c.brightness / 100, saturation: 1 + c.saturation / 100 });
    if (c.contrast) {
      const a = 1 + c.contrast / 100;
      piece = piece.linear([a, a, a, 1], [128 * (1 - a), 128 * (1 - a), 128 * (1 - a), 0]);
    }
    if (c.sharpen) piece = piece.sharpen({ sigma: 0.5 + (c.sharpen / 100) * 2.5 });
    const pieceBuf = await piece.ensureAlpha().png({ compressionLevel: 0 }).toBuffer();
    const { width, height } = plan.canvas;
    let canvas: Sharp;
    if (plan.background.kind === 'image') {
      canvas = sharp(plan.background.data, { limitInputPixels: this.maxPixels })
        .rotate()
        .resize(width, height, { fit: 'cover' })
        .ensureAlpha();
    } else {
      const bg = plan.background.kind === 'color' ? { ...plan.background, alpha: 1 } : { r: 0, g: 0, b: 0, alpha: 0 };
      canvas = sharp({
        create: { width, height, channels: 4, background: { r: bg.r, g: bg.g, b: bg.b, alpha: bg.alpha } },
      });
    }
    let out = sharp(
      await canvas
        .composite([{ input: pieceBuf, left: plan.place.left, top: plan.place.top }])
        .png({ compressionLevel: 0 })
        .toBuffer(),
    );
    if (plan.scale > 1) out = out.resize(width * plan.scale, height * plan.scale, { kernel: 'lanczos3' });
    const result = await out.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    return { data: result.data, width: result.info.width, height: result.info.height };
  }

  /** Encodes raw RGBA. JPEG has no alpha: it is flattened onto white. */
  async encodeRaw(
    raw: { data: Buffer; width: number; height: number },
    format: ImageFormat,
    optimize: Optimize,
    opaque: boolean,
  ): Promise<Buffer> {
    const img = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } });
    return this.encode(opaque ? img.removeAlpha() : img, format, optimize);
  }

  /**
   * The bytes to send for a stored output: as stored when nothing needs converting, else converted.
   * `marketplace` keeps the stored encoding unless it is over the preset's upload limit (`maxBytes`),
   * then steps the quality down until it fits; `lossless` and `web` always re-encode.
   */
  async exportOutput(
    stored: Buffer,
    storedFormat: ImageFormat,
    format: ImageFormat,
    optimize: Optimize,
    maxBytes?: number,
  ): Promise<Buffer> {
    if (exportKeepsStored(storedFormat, stored.length, format, optimize, maxBytes)) return stored;
    let out = await this.convert(stored, format, optimize === 'marketplace' ? 'off' : optimize);
    if (optimize !== 'marketplace' || maxBytes === undefined || out.length <= maxBytes) return out;
    // Over the marketplace's limit: a PNG is palettised once; a lossy format steps its quality down until it fits.
    if (format === 'png') return this.convert(stored, 'png', 'web');
    for (const quality of [85, 75, 65, 50]) {
      out = await this.lossy(sharp(stored, { limitInputPixels: this.maxPixels }), format, quality).toBuffer();
      if (out.length <= maxBytes) break;
    }
    return out;
  }

  /** A lossy format at a quality (JPEG flattened onto white); every lossy output format has its case. */
  private lossy(img: Sharp, format: Exclude<ImageFormat, 'png'>, quality: number): Sharp {
    switch (format) {
      case 'jpeg':
        return img.flatten({ background: WHITE }).jpeg({ quality, mozjpeg: true });
      case 'webp':
        return img.webp({ quality });
    }
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
        return img
          .webp(
            optimize === 'lossless' ? { lossless: true } : { quality: optimize === 'web' ? 80 : 90, alphaQuality: 100 },
          )
          .toBuffer();
      case 'png':
        // 'off' favours speed (zlib level 6); the optimised exports spend more effort for smaller files.
        return img
          .png({
            compressionLevel: optimize === 'off' ? 6 : 9,
            adaptiveFiltering: optimize !== 'off',
            palette: optimize === 'web',
          })
          .toBuffer();
    }
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
}
