// The JSON text columns, each with the schema of what it holds: the one list the row types (schema.ts) and the
// read boundary below are both made from. A row leaves the database with each such column parsed and checked
// against its schema (JsonColumnsPlugin, on every query, raw SQL included), so the code above the repositories
// sees typed values only; values are written as JsonText (json-text.ts). A stored value its schema refuses is
// an error naming the column, never a half-read row: what an old release wrote that this one no longer reads
// is a migration's to rewrite.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type {
  ColumnType,
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import {
  BBox,
  JobOptions,
  oneOf,
  Quality,
  Rejected,
  Settings,
  StoredItemMeta,
  WebhookEvents,
} from '../domain/batch.schemas.ts';
import { JobEvent } from '../domain/event.schemas.ts';
import { StoredTouchUp } from '../domain/touch-up.schemas.ts';
import { ERROR_CODE_NAMES } from '../errors.ts';
import { ProblemExtras } from '../domain/problem-extras.ts';
import type { JsonText } from './json-text.ts';

/** An idempotent request's first answer, replayed under its key: a success as sent, or a refusal. */
const StoredAnswer = Type.Union([
  Type.Object({
    kind: Type.Literal('response'),
    headers: Type.Record(Type.String(), Type.String()),
    body: Type.String({ description: 'base64' }),
  }),
  Type.Object({
    kind: Type.Literal('error'),
    code: oneOf(ERROR_CODE_NAMES),
    detail: Type.String(),
    extras: ProblemExtras,
    status: Type.Integer(),
  }),
]);
export type StoredAnswer = Static<typeof StoredAnswer>;

/** A rate-limit window's log: [bucket start, count] pairs, oldest first. */
const RateLog = Type.Array(Type.Tuple([Type.Number(), Type.Integer()]));
export type RateLog = Static<typeof RateLog>;
/** A subject's logs by window name (`requests`, `photos`). */
const RateWindows = Type.Record(Type.String(), RateLog);
export type RateWindows = Static<typeof RateWindows>;

/** Each JSON column by name (names are unique across the tables), with what it holds. */
const JSON_COLUMNS = {
  options: JobOptions,
  webhook_events: WebhookEvents,
  rejected: Type.Array(Rejected),
  settings: Settings,
  quality: Quality,
  meta: StoredItemMeta,
  data: JobEvent.properties.data,
  response: StoredAnswer,
  windows: RateWindows,
  region: BBox,
  metrics: Type.Record(Type.String(), Type.Number()),
  payload: JobEvent,
  touch_up: StoredTouchUp,
} satisfies Record<string, TSchema>;
type JsonColumnName = keyof typeof JSON_COLUMNS;
type Holds<K extends JsonColumnName> = Static<(typeof JSON_COLUMNS)[K]>;

/** A JSON column as Kysely types it: read as the value, written as its JsonText. */
export type Json<K extends JsonColumnName> = ColumnType<Holds<K>, JsonText<Holds<K>>, JsonText<Holds<K>>>;
export type NullableJson<K extends JsonColumnName> = ColumnType<
  Holds<K> | null,
  JsonText<Holds<K>> | null,
  JsonText<Holds<K>> | null
>;

const checks = new Map<string, TypeCheck<TSchema>>(
  Object.entries(JSON_COLUMNS).map(([name, schema]) => [name, TypeCompiler.Compile(schema)]),
);

/** Parses and checks a JSON column's text; throws, naming the column and the first failing path, when it does not hold its schema. */
function readColumn(name: string, check: TypeCheck<TSchema>, text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!check.Check(value)) {
    const first = check.Errors(value).First();
    throw new Error(`stored ${name} does not hold its schema: ${first?.path || '/'} ${first?.message ?? ''}`.trim());
  }
  return value;
}

/** Parses a row's JSON columns in place (a row is the driver's own new object). */
function parseRow(row: UnknownRow): UnknownRow {
  for (const key in row) {
    const value = row[key];
    const check = checks.get(key);
    if (typeof value === 'string' && check) row[key] = readColumn(key, check, value);
  }
  return row;
}

/** Parses every JSON column of every row a query returns (see the file's comment). */
export class JsonColumnsPlugin implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    args.result.rows.forEach(parseRow);
    return args.result;
  }
}
