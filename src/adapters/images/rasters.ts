// What the quality checks read: the model's mask and input reduced for the automatic check, the photo
// under a cut-out for the report check, an output's border for the marketplace check, and the model's
// mask scaled back to a photo (the evaluation's upsampled baseline).
import sharp from 'sharp';
import type { DecodedImage } from './decoder.ts';
import { interleave, open, WHITE } from './sharp.ts';
import { reduceArea, reduceBlocks as reduceBlocksJs } from '../../imaging/mask-reduce.mjs';
import { nativeCutout } from '../../imaging/native.mjs';

const asBuffer = (a: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length);
/** Block averages in C where the addon was built (the same bytes; 2.9 → 0.7 ms for 1024² RGB), else in JavaScript. */
const reduceBlocks = nativeCutout?.reduceBlocks ?? reduceBlocksJs;

export class CheckRasters {
  constructor(private readonly maxPixels: number) {}

  /**
   * The model's square mask and input reduced to `edge` x `edge` for the quality check (one and three
   * channels), by block averages (mask-reduce.mjs reduceBlocks): each grid cell the mean of the pixels it
   * covers. The check was calibrated on grids made so; libvips' linear reduction spreads every edge over
   * more cells, which blurs the model's own doubt into its edges (held out, the check caught 75% of broken
   * results on linear grids against 88% on block averages: docs/research/quality-history.md).
   */
  async checkGrid(mask: Buffer, rgb: Buffer, size: number, edge: number): Promise<{ mask: Buffer; rgb: Buffer }> {
    return {
      mask: this.checkMask(mask, size, edge),
      rgb: await this.checkColours({ rgb, width: size, height: size }, edge),
    };
  }

  /**
   * The model's input (RGB) reduced to `edge` x `edge` for the check; it needs no mask, so it runs while the
   * model does. A square input by blocks; one at the photo's own aspect ratio by area averages (the same
   * figures where the blocks are whole), so each grid cell covers the same part of the photo either way.
   */
  async checkColours(input: { rgb: Buffer; width: number; height: number }, edge: number): Promise<Buffer> {
    const { rgb, width, height } = input;
    if (width === height && width % edge === 0) return asBuffer(reduceBlocks(rgb, width, 3, width / edge));
    return asBuffer(reduceArea(rgb, width, height, edge, edge, 3));
  }

  /** The model's mask (`size` square) reduced for the check. */
  checkMask(mask: Buffer, size: number, edge: number): Buffer {
    return asBuffer(reduceBlocks(mask, size, 1, size / edge));
  }

  /**
   * What the report check reads for a result: the cut-out's alpha at most `maxEdge` pixels on its long
   * edge, with the colours of the uploaded photo under it (oriented and in sRGB as the pipeline decodes
   * it, transparent photos flattened onto white). A cut-out keeps no colour where it is transparent, so
   * the photo is where the check sees what was cut away.
   */
  async photoUnderCutout(
    photo: Buffer,
    cutout: Buffer,
    maxEdge: number,
  ): Promise<{ rgba: Buffer; width: number; height: number }> {
    const fit = { fit: 'inside', withoutEnlargement: true, kernel: 'linear' } as const;
    const alpha = await sharp(cutout, { limitInputPixels: this.maxPixels })
      .ensureAlpha()
      .extractChannel(3)
      .resize(maxEdge, maxEdge, fit)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const { width, height } = alpha.info;
    // Orientation and colour first, in a pass of their own: sharp would otherwise order them after the resize.
    const upright = await open(photo, this.maxPixels)
      .rotate()
      .toColourspace('srgb')
      .flatten({ background: WHITE })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const colour = await sharp(upright.data, {
      raw: { width: upright.info.width, height: upright.info.height, channels: upright.info.channels },
    })
      .resize(width, height, { fit: 'fill', kernel: 'linear' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { rgba: interleave(colour.data, colour.info.channels, alpha.data, width * height), width, height };
  }

  /** Share of an image's outermost two-pixel ring that is exactly RGB 255 and opaque (a pure white background). */
  async borderWhiteShare(input: Buffer): Promise<number> {
    const { data, info } = await sharp(input, { limitInputPixels: this.maxPixels })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
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

  /**
   * An image (encoded, or raw RGBA when `raw` is given) as straight RGBA of at most `maxEdge` pixels on
   * its long edge, never enlarged (npm run bench -- all's claim figures read ground-truth cut-outs this way).
   * Colour and alpha are scaled apart, so the colours under transparent pixels survive: a resize of
   * RGBA would weigh them by their alpha, and turn every transparent pixel black.
   */
  async rgbaWithin(
    input: Buffer,
    maxEdge: number,
    raw?: { width: number; height: number },
  ): Promise<{ rgba: Buffer; width: number; height: number }> {
    const base = raw
      ? sharp(input, { raw: { ...raw, channels: 4 } })
      : sharp(input, { limitInputPixels: this.maxPixels });
    const fit = { fit: 'inside', withoutEnlargement: true, kernel: 'linear' } as const;
    // sharp orders its operations itself (resize before removeAlpha), so the colours are taken out
    // in a pass of their own before they are scaled.
    const full = await base.clone().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    const [colour, alpha] = await Promise.all([
      sharp(full.data, { raw: { width: full.info.width, height: full.info.height, channels: full.info.channels } })
        .resize(maxEdge, maxEdge, fit)
        .raw()
        .toBuffer({ resolveWithObject: true }),
      base.clone().ensureAlpha().extractChannel(3).resize(maxEdge, maxEdge, fit).raw().toBuffer(),
    ]);
    const { width, height, channels } = colour.info;
    return { rgba: interleave(colour.data, channels, alpha, width * height), width, height };
  }

  /** A square 8-bit mask resized to width x height; one channel out (sharp would otherwise give three). */
  async resizeMask(mask: Buffer, maskSize: number, width: number, height: number): Promise<Buffer> {
    return sharp(mask, { raw: { width: maskSize, height: maskSize, channels: 1 } })
      .resize(width, height, { fit: 'fill', kernel: 'cubic' })
      .extractChannel(0)
      .raw()
      .toBuffer();
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
}
