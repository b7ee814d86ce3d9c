// diagnose: the automatic check of a finished mask. It measures the mask against the photo
// (check/features.ts), turns the measures into flags a person can read (code, label, where, how bad),
// and asks the calibrated model (check/calibration.ts) how likely the cut-out is broken. The score is
// 100 for certainly clean, 0 for certainly broken, and below 50 exactly when the calibrated
// probability reaches the fitted threshold: that photo ends `review: red` and is not charged.
// A photo with no subject at all fails with NO_SUBJECT; one whose "subject" is the whole frame is red
// whatever the model says (nothing was removed; the eval photos have no such case to calibrate on).
import { PhotoError } from '../errors.ts';
import type { BBox, Quality, QualityFlag } from '../domain/batch.schemas.ts';
import { CHECK_GRID, measure, type CheckEvidence } from './check/features.ts';
import { brokenProbability, featureVector, loadCalibration, scoreFor, type Calibration } from './check/calibration.ts';
import { scaleBox } from '../imaging/raster.mjs';

/** Below this share of foreground pixels there is no subject to cut out. */
export const NO_SUBJECT_FILL = 0.001;
/** A score under this sends the photo to review (`review: red`, credit refunded). */
const RED_SCORE = 50;
/** Above this share of the frame nothing was cut away. */
export const WHOLE_FRAME_FILL = 0.95;

export interface Diagnosis {
  quality: Quality;
  /** In cutout pixels. */
  bbox: BBox | null;
  subjectFill: number;
  red: boolean;
  /** The calibrated probability that the cut-out is broken. */
  brokenProbability: number;
}

const LABELS: Record<QualityFlag['code'], string> = {
  'background-kept': 'Parts of the background may have been kept',
  'hole-in-subject': 'The cut-out is transparent or see-through inside the subject',
  'low-confidence': 'Many pixels are neither clearly subject nor background',
  'subject-too-small': 'The subject covers very little of the photo',
  'colour-spill': 'Background colour shows along the subject’s edge',
  'subject-touches-edge': 'The subject is cut off by the photo border',
  'multiple-objects': 'The cut-out holds more than one separate object',
  'uncertain-edges': 'The cut-out’s edge may be in the wrong place: part of the subject may be missing',
  halo: 'A faint fringe of background surrounds the subject',
};

let calibration: Calibration | undefined;
function shippedCalibration(): Calibration {
  calibration ??= loadCalibration();
  return calibration;
}

/** The share of a mask's pixels at 128 or more (the subject), from its histogram of values. */
export function subjectFillOf(histogram: Uint32Array): number {
  let total = 0;
  let fg = 0;
  for (let v = 0; v < 256; v++) {
    total += histogram[v];
    if (v >= 128) fg += histogram[v];
  }
  return total ? fg / total : 0;
}

/**
 * @param prediction the model worker's figures: mask values 0..255 and the box of mask pixels >= 128 (maskSize x maskSize)
 * @param grid the mask and the model's input reduced for the check (CheckRasters.checkGrid, CHECK_GRID square)
 */
export function diagnose(
  prediction: { histogram: Uint32Array; bbox: BBox | null },
  grid: { mask: Uint8Array; rgb: Uint8Array },
  maskSize: number,
  cutout: { width: number; height: number },
  cal: Calibration = shippedCalibration(),
): Diagnosis {
  const subjectFill = subjectFillOf(prediction.histogram);
  if (subjectFill < NO_SUBJECT_FILL || !prediction.bbox)
    throw new PhotoError('NO_SUBJECT', 'No subject was found in the photo.', true);
  const bbox = scaleBox(prediction.bbox, cutout.width / maskSize, cutout.height / maskSize);

  const evidence = measure(grid);
  const p = brokenProbability(cal, featureVector(evidence.features, cal.features));
  let score = scoreFor(p, cal.threshold);
  const flags = flagsFor(evidence, subjectFill, cutout, bbox);
  if (subjectFill > WHOLE_FRAME_FILL) score = Math.min(score, 10);
  score = Math.round(score * 10) / 10;
  return {
    quality: { score, flags },
    bbox,
    subjectFill: Math.round(subjectFill * 10000) / 10000,
    red: score < RED_SCORE,
    brokenProbability: Math.round(p * 10000) / 10000,
  };
}

