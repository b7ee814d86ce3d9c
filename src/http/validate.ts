// Checks values parsed by hand (multipart text fields, JSON inside fields) against the same TypeBox
// schemas the OpenAPI document shows, with the same error shape as Fastify's own validation.
import type { TSchema, Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { AppError } from '../errors.ts';

const cache = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function check<T extends TSchema>(schema: T, value: unknown, path: string): Static<T> {
  let compiled = cache.get(schema);
  if (!compiled) {
    compiled = TypeCompiler.Compile(schema);
    cache.set(schema, compiled);
  }
  if (compiled.Check(value)) return value as Static<T>;
  const errors = [...compiled.Errors(value)]
    .slice(0, 20)
    .map((e) => ({ path: `${path}${e.path}`, message: e.message }));
  throw new AppError('VALIDATION', `${errors[0]?.path} ${errors[0]?.message}`, { errors });
}
