// Shared pieces of route declarations: error responses per status, JSON-or-multipart bodies.
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Problem } from '../schemas/common.schemas.ts';
import { FORMAT_FILES, OUTPUT_FORMATS } from '@matte/client/formats';
import type { StoredResponse } from '../../services/idempotency.service.ts';

const PROBLEM_STATUS_TEXT: Record<number, string> = {
  400: 'VALIDATION: a field is missing or out of range; nothing happened',
  401: 'UNAUTHENTICATED or INVALID_KEY',
  402: 'NO_CREDITS (needed, balance); nothing changed',
  404: 'NOT_FOUND: no such batch or photo on this account',
  409: 'Conflict with the current state (code and reason say which)',
  413: 'TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'PROCESSING_FAILED: the input is at fault; nothing charged',
  429: 'RATE_LIMITED',
  500: 'UPLOAD_FAILED or INTERNAL',
  503: 'SERVICE_UNAVAILABLE; nothing charged',
  504: 'TIMEOUT',
  507: 'STORAGE_FULL',
};

/** Problem responses for the given statuses (401 and 429 are on every authenticated endpoint). */
export function problems(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of [401, 429, ...statuses]) {
    out[status] = Type.Ref(Problem, { description: PROBLEM_STATUS_TEXT[status] ?? 'Problem' });
  }
  return out;
}

/** Documents a multipart alternative for the OpenAPI document; routes read and check the parts themselves. */
export const multipartBodies = new Map<string, TSchema>();

/**
 * Types a route's request from the TypeBox schemas it declares, so a handler reads `request.params`,
 * `request.query` and `request.body` as the very types Fastify has just validated. A body declared
 * with jsonBody() is the JSON schema's type, or undefined when the request came as multipart.
 */
interface TypeBoxProvider extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema
    ? Static<this['schema']>
    : this['schema'] extends { content: { 'application/json': { schema: infer S extends TSchema } } }
      ? Static<S> | undefined
      : unknown;
  serializer: unknown;
}

/** The Fastify instance routes are declared on: the app, with its requests typed by TypeBoxProvider. */
export type RouteApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxProvider
>;

export const routeApp = (app: FastifyInstance): RouteApp => app.withTypeProvider<TypeBoxProvider>();

export function jsonBody<T extends TSchema>(schema: T) {
  // A content-type map: Fastify validates JSON bodies against `schema` and leaves multipart to the route.
  return { content: { 'application/json': { schema } } };
}

export const binary = (description: string) => Type.String({ format: 'binary', description });

/** An answer's content map for an image in any output format, in the formats' order. */
export function imageContent(): Record<string, { schema: TSchema }> {
  return Object.fromEntries(
    OUTPUT_FORMATS.map((f) => [FORMAT_FILES[f].contentType, { schema: binary(FORMAT_FILES[f].label) }]),
  );
}

/** Sends an idempotent operation's answer: the first time as made, on a replay as stored, marked as such. */
export function sendStored(reply: FastifyReply, result: StoredResponse & { replayed: boolean }) {
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.status).headers(result.headers).send(result.body);
}
