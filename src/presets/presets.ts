// Marketplace presets, from shared/reference/marketplace-presets.json (each row keeps its source and
// `verified` flag: true only where the marketplace's own documentation backs the figures).
// The spec makes fillPercent, paddingPercent and quality required numbers; where the reference has no
// figure, 0 means "not set" for fill and padding (the photo keeps its framing), and quality falls back to 90.
import { createRequire } from 'node:module';

export interface Preset {
  id: string;
  label: string;
  width: number;
  height: number;
  fillPercent: number;
  paddingPercent: number;
  background: 'white' | 'transparent' | 'inherit';
  format: 'png' | 'jpeg' | 'webp' | 'auto';
  quality: number;
  align: 'center' | 'bottom';
  maxBytes?: number;
  verified: boolean;
  source?: string;
  sourceUrl?: string;
  notes?: string;
  verifiedAt?: string;
}

type RawPreset = Omit<Preset, 'fillPercent' | 'paddingPercent' | 'quality' | 'maxBytes'> & {
  fillPercent: number | null;
  paddingPercent: number | null;
  quality: number | null;
  maxBytes: number | null;
};

const raw = createRequire(import.meta.url)('./marketplace-presets.json') as RawPreset[];

export const PRESETS: readonly Preset[] = Object.freeze(
  raw.map((p) => {
    const { maxBytes, ...rest } = p;
    return {
      ...rest,
      fillPercent: p.fillPercent ?? 0,
      paddingPercent: p.paddingPercent ?? 0,
      quality: p.quality ?? 90,
      ...(maxBytes ? { maxBytes } : {}),
    };
  }),
);

const byId = new Map(PRESETS.map((p) => [p.id, p]));

/** `original` and `custom` are not marketplace presets but are valid preset ids in Settings. */
export function isKnownPresetId(id: string): boolean {
  return id === 'original' || id === 'custom' || byId.has(id);
}

export function findPreset(id: string): Preset | undefined {
  return byId.get(id);
}

/** The upload byte limit of the preset a photo's settings (JSON) name, if it has one. */
export function presetLimit(settingsJson: string): number | undefined {
  const { presetId } = JSON.parse(settingsJson) as { presetId: string };
  return findPreset(presetId)?.maxBytes;
}
