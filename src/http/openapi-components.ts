// The OpenAPI document's named objects. The routes' TypeBox schemas stay the one source of validation, types
// and the document; a TypeBox object exported under a name (Job, Item, Account, ReviewQueue, …) is written
// once into `components/schemas` under that name, and every place in the document that holds exactly that
// object refers to it (`$ref`). Generated clients then get named types and renderers a list of models, and the
// document is about half the size of one that writes each object out again in every operation.
import * as batch from '../domain/batch.schemas.ts';
import * as events from '../domain/event.schemas.ts';
import * as render from '../domain/render.schemas.ts';
import * as report from '../domain/report.schemas.ts';
import * as review from '../domain/review.schemas.ts';
import * as account from './schemas/account.schemas.ts';
import * as common from './schemas/common.schemas.ts';
import * as images from './schemas/images.schemas.ts';
import * as items from './schemas/items.schemas.ts';
import * as jobs from './schemas/jobs.schemas.ts';
import * as presets from './schemas/presets.schemas.ts';

type Json = unknown;
const MODULES: Record<string, unknown>[] = [
  batch,
  events,
  render,
  report,
  review,
  account,
  common,
  images,
  items,
  jobs,
  presets,
];
/** Request parts that the document writes as parameters, not schemas. */
const NOT_MODELS = /(Query|Params|Headers|Fields)$/;

const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * JSON with its object keys sorted: two schemas written in another order are the same schema. `const: x` reads
 * as `enum: [x]`, as @fastify/swagger writes it into the document; examples are left out.
 */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  // Examples are not the schema: @fastify/swagger moves a request body's to its media type.
  const keys = Object.keys(value)
    .filter((k) => k !== 'examples' && k !== 'example')
    .map((k) => (k === 'const' ? 'enum' : k));
  return `{${keys
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(k === 'enum' && 'const' in value ? [value.const] : value[k])}`)
    .join(',')}}`;
}

/** A model worth a name: an object with members, a choice between objects, or a closed list of strings. */
function isModel(schema: Json): boolean {
  if (!isObject(schema)) return false;
  if (schema.type === 'object') return isObject(schema.properties) && Object.keys(schema.properties).length > 0;
  if (!Array.isArray(schema.anyOf) || schema.anyOf.length < 2) return false;
  return (
    schema.anyOf.every((s) => isObject(s) && s.type === 'object') ||
    schema.anyOf.every((s) => isObject(s) && typeof s.const === 'string')
  );
}

/** The usual answer of each error status, named once in `components/responses`. */
const RESPONSE_NAMES: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthenticated',
  '402': 'NoCredits',
  '403': 'Forbidden',
  '404': 'NotFound',
  '409': 'Conflict',
  '413': 'TooLarge',
  '415': 'UnsupportedMediaType',
  '422': 'Unprocessable',
  '429': 'RateLimited',
  '503': 'Unavailable',
};

/**
 * The error answers that many operations give word for word (a 429 with its headers, a 404 …): each status's
 * most common answer is written once in `components/responses` and referred to; the others stay in place.
 */
function nameResponses(doc: { paths?: Json; components?: Record<string, Json> }) {
  const seen = new Map<string, Map<string, { response: Json; count: number }>>();
  const operations = Object.values(
    (doc.paths ?? {}) as Record<string, Record<string, { responses?: Record<string, Json> }>>,
  ).flatMap((methods) => Object.values(methods));
  // Each error answer with its canonical form, read once: counted here, replaced below.
  const answers: { responses: Record<string, Json>; status: string; key: string }[] = [];
  for (const op of operations)
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      if (!RESPONSE_NAMES[status]) continue;
      const forStatus = seen.get(status) ?? new Map();
      const key = canonical(response);
      forStatus.set(key, { response, count: (forStatus.get(key)?.count ?? 0) + 1 });
      seen.set(status, forStatus);
      answers.push({ responses: op.responses!, status, key });
    }
  const responses: Record<string, Json> = {};
  const chosen = new Map<string, string>();
  for (const [status, variants] of seen) {
    const [key, top] = [...variants].sort((a, b) => b[1].count - a[1].count)[0]!;
    if (top.count < 2) continue;
    responses[RESPONSE_NAMES[status]!] = top.response;
    chosen.set(`${status} ${key}`, RESPONSE_NAMES[status]!);
  }
  for (const { responses: answersOf, status, key } of answers) {
    const name = chosen.get(`${status} ${key}`);
    if (name) answersOf[status] = { $ref: `#/components/responses/${name}` };
  }
  if (Object.keys(responses).length) (doc.components ??= {}).responses = responses;
}

/** Every exported model by its JSON (TypeBox's symbols dropped), first name first when two are the same. */
function namedModels(): Map<string, { name: string; schema: Json }> {
  const out = new Map<string, { name: string; schema: Json }>();
  for (const mod of MODULES)
    for (const [name, value] of Object.entries(mod)) {
      if (NOT_MODELS.test(name) || !/^[A-Z]/.test(name) || !isObject(value)) continue;
      const schema = JSON.parse(JSON.stringify(value)) as Json;
      if (!isModel(schema)) continue;
      const key = canonical(schema);
      if (!out.has(key)) out.set(key, { name, schema });
    }
  return out;
}

/**
 * Moves every named model the document holds into `components/schemas` and refers to it: top down, so a Job
 * becomes one reference and, inside its component, its Items references too. Only models the document uses
 * are written.
 */
export function nameComponents(doc: {
  paths?: Json;
  webhooks?: Json;
  components?: { schemas?: Record<string, Json> };
}) {
  const models = namedModels();
  const schemas: Record<string, Json> = (doc.components ??= {}).schemas ?? {};
  const used = new Map<string, Json>();
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const walk = (node: Json, root?: string): Json => {
    if (Array.isArray(node)) return node.map((n) => walk(n));
    if (!isObject(node)) return node;
    const named = models.get(canonical(node));
    if (named && named.name !== root) {
      if (!used.has(named.name)) {
        used.set(named.name, null); // before the walk below: a model that holds itself refers to itself
        used.set(named.name, walk(node, named.name));
      }
      return ref(named.name);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
  };
  doc.paths = walk(doc.paths);
  if (doc.webhooks) doc.webhooks = walk(doc.webhooks);
  for (const [name, schema] of [...used].sort(([a], [b]) => a.localeCompare(b))) schemas[name] = schema;
  doc.components.schemas = schemas;
  nameResponses(doc as { paths?: Json; components?: Record<string, Json> });
  return doc;
}
