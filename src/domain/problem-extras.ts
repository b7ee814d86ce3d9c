// The code-dependent members of a problem body (spec, Errors): the Problem schema's own members, and what an
// idempotent refusal stores. A module of its own so that errors.ts, which every bin/matte command loads, loads no
// TypeBox (about 0.2 s of each command's start).
import { Type, type Static } from '@sinclair/typebox';

export const ProblemExtras = Type.Object({
  errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  needed: Type.Optional(Type.Integer()),
  balance: Type.Optional(Type.Integer()),
  retryAfter: Type.Optional(Type.Integer()),
  jobId: Type.Optional(Type.String()),
  itemId: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});
export type ProblemExtras = Static<typeof ProblemExtras>;
