// Marketplace presets, from shared/reference/marketplace-presets.json (each row keeps its source and
// `verified` flag: true only where the marketplace's own documentation backs the figures).
// The spec makes fillPercent, paddingPercent and quality required numbers; where the reference has no
// figure, 0 means "not set" for fill and padding (the photo keeps its framing), and quality falls back to 90.
import { createRequire } from 'node:module';
import type { OutputFormat } from '@matte/client/formats';
import type { Settings } from '../domain/batch.schemas.ts';

export interface Preset {
  id: string;
  label: string;
  width: number;
  height: number;
  fillPercent: number;
  paddingPercent: number;
  background: 'white' | 'transparent' | 'inherit';
  format: OutputFormat | 'auto';
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

const raw: RawPreset[] = createRequire(import.meta.url)('./marketplace-presets.json');

const PRESETS: readonly Preset[] = Object.freeze(
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

/**
 * Matte's own presets, listed after the marketplaces': not rules of any marketplace, so `verified` is
 * false and `source` says whose they are.
 */
const GENERIC: Preset[] = [
  {
    id: 'original',
    label: "Original – the photo's own size, transparent",
    width: 0,
    height: 0,
    fillPercent: 0,
    paddingPercent: 0,
    background: 'transparent',
    format: 'png',
    quality: 90,
    align: 'center',
    verified: false,
    source: 'Matte',
    notes: 'The cut-out as it is: same pixels as the photo, transparent background, PNG.',
  },
  {
    id: 'square-white-2000',
    label: 'Square white 2000 px',
    width: 2000,
    height: 2000,
    fillPercent: 85,
    paddingPercent: 0,
    background: 'white',
    format: 'jpeg',
    quality: 90,
    align: 'center',
    verified: false,
    source: 'Matte',
    notes: 'A common storefront format: 2000x2000, the product at 85% on pure white, JPEG.',
  },
  {
    id: 'transparent-png',
    label: 'Transparent PNG, trimmed to the product',
    width: 0,
    height: 0,
    fillPercent: 100,
    paddingPercent: 0,
    background: 'transparent',
    format: 'png',
    quality: 90,
    align: 'center',
    verified: false,
    source: 'Matte',
    notes: 'The product trimmed to its own bounds, transparent, PNG: for layouts and ads.',
  },
];

export const ALL_PRESETS: readonly Preset[] = Object.freeze([...PRESETS, ...GENERIC]);

const byId = new Map(ALL_PRESETS.map((p) => [p.id, p]));

/** A preset from a marketplace's rules (not one of Matte's own). */
export function isMarketplacePreset(id: string): boolean {
  return PRESETS.some((p) => p.id === id);
}

/** Every listed preset, and `custom` (a size given in Settings), is a valid preset id. */
export function isKnownPresetId(id: string): boolean {
  return id === 'custom' || byId.has(id);
}

export function findPreset(id: string): Preset | undefined {
  return byId.get(id);
}

/** The upload byte limit of the preset a photo's settings name, if it has one. */
export function presetLimit(settings: Settings): number | undefined {
  return findPreset(settings.presetId)?.maxBytes;
}
