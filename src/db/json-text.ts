// Structured values are stored as JSON text (the same on both dialects). A column holding JSON carries the
// type of what it holds, so writing the wrong value does not compile: a column is written only through
// jsonText(), and read parsed and checked (json-columns.ts).
declare const holds: unique symbol;

/** JSON text of a T, as a column stores it. */
export type JsonText<T> = string & { readonly [holds]: T };

export function jsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value) as JsonText<T>;
}
