// The review queue: photos the check flagged (finished, not charged) and photos that failed.
import { Type, type Static } from '@sinclair/typebox';
import { BBox, Counts, JobStatus, Nullable, QualityFlag } from './batch.schemas.ts';

export const ReviewEntry = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    kind: Type.Union([Type.Literal('review'), Type.Literal('failed')], {
      description: 'review = finished but flagged by the check (not charged); failed = could not be processed.',
    }),
    reason: Type.String({ description: 'One line: the top flag, "Low overall score", or the failure message.' }),
    code: Type.String({ description: 'A quality flag code, `low-score`, or a failure code (ItemError.code).' }),
    severity: Nullable(Type.Number()),
    score: Nullable(Type.Number()),
    bbox: Nullable(BBox),
    flags: Type.Array(QualityFlag),
    refunded: Type.Boolean(),
    credits: Type.Integer(),
    canReport: Type.Boolean(),
    canRerun: Type.Boolean(),
    attempts: Type.Integer(),
    thumbUrl: Type.Optional(Type.String()),
    outputUrl: Type.Optional(Type.String()),
    cutoutUrl: Type.Optional(Type.String()),
    inputThumbUrl: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type ReviewEntry = Static<typeof ReviewEntry>;

export const ReviewQueue = Type.Object(
  {
    jobId: Type.String(),
    status: JobStatus,
    counts: Counts,
    total: Type.Integer({ description: 'Photos in this list.' }),
    review: Type.Integer({ description: 'Flagged photos in the list.' }),
    failed: Type.Integer({ description: 'Failed photos in the list.' }),
    items: Type.Array(ReviewEntry, { description: 'Failures first, then the lowest scores; ties in upload order.' }),
    updatedAt: Type.Integer(),
  },
  { additionalProperties: false },
);
export type ReviewQueue = Static<typeof ReviewQueue>;
