// Answers serialised from plainer schemas (src/http/serializer.ts): the same JSON as before for every
// shape a union takes, and no union left that would need Ajv on an answer's path in the real app.
import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Nullable } from '../../src/domain/batch.schemas.ts';
import { buildSerializer, forSerialization } from '../../src/http/serializer.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { resolveRefs } from '../helpers/openapi.ts';

const Colour = Type.Union([Type.Literal('red'), Type.Literal('green')]);
const Box = Type.Object({ x: Type.Number(), y: Type.Number() }, { additionalProperties: false });
const Answer = Type.Object({
  name: Nullable(Type.String()),
  count: Nullable(Type.Integer()),
  box: Nullable(Box),
  boxes: Type.Array(Nullable(Box)),
  colour: Colour,
  maybeColour: Nullable(Colour),
  either: Type.Union([Type.String(), Type.Integer()]),
  events: Nullable(Type.Union([Type.Literal('all'), Type.Array(Colour, { minItems: 1 })])),
  nested: Type.Object({ deep: Nullable(Type.Object({ at: Nullable(Type.String()) })) }),
});

describe('forSerialization', () => {
  it('writes nullable members as type lists and literal unions as enums', () => {
    expect(forSerialization(Nullable(Type.String({ description: 'd' })))).toEqual({ type: ['string', 'null'] });
    expect(forSerialization(Nullable(Type.Array(Colour)))).toEqual({
      type: ['array', 'null'],
      items: { type: 'string', enum: ['red', 'green'] },
    });
    expect(forSerialization(Colour)).toEqual({ type: 'string', enum: ['red', 'green'] });
    expect(forSerialization(Nullable(Colour))).toEqual({ type: ['string', 'null'] });
    const Turn = Type.Union([0, 90, 180].map((n) => Type.Literal(n)));
    expect(forSerialization(Turn)).toEqual({ type: 'number', enum: [0, 90, 180] });
    // Strings and numbers together stay a union.
    expect(forSerialization(Type.Union([Type.Literal(1), Type.Literal('one')]))).toHaveProperty('anyOf');
    // Two object branches stay a union: their members would mix.
    expect(forSerialization(Type.Union([Box, Type.Object({ z: Type.String() })]))).toHaveProperty('anyOf');
    // A union of two real types stays a union, with or without null.
    expect(forSerialization(Type.Union([Type.String(), Type.Integer()]))).toHaveProperty('anyOf');
    expect(forSerialization(Nullable(Type.Union([Type.Literal('all'), Type.Array(Colour)])))).toHaveProperty('anyOf');
  });

  it('leaves data members alone: an enum of objects, a default shaped like a schema', () => {
    const schema = { type: 'object', default: { anyOf: [{ const: 'a' }] }, properties: { anyOf: { type: 'string' } } };
    expect(forSerialization(schema)).toEqual(schema);
  });
});

describe('answers serialised from the plainer schemas', () => {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer } } });
  let value: unknown = null;
  app.get('/', { schema: { response: { 200: Answer } } }, async () => value);
  beforeAll(() => app.ready());
  afterAll(() => app.close());

  it.each([
    {
      name: 'n',
      count: 3,
      box: { x: 1.5, y: 2 },
      boxes: [{ x: 0, y: 0 }, null],
      colour: 'red',
      maybeColour: 'green',
      either: 4,
      events: 'all',
      nested: { deep: { at: 'x' } },
    },
    {
      name: null,
      count: null,
      box: null,
      boxes: [],
      colour: 'green',
      maybeColour: null,
      either: 'four',
      events: null,
      nested: { deep: null },
    },
    {
      name: '',
      count: 0,
      box: { x: -1, y: 0 },
      boxes: [null],
      colour: 'red',
      maybeColour: null,
      either: 'x',
      events: ['green', 'red'],
      nested: { deep: { at: null } },
    },
  ])('as JSON.stringify writes them (%#)', async (answer) => {
    value = answer;
    const res = await app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(JSON.stringify(answer));
  });
});

describe('the real app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('serialises no nullable member or literal union (of strings or numbers) through Ajv, but a webhook’s events (all, or a list)', () => {
    const unions: string[] = [];
    const walk = (s: unknown, where: string) => {
      if (Array.isArray(s)) s.forEach((v, i) => walk(v, `${where}[${i}]`));
      else if (typeof s === 'object' && s !== null) {
        const branches = (s as { anyOf?: { type?: unknown; const?: unknown }[] }).anyOf;
        const literal = (b: { const?: unknown }) => typeof b.const === 'string' || typeof b.const === 'number';
        if (branches && branches.some((b) => b.type === 'null' || literal(b))) unions.push(where);
        for (const [k, v] of Object.entries(s)) walk(v, `${where}.${k}`);
      }
    };
    // Answers as the routes declare them: the document's references written out in place.
    const doc = resolveRefs(t.app.swagger()) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    let routes = 0;
    for (const [p, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        routes++;
        for (const [status, answer] of Object.entries(op.responses ?? {}))
          walk(forSerialization(answer), `${method} ${p} ${status}`);
      }
    expect(routes).toBeGreaterThan(30);
    // The one union left is compiled at start (compileValidators), off the answers' path.
    expect(unions).toEqual(['get /v1/jobs/{id}/webhooks 200.content.application/json.schema.properties.events']);
  });
});
