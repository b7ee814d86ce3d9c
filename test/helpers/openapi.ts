// The served OpenAPI document with its local references (`#/components/…`) written out in place, for tests
// that walk into an operation's schemas as a client generator would after resolving them.
type Json = unknown;

export function resolveRefs<T>(doc: T): T {
  const root = doc as Record<string, Json>;
  const target = (ref: string): Json =>
    ref
      .slice(2)
      .split('/')
      .reduce<Json>((node, key) => (node as Record<string, Json>)[key.replace(/~1/g, '/').replace(/~0/g, '~')], root);
  const walk = (node: Json, depth: number): Json => {
    if (depth > 64) throw new Error('a reference cycle in the document');
    if (Array.isArray(node)) return node.map((n) => walk(n, depth + 1));
    if (typeof node !== 'object' || node === null) return node;
    const obj = node as Record<string, Json>;
    if (typeof obj.$ref === 'string' && obj.$ref.startsWith('#/')) {
      const { $ref, ...rest } = obj;
      return { ...(walk(target($ref), depth + 1) as object), ...rest };
    }
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, walk(v, depth + 1)]));
  };
  return walk(doc, 0) as T;
}