/**
 * The check's flag for a subject whose inside stays see-through in the cut-out, once its inside is made opaque
 * (imaging/solid-interior.mjs): `hole-in-subject`, with the see-through part's box, beside or in place of the
 * check's own hole flag (the larger severity wins). `share` is of the subject's inside, at least 0.5% of the long
 * side in; it starts just above the largest share of a clean eval result (IoU >= 0.95: 2.1%).
 */
export function withSeeThrough(quality: Quality, seeThrough: { share: number; box: BBox | null }): Quality {
  const severity = Math.round(ramp(seeThrough.share, SEE_THROUGH_FROM, SEE_THROUGH_TO) * 100) / 100;
  const hole = quality.flags.find((f) => f.code === 'hole-in-subject');
  if (severity <= 0 || (hole && hole.severity >= severity)) return quality;
  const flag: QualityFlag = {
    code: 'hole-in-subject',
    label: LABELS['hole-in-subject'],
    bbox: seeThrough.box,
    severity,
  };
  const flags = [...quality.flags.filter((f) => f !== hole), flag].sort((a, b) => b.severity - a.severity);
  return { ...quality, flags };
}

/** The see-through share of a subject's inside where its flag starts and where it is whole. */
const SEE_THROUGH_FROM = 0.025;
const SEE_THROUGH_TO = 0.2;

/** Severity rises from 0 at `from` to 1 at `to`. */
const ramp = (v: number, from: number, to: number) => Math.max(0, Math.min(1, (v - from) / (to - from)));

function flagsFor(
  e: CheckEvidence,
  subjectFill: number,
  cutout: { width: number; height: number },
  subjectBox: BBox,
): QualityFlag[] {
  const f = e.features;
  const toCutout = (b: BBox | null) => (b ? scaleBox(b, cutout.width / CHECK_GRID, cutout.height / CHECK_GRID) : null);
  const flags: QualityFlag[] = [];
  const add = (code: QualityFlag['code'], severity: number, box: BBox | null) => {
    if (severity > 0) flags.push({ code, label: LABELS[code], bbox: box, severity: Math.round(severity * 100) / 100 });
  };
  // Each flag starts just above the largest value any clean eval result (IoU >= 0.95) showed, so a flag
  // points at something unusual; the calibrated score, not the flags, decides review and refund.
  add(
    'background-kept',
    subjectFill > WHOLE_FRAME_FILL ? 1 : ramp(f.backgroundKept, 0.15, 0.35),
    toCutout(e.boxes.backgroundKept),
  );
  // Either many pixels half kept (soft), or a large part left out that the model did not rule out (the
  // uncertain part, with its own box: where the seller should look).
  const soft = ramp(f.soft, 0.4, 1.5);
  const unsure = ramp(f.uncertainPart, 0.1, 0.5);
  add('low-confidence', Math.max(soft, unsure), toCutout(unsure > soft ? e.boxes.uncertainPart : e.boxes.soft));
  add('multiple-objects', ramp(f.fragmented, 0.02, 0.3), toCutout(e.boxes.fragment));
  // Either subject colours just outside the cut (missing), or an outline over flat colour (weak edges).
  const missing = ramp(f.missing, 0.15, 0.45);
  const weak = ramp(f.weakEdges, 0.08, 0.3);
  add('uncertain-edges', Math.max(missing, weak), toCutout(weak > missing ? e.boxes.weakEdges : e.boxes.missing));
  add('hole-in-subject', ramp(f.holes, 0.1, 0.4), toCutout(e.boxes.hole));
  add('colour-spill', ramp(f.spill, 0.55, 0.9), toCutout(e.boxes.spill));
  add('halo', ramp(f.halo, 1.2, 2), toCutout(e.boxes.halo));
  add('subject-too-small', ramp(0.02 - subjectFill, 0, 0.02), subjectBox);
  // Not held to the clean results' range as the flags above: a product cut off by the frame, on one side or more,
  // is refused by marketplaces (Amazon, Shopee, Kaufland: docs/check.md), whatever the cut-out's quality.
  if (f.edgesTouched >= 1 && subjectFill <= WHOLE_FRAME_FILL)
    add('subject-touches-edge', f.edgesTouched / 4, subjectBox);
  return flags.sort((a, b) => b.severity - a.severity);
}
