// The preset and background picker, with a preview on a real photo of the batch: the server renders a
// finished photo with the chosen settings (`preview`, nothing saved); before any photo has finished, the
// first photo's own thumbnail is shown in the preset's frame.
import { useEffect, useState } from 'preact/hooks';
import type { BatchDefaults, BatchItem, Presets } from '@matte/client';
import { api, describeError, ok, type Shown } from './api.ts';
import { ErrorNote } from './ui.tsx';

export type Preset = Presets['presets'][number];
export interface Look {
  presetId: string;
  mode: 'transparent' | 'white' | 'solid';
  color: string;
}

const DEFAULT_LOOK: Look = { presetId: 'original', mode: 'transparent', color: '#f2f2f2' };

/**
 * The look that settings (a batch's defaults, a photo's own) give: its preset and background. A background the
 * picker has no choice for (an image) reads as transparent, and a colour kept only for a solid background.
 */
export function lookOf(settings: { presetId: string; background: { mode: string; color?: string } }): Look {
  const mode =
    (['transparent', 'white', 'solid'] as const).find((m) => m === settings.background.mode) ?? 'transparent';
  return {
    presetId: settings.presetId,
    mode,
    color: mode === 'solid' && settings.background.color ? settings.background.color : DEFAULT_LOOK.color,
  };
}

export function lookSettings(look: Look): Pick<BatchDefaults, 'presetId' | 'background'> {
  return {
    presetId: look.presetId,
    background: look.mode === 'solid' ? { mode: 'solid', color: look.color } : { mode: look.mode },
  };
}

export function LookPicker(props: {
  idPrefix: string;
  look: Look;
  onChange: (look: Look) => void;
  presets: Preset[];
  batchId: string;
  sample: BatchItem | undefined;
}) {
  const { idPrefix: p, look, onChange, presets, batchId, sample } = props;
  const [preview, setPreview] = useState<string | null>(null);
  const [error, setError] = useState<Shown | null>(null);
  const finished = sample?.status === 'done';

  useEffect(() => {
    if (!sample || !finished) return;
    let url: string | null = null;
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const image = await ok(
          api.POST('/v1/jobs/{id}/items/{itemId}/preview', {
            params: { path: { id: batchId, itemId: sample.id } },
            body: { settings: lookSettings(look), format: 'webp' },
            parseAs: 'blob',
            signal: controller.signal,
          }),
        );
        url = URL.createObjectURL(image as unknown as Blob);
        setPreview(url);
        setError(null);
      } catch (err) {
        if (!controller.signal.aborted) setError(describeError(err));
      }
    }, 300);
    return () => {
      clearTimeout(timer);
      controller.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [batchId, sample?.id, sample?.rev, finished, look.presetId, look.mode, look.color]);

  const preset = presets.find((x) => x.id === look.presetId);
  return (
    <div class="look">
      <div class="fields">
        <label for={`${p}-preset`}>Preset</label>
        <select
          id={`${p}-preset`}
          value={look.presetId}
          onChange={(e) => onChange({ ...look, presetId: e.currentTarget.value })}
        >
          <option value="original">Original size</option>
          {presets.map((x) => (
            <option key={x.id} value={x.id}>
              {x.label}
              {x.width ? ` (${x.width}×${x.height})` : ''}
            </option>
          ))}
        </select>
        <label for={`${p}-background`}>Background</label>
        <select
          id={`${p}-background`}
          value={look.mode}
          onChange={(e) => onChange({ ...look, mode: e.currentTarget.value as Look['mode'] })}
        >
          <option value="transparent">Transparent</option>
          <option value="white">White</option>
          <option value="solid">Colour</option>
        </select>
        {look.mode === 'solid' ? (
          <>
            <label for={`${p}-color`}>Background colour</label>
            <input
              id={`${p}-color`}
              type="color"
              value={look.color}
              onInput={(e) => onChange({ ...look, color: e.currentTarget.value })}
            />
          </>
        ) : null}
        {preset?.background === 'white' && look.mode === 'transparent' ? (
          <p class="hint">{preset.label} asks for a white background; transparent results may be refused there.</p>
        ) : null}
      </div>
      <figure class="preview">
        {finished && preview ? (
          <img src={preview} alt={`Preview of ${sample!.name} with these settings`} class="checker" />
        ) : sample?.inputThumbUrl ? (
          <img src={sample.inputThumbUrl} alt={`${sample.name}, before the cut-out`} />
        ) : (
          <div class="empty-preview">Add photos to preview them here.</div>
        )}
        <figcaption>
          {finished
            ? `Preview of ${sample!.name}`
            : 'The cut-out previews here once a photo has finished (run a sample).'}
        </figcaption>
      </figure>
      <ErrorNote error={error} />
    </div>
  );
}
