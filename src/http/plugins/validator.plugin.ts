// Request validation with the routes' TypeBox schemas. JSON bodies are checked as sent: a number where
// a string belongs is an error, never silently turned into "123". Query strings, path parameters and
// headers arrive as text and are converted, but a number must be written in plain decimal digits:
// "1e400", "0x10" or "Infinity" are refused instead of becoming Infinity or 16.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS: the ESM default import is its module.exports, whose `default` is the plugin.
const addFormats = addFormatsPlugin.default;

const common = { removeAdditional: false, useDefaults: true, allErrors: true, strict: false } as const;
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));

const DECIMAL: Record<string, RegExp> = { integer: /^-?\d{1,20}$/, number: /^-?\d{1,20}(\.\d{1,20})?$/ };

/** The JSON-schema keyword `key` of a schema that is an object, if it has one. */
const keyword = (schema: unknown, key: string): unknown =>
  schema instanceof Object && key in schema ? Object.getOwnPropertyDescriptor(schema, key)?.value : undefined;

/** The numeric type a property accepts ('integer' or 'number'), if any. */
function numericType(schema: unknown): string | undefined {
  const anyOf = keyword(schema, 'anyOf');
  const types = [keyword(schema, 'type'), ...(Array.isArray(anyOf) ? anyOf.map((s) => keyword(s, 'type')) : [])].flat();
  return types.includes('number') ? 'number' : types.includes('integer') ? 'integer' : undefined;
}

function decimalOnly(schema: object, validate: ValidateFunction): ValidateFunction {
  const properties = keyword(schema, 'properties');
  const numeric = Object.entries(properties instanceof Object ? properties : {})
    .map(([name, prop]) => [name, numericType(prop)] as const)
    .filter((entry): entry is readonly [string, string] => entry[1] !== undefined);
  if (!numeric.length) return validate;
  const wrapped = ((data: Record<string, unknown>) => {
    const errors: ErrorObject[] = [];
    for (const [name, type] of numeric) {
      const raw = data?.[name];
      if (typeof raw === 'string' && !DECIMAL[type].test(raw)) {
        errors.push({
          instancePath: `/${name}`,
          schemaPath: '#/decimal',
          keyword: 'type',
          params: { type },
          message: `must be ${type === 'integer' ? 'a whole number' : 'a number'} in decimal digits`,
        });
      }
    }
    if (errors.length) {
      wrapped.errors = errors;
      return false;
    }
    const ok = validate(data);
    wrapped.errors = validate.errors;
    return ok;
  }) as ValidateFunction;
  return wrapped;
}

/**
 * The validators compiled so far, by the part of the request and its schema as JSON: the routes' 57 schemas are
 * 28 distinct ones (Ajv's own cache knows a schema only by its object), each compiled once a process.
 */
const compiled = new Map<string, ValidateFunction>();

export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const key = `${httpPart}\n${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = httpPart === 'body' ? bodyAjv.compile(schema) : decimalOnly(schema, textAjv.compile(schema));
      compiled.set(key, validate);
    }
    return validate;
  });
}
