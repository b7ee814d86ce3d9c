// Does a rendered photo meet its marketplace preset? Checked on the encoded file as it will be
// uploaded: pixel size, a pure white (RGB 255) border where the preset asks for white, how much of the
// canvas the product spans, and the file size against the upload limit. A file over the limit is
// re-encoded until it fits (the one thing fixed here); what else the rendering did to meet the preset
// (white background, reframing) is listed as fixed too, so a seller sees why the photo passes.
import type { ImageRenderer } from '../adapters/images/renderer.ts';
import type { CheckRasters } from '../adapters/images/rasters.ts';
import type { Compliance, ImageFormat, Settings } from '../domain/batch.schemas.ts';
import { findPreset, isMarketplacePreset } from '../presets/presets.ts';
import type { Layout } from './compose.ts';

/** Share of border pixels that must be exactly RGB 255 for a white background to count as pure white. */
const WHITE_BORDER_SHARE = 0.99;
/** Fill is met when the product spans at least this many percentage points less than asked (rounding). */
const FILL_TOLERANCE = 1;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export async function checkCompliance(
  images: { renderer: Pick<ImageRenderer, 'exportOutput'>; rasters: Pick<CheckRasters, 'borderWhiteShare'> },
  output: Buffer,
  format: ImageFormat,
  size: { width: number; height: number },
  settings: Settings,
  layout: Layout,
): Promise<{ output: Buffer; compliance?: Compliance }> {
  const preset = findPreset(settings.presetId);
  if (!preset || !isMarketplacePreset(preset.id)) return { output };
  const checks: Compliance['checks'] = [];
  const fixed: string[] = [];

  if (preset.width > 0 && preset.height > 0) {
    const expected = `${preset.width * settings.scale}x${preset.height * settings.scale}`;
    checks.push({
      check: 'size',
      ok: `${size.width}x${size.height}` === expected,
      expected,
      actual: `${size.width}x${size.height}`,
    });
  }
  if (preset.background === 'white') {
    const share = await images.rasters.borderWhiteShare(output);
    const ok = share >= WHITE_BORDER_SHARE;
    checks.push({
      check: 'background',
      ok,
      expected: 'pure white (RGB 255) around the product',
      actual: `${(share * 100).toFixed(1)}% of the border is RGB 255`,
    });
    if (ok && settings.background.mode === 'white') fixed.push('background replaced with pure white (RGB 255)');
  }
  if (preset.fillPercent > 0) {
    const spans = Math.round(
      Math.max(layout.place.width / layout.canvas.width, layout.place.height / layout.canvas.height) * 100,
    );
    const asked = settings.fill !== undefined ? Math.round(settings.fill * 100) : preset.fillPercent;
    checks.push({
      check: 'fill',
      ok: spans >= preset.fillPercent - FILL_TOLERANCE,
      expected: `product spans at least ${preset.fillPercent}% of the canvas`,
      actual: `${spans}%`,
    });
    if (layout.crop.width < size.width || asked === preset.fillPercent)
      fixed.push(`product trimmed and placed to span ${asked}% of the canvas`);
  }
  if (preset.maxBytes !== undefined) {
    if (output.length > preset.maxBytes) {
      const before = output.length;
      output = await images.renderer.exportOutput(output, format, format, 'marketplace', preset.maxBytes);
      fixed.push(
        `re-encoded from ${mb(before)} to ${mb(output.length)} to stay under the ${mb(preset.maxBytes)} upload limit`,
      );
    }
    checks.push({
      check: 'bytes',
      ok: output.length <= preset.maxBytes,
      expected: `at most ${preset.maxBytes} bytes`,
      actual: `${output.length} bytes`,
    });
  }
  return { output, compliance: { presetId: preset.id, meets: checks.every((c) => c.ok), checks, fixed } };
}
