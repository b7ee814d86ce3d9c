// HTTP shapes every route shares: the problem body and the path parameters.
import { Type, type Static } from '@sinclair/typebox';
import { ProblemExtras } from '../../domain/problem-extras.ts';

const closed = { additionalProperties: false } as const;

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'Link to the error code documentation: {base_url}/docs/errors#CODE' }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable error code; branch on this, never on `detail`.' }),
    detail: Type.Optional(Type.String()),
    ...ProblemExtras.properties,
  },
  {
    $id: 'Problem',
    additionalProperties: true,
    description: 'RFC 9457 problem details (application/problem+json); open object.',
    examples: [
      {
        type: 'https://matte.example.com/docs/errors#NO_CREDITS',
        title: 'Not enough credits',
        status: 402,
        code: 'NO_CREDITS',
        detail: 'This batch needs 3 credits; the account has 1. Nothing was charged.',
        needed: 3,
        balance: 1,
      },
    ],
  },
);
export type Problem = Static<typeof Problem>;

export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) }, closed);

export const ItemParams = Type.Object(
  { id: Type.String({ maxLength: 64 }), itemId: Type.String({ maxLength: 64 }) },
  closed,
);
