// Checks values parsed by hand (multipart text fields, JSON inside fields) against the same TypeBox
// schemas the OpenAPI document shows, with the same error shape as Fastify's own validation.
import type { TSchema, Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../errors.ts';

export function check<T extends TSchema>(schema: T, value: unknown, path: string): Static<T> {
  if (Value.Check(schema, value)) return value;
  const errors = [...Value.Errors(schema, value)]
    .slice(0, 20)
    .map((e) => ({ path: `${path}${e.path}`, message: e.message }));
  throw new AppError('VALIDATION', `${errors[0]?.path} ${errors[0]?.message}`, { errors });
}
