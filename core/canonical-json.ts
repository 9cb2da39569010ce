/**
 * Canonical JSON: object keys sorted at every level and `undefined` members dropped, so
 * equal values give equal text (audit hashes, logical identities of grants).
 *
 * @module
 */

/**
 * The canonical JSON text of a value (`"null"` for `undefined`).
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: { d: 2, c: 3 } }); // '{"a":{"c":3,"d":2},"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "null";
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
