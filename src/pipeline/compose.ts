// compose: where the cutout lands on the canvas. A pure function of sizes and Settings, so every
// layout rule is unit-tested without pixels; the renderer (adapters/images/renderer.ts) draws what it returns.
import type { BBox, Settings } from '../domain/batch.schemas.ts';
import type { RenderPlan } from '../adapters/images/renderer.ts';
import { findPreset } from '../presets/presets.ts';
import type { ImageFormat } from '../domain/batch.schemas.ts';

export type Layout = Omit<RenderPlan, 'background'> & { background: RenderPlan['background'] | { kind: 'image' } };

function hexToRgb(hex: string): { r: number; g: number; b: number } {
  const v = parseInt(hex.replace(/^#/, ''), 16);
  return { r: (v >> 16) & 255, g: (v >> 8) & 255, b: v & 255 };
}

/** bbox after the cutout is mirrored and turned clockwise by `rotate`. */
function transformBox(box: BBox, w: number, h: number, flip: boolean, rotate: number): BBox {
  const { y, width, height } = box;
  const x = flip ? w - box.x - width : box.x;
  switch (rotate) {
    case 90:
      return { x: h - y - height, y: x, width: height, height: width };
    case 180:
      return { x: w - x - width, y: h - y - height, width, height };
    case 270:
      return { x: y, y: w - x - width, width: height, height: width };
    default:
      return { x, y, width, height };
  }
}

export function planLayout(cutout: { width: number; height: number }, bbox: BBox | null, s: Settings): Layout {
  const flip = s.flip ?? false;
  const rotate = s.rotate ?? 0;
  const turned = rotate === 90 || rotate === 270;
  const W = turned ? cutout.height : cutout.width;
  const H = turned ? cutout.width : cutout.height;
  const preset = findPreset(s.presetId);

  let canvas = { width: W, height: H };
  let fixedCanvas = true;
  if (s.presetId === 'custom' && s.customSize) canvas = { ...s.customSize };
  else if (preset && preset.width > 0 && preset.height > 0) canvas = { width: preset.width, height: preset.height };
  else fixedCanvas = false;

  const fill = s.fill ?? (preset && preset.fillPercent > 0 ? preset.fillPercent / 100 : undefined);
  const box = bbox ? transformBox(bbox, cutout.width, cutout.height, flip, rotate) : null;
  const crop = fill !== undefined && box ? clampBox(box, W, H) : { left: 0, top: 0, width: W, height: H };
  // No canvas size of its own (the photo's size): trimming to the subject makes the canvas the
  // subject's box with the margin `fill` leaves, at the cut-out's own resolution.
  if (!fixedCanvas && fill !== undefined && box)
    canvas = { width: Math.max(1, Math.round(crop.width / fill)), height: Math.max(1, Math.round(crop.height / fill)) };

  // The area the subject may use: the whole canvas, or `fill` of it when reframing around the subject.
  const areaW = canvas.width * (fill ?? 1);
  const areaH = canvas.height * (fill ?? 1);
  const fit = Math.min(areaW / crop.width, areaH / crop.height) * (s.foregroundScale ?? 1);
  const width = Math.max(1, Math.min(canvas.width, Math.round(crop.width * fit)));
  const height = Math.max(1, Math.min(canvas.height, Math.round(crop.height * fit)));

  const marginX = (canvas.width - areaW) / 2;
  const marginY = (canvas.height - areaH) / 2;
  const align = s.align !== 'center' ? s.align : preset?.align === 'bottom' ? 'bottom' : 'center';
  const left =
    align === 'top-left' || align === 'bottom-left'
      ? marginX
      : align === 'top-right' || align === 'bottom-right'
        ? canvas.width - marginX - width
        : (canvas.width - width) / 2;
  const top =
    align === 'top-left' || align === 'top-right'
      ? marginY
      : align === 'bottom-left' || align === 'bottom-right' || align === 'bottom'
        ? canvas.height - marginY - height
        : (canvas.height - height) / 2;

  const mode = s.background.mode;
  const background: Layout['background'] =
    mode === 'white'
      ? { kind: 'color', r: 255, g: 255, b: 255 }
      : mode === 'solid'
        ? { kind: 'color', ...hexToRgb(s.background.color ?? '#ffffff') }
        : mode === 'image'
          ? { kind: 'image' }
          : { kind: 'transparent' };

  return {
    canvas,
    crop,
    place: { left: Math.round(Math.max(0, left)), top: Math.round(Math.max(0, top)), width, height },
    background,
    flip,
    rotate,
    corrections: { sharpen: s.sharpen, brightness: s.brightness, contrast: s.contrast, saturation: s.saturation },
    scale: s.scale,
  };
}

function clampBox(b: BBox, W: number, H: number) {
  const left = Math.max(0, Math.min(W - 1, Math.floor(b.x)));
  const top = Math.max(0, Math.min(H - 1, Math.floor(b.y)));
  return {
    left,
    top,
    width: Math.max(1, Math.min(W - left, Math.ceil(b.width))),
    height: Math.max(1, Math.min(H - top, Math.ceil(b.height))),
  };
}

/** The stored output's format: the preset's, else PNG (lossless, keeps transparency). `auto` = PNG when transparent, else JPEG. */
export function outputFormatFor(s: Settings): ImageFormat {
  const preset = findPreset(s.presetId);
  const transparent = s.background.mode === 'transparent';
  if (!preset || preset.format === 'auto') return transparent || !preset ? 'png' : 'jpeg';
  if (preset.format === 'jpeg' && transparent) return 'png';
  return preset.format;
}
