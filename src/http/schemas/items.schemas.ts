// HTTP shapes of a job's items (photos): adding them by upload or link, removing them, their files, re-runs.
import { Type, type Static } from '@sinclair/typebox';
import { ImageFormat, Optimize, Tier } from '../../domain/batch.schemas.ts';
import { INPUT_FORMATS_OR_ZIPS } from '@matte/client/formats';

const closed = { additionalProperties: false } as const;

export const UrlItemsRequest = Type.Object(
  {
    urls: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 200, default: [] })),
    zipUrl: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  {
    ...closed,
    description: 'Public http(s) links, fetched server-side; refusals come back in `rejected`.',
    examples: [{ urls: ['https://shop.example.com/photos/mug.jpg', 'https://shop.example.com/photos/bottle.jpg'] }],
  },
);
export type UrlItemsRequest = Static<typeof UrlItemsRequest>;

export const ItemsMultipart = Type.Object(
  {
    files: Type.Array(Type.String({ format: 'binary' }), {
      description: `${INPUT_FORMATS_OR_ZIPS} (folders inside included).`,
    }),
  },
  closed,
);

export const DeleteItemsRequest = Type.Object(
  {
    itemIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 200,
      description: 'Photos to remove; photos in flight and unknown ids are skipped.',
    }),
  },
  closed,
);
export type DeleteItemsRequest = Static<typeof DeleteItemsRequest>;

export const FileQuery = Type.Object(
  {
    variant: Type.Optional(
      Type.Union(
        [
          Type.Literal('output'),
          Type.Literal('cutout'),
          Type.Literal('input'),
          Type.Literal('thumb'),
          Type.Literal('input-thumb'),
        ],
        { default: 'output' },
      ),
    ),
    format: Type.Optional(ImageFormat),
    optimize: Type.Optional(Optimize),
    download: Type.Optional(Type.String({ maxLength: 16, description: 'Any value: Content-Disposition attachment.' })),
    rev: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Cache-buster carried by the URLs in batch answers; ignored.' }),
    ),
  },
  closed,
);
export type FileQuery = Static<typeof FileQuery>;

export const ItemRetryRequest = Type.Object(
  { tier: Type.Optional(Tier) },
  { ...closed, description: '`tier` light (1 credit, the default) or heavy (2 credits).' },
);
export type ItemRetryRequest = Static<typeof ItemRetryRequest>;
