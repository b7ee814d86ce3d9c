// HTTP shapes of POST /v1/images: one photo in one call.
import { Type, type Static } from '@sinclair/typebox';
import { ImageFormat, Item, JobDefaults, Optimize } from '../../domain/batch.schemas.ts';
import { INPUT_FORMATS_TEXT } from '@matte/client/formats';

const closed = { additionalProperties: false } as const;

export const ImageRequest = Type.Object(
  {
    imageUrl: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: `Public http(s) link to a ${INPUT_FORMATS_TEXT}, fetched server-side. Give this or imageBase64.`,
      }),
    ),
    imageBase64: Type.Optional(
      Type.String({ description: 'The image bytes, base64 (standard or URL-safe alphabet, optional data: prefix).' }),
    ),
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'File name for the photo; default from the link, else "image".',
      }),
    ),
    settings: Type.Optional(JobDefaults),
    response: Type.Optional(Type.Union([Type.Literal('image'), Type.Literal('json')], { default: 'image' })),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    timeout: Type.Optional(Type.Integer({ minimum: 5, maximum: 60, default: 60 })),
  },
  {
    ...closed,
    description: 'JSON form of POST /v1/images: exactly one of imageUrl and imageBase64.',
    examples: [
      {
        imageUrl: 'https://shop.example.com/photos/mug.jpg',
        settings: { presetId: 'amazon-main', background: { mode: 'white' } },
        response: 'json',
      },
    ],
  },
);
export type ImageRequest = Static<typeof ImageRequest>;

export const ImageMultipart = Type.Object(
  {
    file: Type.String({ format: 'binary' }),
    settings: Type.Optional(Type.String({ description: 'JSON of the JobDefaults shape.' })),
    response: Type.Optional(Type.Union([Type.Literal('image'), Type.Literal('json')], { default: 'image' })),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    timeout: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'Seconds, 5-60, default 60.' })),
  },
  closed,
);

/** The text fields of the multipart form, as they are checked after parsing. */
export const ImageMultipartFields = Type.Object(
  {
    settings: Type.Optional(Type.String({ maxLength: 100_000 })),
    response: Type.Optional(Type.Union([Type.Literal('image'), Type.Literal('json')])),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    timeout: Type.Optional(Type.Integer({ minimum: 5, maximum: 60 })),
  },
  closed,
);

export const ImageResult = Type.Object(
  {
    jobId: Type.String(),
    itemId: Type.String(),
    status: Type.Union([Type.Literal('done'), Type.Literal('processing')]),
    charged: Type.Integer({ description: '1 for a clean result, 0 otherwise.' }),
    review: Type.Union([Type.Literal('none'), Type.Literal('red')]),
    refunded: Type.Boolean(),
    fileUrl: Type.String(),
    statusUrl: Type.String(),
    reviewUrl: Type.String(),
    item: Item,
  },
  closed,
);
export type ImageResult = Static<typeof ImageResult>;
