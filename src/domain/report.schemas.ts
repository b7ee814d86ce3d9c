// Reports of a broken result: what a seller sends, and the pixel check's verdict.
import { Type, type Static } from '@sinclair/typebox';
import { BBox, CLAIM_REASONS, oneOf } from './batch.schemas.ts';

export const ClaimReason = oneOf(CLAIM_REASONS, {
  description:
    'background-kept: background left in the cut-out; missing-part: part of the product cut away at its edge; hole: a transparent hole inside the product; ' +
    'extra-object: a separate object kept beside the product; rough-edges: a ragged or noisy outline.',
});

const Px = (description: string, minimum: number) => Type.Integer({ minimum, maximum: 100_000, description });

export const ReportRequest = Type.Object(
  {
    reason: ClaimReason,
    region: Type.Object(
      {
        x: Px('Left edge, cutout pixels', 0),
        y: Px('Top edge, cutout pixels', 0),
        width: Px('Width, cutout pixels', 1),
        height: Px('Height, cutout pixels', 1),
      },
      {
        additionalProperties: false,
        description:
          'Where the fault is, in cutout pixels (the size is `meta.cutout` of the photo; flag boxes use the same pixels). It must lie inside the cut-out. Mark the wrong part closely: the check judges the share of the region that shows the fault, so a box mostly over correct subject or background can be rejected. `background-kept` is also judged in windows of the region (down to half its width and height), so a box a quarter larger on each side than the kept background still passes (94% of true reports on the calibration set, 89% with the tight box); it counts only kept pixels in background colours that join the dropped background or the edge of the frame, so a part of the product in backdrop colours is not kept background, and some of them must lie two pixels or more in from the cut, so the blend of colours along a correct edge is not kept background either. `missing-part`: 86% of true reports with the tight box, 89% with the looser one.',
      },
    ),
    note: Type.Optional(
      Type.String({ maxLength: 500, description: 'Free text kept with the report; the check does not read it.' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'A report of a broken result: the reason and the region where it shows.',
  },
);
export type ReportRequest = Static<typeof ReportRequest>;

export const ReportVerdict = Type.Object(
  {
    accepted: Type.Boolean({ description: 'True when the pixels agree with the report: the photo is refunded.' }),
    reason: ClaimReason,
    region: BBox,
    confidence: Type.Number({ minimum: 0, maximum: 1, description: 'How sure the check is of its verdict.' }),
    evidence: Type.String({ description: 'One sentence with the measured numbers behind the verdict.' }),
    metrics: Type.Record(Type.String(), Type.Number(), { description: 'The measures, by name.' }),
  },
  { additionalProperties: false },
);
