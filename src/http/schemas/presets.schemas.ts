// HTTP shapes of GET /v1/presets.
import { Type } from '@sinclair/typebox';
import { OUTPUT_FORMATS } from '@matte/client/formats';

const closed = { additionalProperties: false } as const;

export const Preset = Type.Object(
  {
    id: Type.String(),
    label: Type.String(),
    width: Type.Integer({ description: 'Canvas width; 0 = same as source.' }),
    height: Type.Integer(),
    fillPercent: Type.Number({
      description: 'Share of the canvas the subject spans; 0 = not set (the photo keeps its framing).',
    }),
    paddingPercent: Type.Number({ description: '0 = not set.' }),
    background: Type.Union([Type.Literal('white'), Type.Literal('transparent'), Type.Literal('inherit')]),
    format: Type.Union([...OUTPUT_FORMATS.map((f) => Type.Literal(f)), Type.Literal('auto')]),
    quality: Type.Integer({ description: 'Encoder quality; 90 where the marketplace documents none.' }),
    align: Type.Union([Type.Literal('center'), Type.Literal('bottom')]),
    maxBytes: Type.Optional(Type.Integer({ description: 'Marketplace upload limit.' })),
    verified: Type.Boolean({ description: "True only where the marketplace's own documentation backs the figures." }),
    source: Type.Optional(Type.String()),
    sourceUrl: Type.Optional(Type.String()),
    notes: Type.Optional(Type.String()),
    verifiedAt: Type.Optional(Type.String()),
  },
  closed,
);

export const PresetList = Type.Object({ presets: Type.Array(Preset) }, closed);
