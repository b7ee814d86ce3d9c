// How answers are serialised: fast-json-stringify, as Fastify does, from the routes' response schemas
// made plainer first. fast-json-stringify serialises an `anyOf` by asking an Ajv validator which branch
// a value matches: each nullable member (TypeBox's Union with Null) and each union of literals costs an
// Ajv compile (about 400 ms of the event loop, blocking every request, the first time a route answered
// such a member) and a validation at every answer. The same unions written as a list of types, or a
// string or number enum, are serialised with plain `typeof` tests. Only what is serialised changes:
// validation and the OpenAPI document keep the schemas as written. Whatever unions are left are compiled at start
// (compileValidators), not on an answer's path (docs/performance.md).
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type Schema = Record<string, unknown>;

/** Members whose value is schemas by name. */
const BY_NAME = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Members whose value is data, never a schema. */
const DATA = new Set(['const', 'enum', 'default', 'examples', 'example']);
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The values of one type a literal allows (`const`, or an enum), or null when it is no literal of that type. */
const literalValues = (s: Schema, type: 'string' | 'number'): unknown[] | null =>
  typeof s.const === type
    ? [s.const]
    : s.type === type && Array.isArray(s.enum) && s.enum.every((v) => typeof v === type) && !('format' in s)
      ? s.enum
      : null;

/**
 * The schema with its unions of string (or number) literals as a string (or number) enum, and its nullable
 * members (`anyOf: [X, null]`) as X with `type: [X.type, 'null']`, all the way down; anything else as it
 * was. Symbols (TypeBox's kinds) are left behind: the serialiser reads only the JSON Schema.
 */
export function forSerialization(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forSerialization);
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DATA.has(key)) out[key] = value;
    else if (BY_NAME.has(key) && isSchema(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, forSerialization(v)]));
    else out[key] = forSerialization(value);
  }
  const branches = out.anyOf;
  if (!Array.isArray(branches) || !branches.every(isSchema)) return out;
  const rest = { ...out };
  delete rest.anyOf;
  const literals = branches.map((b) => literalValues(b, 'string'));
  if (literals.every((v) => v !== null)) return { ...rest, type: 'string', enum: literals.flat() };
  const numbers = branches.map((b) => literalValues(b, 'number'));
  if (numbers.every((v) => v !== null)) return { ...rest, type: 'number', enum: numbers.flat() };
  // A nullable member (one type, or a literal union, and null) becomes that type or null, tested `=== null`
  // first. Not more types than that: fast-json-stringify tests a list of types in an order of its own, and
  // its string test also takes arrays (their own toString), so a string-or-array stays a union.
  const typed = branches.map((b, i) => (literals[i] ? { type: 'string' } : b));
  const nulls = typed.filter((b) => b.type === 'null');
  const others = typed.filter((b) => b.type !== 'null');
  if (nulls.length !== 1 || others.length !== 1) return out;
  const only = others[0];
  if (typeof only.type !== 'string' || ['anyOf', 'oneOf', 'allOf', '$ref'].some((k) => k in only)) return out;
  const keywords = { ...only };
  delete keywords.description;
  delete keywords.title;
  return { ...keywords, ...rest, type: [only.type, 'null'] };
}

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

/**
 * The serialisers built so far, by the schema they serialise (as JSON, with the external schemas and options):
 * a route's answers share a few schemas (every error is a Problem) and the routes share many, so an app's 274
 * serialisers are 48 distinct ones, each built once (and once a process, whatever the number of apps).
 */
const built = new Map<string, Serializer>();

/** Fastify's serialiser factory (schemaController.compilersFactory.buildSerializer) over forSerialization. */
export const buildSerializer: SerializerFactory = (externalSchemas, serializerOpts) => {
  const external = Object.fromEntries(
    Object.entries(externalSchemas ?? {}).map(([id, s]) => [id, forSerialization(s)]),
  );
  const compile = SerializerSelector()(external, { ...serializerOpts, compileValidators: true });
  const context = JSON.stringify([external, serializerOpts ?? null]);
  return (route) => {
    const schema = forSerialization(route.schema) as typeof route.schema;
    const key = `${context}\n${JSON.stringify(schema)}`;
    let serializer = built.get(key);
    if (!serializer) built.set(key, (serializer = compile({ ...route, schema })));
    return serializer;
  };
};
