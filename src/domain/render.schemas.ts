// Re-rendering finished photos from their stored cut-outs: what apply and preview take.
import { Type, type Static } from '@sinclair/typebox';
import { ImageFormat, JobDefaults } from './batch.schemas.ts';
import { INPUT_FORMATS_TEXT } from '@matte/client/formats';

export const SettingsPatch = Type.Omit(JobDefaults, ['trial'], {
  additionalProperties: false,
  description:
    "The Settings fields to change; fields left out keep their value. `background` is replaced whole. A new `presetId` without `background` takes the preset's background (white for presets that ask for it).",
});
export type SettingsPatch = Static<typeof SettingsPatch>;

export const ApplyRequest = Type.Object(
  {
    itemIds: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        minItems: 1,
        maxItems: 200,
        uniqueItems: true,
        description: 'Photos to re-render; default every finished photo of the batch.',
      }),
    ),
    settings: SettingsPatch,
  },
  {
    additionalProperties: false,
    description:
      'Which finished photos to re-render and the settings to change. As multipart: field `payload` (this object as JSON) and, for `background.mode` image, file `image` (' +
      INPUT_FORMATS_TEXT +
      "), which becomes the batch's background image.",
  },
);
export type ApplyRequest = Static<typeof ApplyRequest>;

export const ApplyMultipart = Type.Object(
  {
    payload: Type.String({ description: 'JSON of the ApplyRequest shape.' }),
    image: Type.Optional(Type.String({ format: 'binary', description: 'Background image shared by the selection.' })),
  },
  { additionalProperties: false },
);

export const PreviewRequest = Type.Object(
  {
    settings: Type.Optional(SettingsPatch),
    format: Type.Optional(ImageFormat),
  },
  {
    additionalProperties: false,
    description:
      "Settings to try on one finished photo (fields left out keep the photo's), and optionally the format to answer in (default: what the settings would store). Nothing is saved.",
  },
);
export type PreviewRequest = Static<typeof PreviewRequest>;
