// Request validation with the routes' TypeBox schemas. JSON bodies are checked as sent: a number where
// a string belongs is an error, never silently turned into "123". Query strings, path parameters and
// headers arrive as text and are converted, but a number must be written in plain decimal digits:
// "1e400", "0x10" or "Infinity" are refused instead of becoming Infinity or 16.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ??
  addFormatsPlugin) as unknown as (ajv: Ajv) => Ajv;

const common = { removeAdditional: false, useDefaults: true, allErrors: true, strict: false } as const;
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));

const DECIMAL: Record<string, RegExp> = { integer: /^-?\d{1,20}$/, number: /^-?\d{1,20}(\.\d{1,20})?$/ };

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; anyOf?: Schema[] };

/** The numeric type a property accepts ('integer' or 'number'), if any. */
function numericType(schema: Schema): string | undefined {
  const types = [schema.type, ...(schema.anyOf ?? []).map((s) => s.type)].flat();
  return types.includes('number') ? 'number' : types.includes('integer') ? 'integer' : undefined;
}

function decimalOnly(schema: Schema, validate: ValidateFunction): ValidateFunction {
  const numeric = Object.entries(schema.properties ?? {})
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

export function registerValidation(app: FastifyInstance): void {
  // Ajv caches compiled functions per schema object, so each route schema is compiled once.
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body'
      ? bodyAjv.compile(schema as FastifySchema)
      : decimalOnly(schema as Schema, textAjv.compile(schema as FastifySchema)),
  );
}
