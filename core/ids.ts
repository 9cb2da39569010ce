/**
 * Identifier shapes. Every svc id (realm, user, organization, session…) is a UUID, so a
 * string of another shape can never name a row and is rejected before it reaches SQL.
 *
 * @module
 */

/** A UUID in its canonical textual form (any case). */
export const UUID_PATTERN: RegExp = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a string with the shape of a UUID. */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_PATTERN.test(value);
}
