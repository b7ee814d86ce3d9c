// Settings every photo starts with: request defaults merged over the service defaults and the preset's own.
import { AppError } from '../errors.ts';
import type { JobDefaults, Settings } from '../domain/batch.schemas.ts';
import type { SettingsPatch } from '../domain/render.schemas.ts';
import { findPreset, isKnownPresetId } from '../presets/presets.ts';

export function resolveSettings(
  input: JobDefaults | undefined,
  opts: { hasBackgroundImage: boolean; path: string },
): Settings {
  const d = input ?? {};
  const presetId = d.presetId ?? 'original';
  if (!isKnownPresetId(presetId)) {
    throw new AppError('VALIDATION', `Unknown preset "${presetId}".`, {
      errors: [
        { path: `${opts.path}/presetId`, message: 'must be a preset id from GET /v1/presets, "original" or "custom"' },
      ],
    });
  }
  if (presetId === 'custom' && !d.customSize) {
    throw new AppError('VALIDATION', 'Preset "custom" needs customSize.', {
      errors: [{ path: `${opts.path}/customSize`, message: 'required when presetId is "custom"' }],
    });
  }
  const preset = findPreset(presetId);
  // A preset that asks for white makes white the default background; the caller's choice still wins.
  const backgroundMode = d.background?.mode ?? (preset?.background === 'white' ? 'white' : 'transparent');
  if (backgroundMode === 'solid' && !d.background?.color) {
    throw new AppError('VALIDATION', 'Background mode "solid" needs a color.', {
      errors: [{ path: `${opts.path}/background/color`, message: 'required when mode is "solid"' }],
    });
  }
  if (backgroundMode === 'image' && !opts.hasBackgroundImage) {
    throw new AppError(
      'VALIDATION',
      'Background mode "image" needs a background image (multipart field `background`).',
      {
        errors: [
          { path: `${opts.path}/background/mode`, message: 'mode "image" requires an uploaded background image' },
        ],
      },
    );
  }
  const settings: Settings = {
    presetId,
    background: {
      mode: backgroundMode,
      ...(backgroundMode === 'solid' && d.background?.color ? { color: normaliseColor(d.background.color) } : {}),
      hasImage: backgroundMode === 'image',
    },
    align: d.align ?? 'center',
    scale: d.scale ?? 1,
    sharpen: d.sharpen ?? 0,
    brightness: d.brightness ?? 0,
    contrast: d.contrast ?? 0,
    saturation: d.saturation ?? 0,
  };
  if (d.customSize) settings.customSize = d.customSize;
  if (d.fill !== undefined) settings.fill = d.fill;
  if (d.flip !== undefined) settings.flip = d.flip;
  if (d.rotate !== undefined) settings.rotate = d.rotate;
  if (d.foregroundScale !== undefined) settings.foregroundScale = d.foregroundScale;
  return settings;
}

function normaliseColor(color: string): string {
  return `#${color.replace(/^#/, '').toLowerCase()}`;
}

/** A photo's Settings with a patch laid over them, checked like new defaults. */
export function patchSettings(
  current: Settings,
  patch: SettingsPatch,
  opts: { hasBackgroundImage: boolean; path: string },
): Settings {
  const { mode, color } = current.background;
  const base: JobDefaults = { ...current, background: color !== undefined ? { mode, color } : { mode } };
  const merged: JobDefaults = { ...base, ...patch };
  // A new preset brings its own background unless the patch names one.
  if (patch.presetId !== undefined && patch.presetId !== current.presetId && patch.background === undefined)
    delete merged.background;
  if (merged.presetId !== 'custom') delete merged.customSize;
  return resolveSettings(merged, opts);
}
