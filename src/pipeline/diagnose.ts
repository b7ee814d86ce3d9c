// diagnose: figures and a first quality score from the model's mask alone (no pixels of the photo).
// The full automatic check (holes, spill, halos, several objects) comes later; this stage already
// refuses empty results (NO_SUBJECT) and flags what a mask histogram and bounding box can show.
import { PhotoError } from '../errors.ts';
import type { BBox, Quality, QualityFlag } from '../domain/batch.schemas.ts';

/** Below this share of foreground pixels there is no subject to cut out. */
export const NO_SUBJECT_FILL = 0.001;
/** A score under this sends the photo to review (`review: red`, credit refunded). */
export const RED_SCORE = 50;

export interface Diagnosis {
  quality: Quality;
  /** In cutout pixels. */
  bbox: BBox | null;
  subjectFill: number;
  red: boolean;
}

const LABELS: Record<string, string> = {
  'background-kept': 'Most of the photo was kept: the background may still be there',
  'subject-too-small': 'The subject covers very little of the photo',
  'low-confidence': 'Many pixels are neither clearly subject nor background',
  'subject-touches-edge': 'The subject is cut off by the photo border',
};

function flag(code: QualityFlag['code'], severity: number, bbox: BBox | null): QualityFlag {
  return { code, label: LABELS[code] ?? code, bbox, severity: Math.round(Math.min(1, Math.max(0, severity)) * 100) / 100 };
}

/**
 * @param histogram count of mask pixels per value 0..255 at mask resolution
 * @param maskBox bbox of pixels >= 128 at mask resolution (maskSize x maskSize)
 */
export function diagnose(histogram: Uint32Array, maskBox: BBox | null, maskSize: number, cutout: { width: number; height: number }): Diagnosis {
  let total = 0;
  let fg = 0;
  let uncertain = 0;
  for (let v = 0; v < 256; v++) {
    total += histogram[v];
    if (v >= 128) fg += histogram[v];
    if (v > 25 && v < 230) uncertain += histogram[v];
  }
  const subjectFill = total ? fg / total : 0;
  if (subjectFill < NO_SUBJECT_FILL || !maskBox) throw new PhotoError('NO_SUBJECT', 'No subject was found in the photo.', true);

  const sx = cutout.width / maskSize;
  const sy = cutout.height / maskSize;
  const bbox: BBox = {
    x: Math.round(maskBox.x * sx),
    y: Math.round(maskBox.y * sy),
    width: Math.max(1, Math.round(maskBox.width * sx)),
    height: Math.max(1, Math.round(maskBox.height * sy)),
  };

  const flags: QualityFlag[] = [];
  let score = 100;
  if (subjectFill > 0.95) {
    const s = (subjectFill - 0.95) / 0.05;
    flags.push(flag('background-kept', 0.5 + s / 2, null));
    score -= 40 + 30 * s;
  }
  if (subjectFill < 0.02) {
    const s = 1 - subjectFill / 0.02;
    flags.push(flag('subject-too-small', s, bbox));
    score -= 20 + 30 * s;
  }
  // Soft pixels relative to the subject's own area: hair and fur give some, a guess gives many.
  const softness = uncertain / Math.max(fg, 1);
  if (softness > 0.2) {
    const s = Math.min(1, (softness - 0.2) / 0.6);
    flags.push(flag('low-confidence', s, bbox));
    score -= 15 + 35 * s;
  }
  const edges = [maskBox.x <= 0, maskBox.y <= 0, maskBox.x + maskBox.width >= maskSize, maskBox.y + maskBox.height >= maskSize].filter(Boolean).length;
  if (edges >= 2 && subjectFill <= 0.95) {
    flags.push(flag('subject-touches-edge', edges / 4, bbox));
    score -= 5 * edges;
  }
  score = Math.max(0, Math.min(100, Math.round(score)));
  flags.sort((a, b) => b.severity - a.severity);
  return { quality: { score, flags }, bbox, subjectFill: Math.round(subjectFill * 10000) / 10000, red: score < RED_SCORE };
}
