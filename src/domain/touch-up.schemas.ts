// A seller's touch-up of one finished photo: erase and restore strokes on its cut-out (beyond the spec).
import { Type, type Static } from '@sinclair/typebox';
import { BBox, Nullable, TouchUp } from './batch.schemas.ts';

/** Points a request may carry, all strokes together. */
export const MAX_TOUCH_UP_POINTS = 10_000;

const StrokeMode = Type.Union([Type.Literal('erase'), Type.Literal('restore')], {
  description: '`erase` makes what the brush covers transparent; `restore` brings the photo back there, opaque.',
});

/** A point's coordinate: far outside any cut-out is allowed (it paints nothing there), without bound is not. */
const Coordinate = Type.Number({ minimum: -1_000_000, maximum: 1_000_000 });

export const Stroke = Type.Object(
  {
    mode: StrokeMode,
    size: Type.Number({
      minimum: 1,
      maximum: 1000,
      description: "The brush's diameter in cut-out pixels.",
    }),
    points: Type.Array(
      // Not a Tuple: TypeBox writes one as draft-07 `items: [...]`, which OpenAPI 3.1's schemas do not take.
      Type.Array(Coordinate, { minItems: 2, maxItems: 2, description: '[x, y] in cut-out pixels.' }),
      {
        minItems: 1,
        maxItems: MAX_TOUCH_UP_POINTS,
        description:
          "The brush's path in cut-out pixels (`meta.cutout`): x from 0 (left) to width − 1, y from 0 (top) to height − 1. One point is a dab; more are a polyline. A pixel is painted when its centre lies within size / 2 of the path; points outside the cut-out (within ±1,000,000) are allowed and paint nothing there.",
      },
    ),
  },
  { additionalProperties: false, description: 'One brush stroke.' },
);
export type Stroke = Static<typeof Stroke>;

export const TouchUpRequest = Type.Object(
  {
    strokes: Type.Array(Stroke, {
      minItems: 1,
      maxItems: MAX_TOUCH_UP_POINTS,
      description: `Applied in order over the photo's current cut-out; at most ${MAX_TOUCH_UP_POINTS.toLocaleString('en')} points in all.`,
    }),
    snap: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          "Make each stroke follow the photo's edges: a stroke that spills over the edge of what it is laid on leaves the other side as it was. false paints exactly the strokes' discs.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "Strokes to paint on a finished photo's cut-out.",
    examples: [
      {
        strokes: [
          {
            mode: 'erase',
            size: 40,
            points: [
              [120, 80],
              [260, 92],
              [380, 88],
            ],
          },
          { mode: 'restore', size: 16, points: [[512, 640]] },
        ],
        snap: true,
      },
    ],
  },
);
export type TouchUpRequest = Static<typeof TouchUpRequest>;

/** The touch-up as stored with the photo: the answer's members, and the model's subject box a revert brings back. */
export const StoredTouchUp = Type.Object(
  { ...TouchUp.properties, modelBbox: Nullable(BBox) },
  { additionalProperties: false },
);
export type StoredTouchUp = Static<typeof StoredTouchUp>;
