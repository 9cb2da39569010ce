/**
 * Event payloads: what the `data` of an event of a kind holds, declared once per kind as a table
 * of fields (name, type, whether it may be absent or null, a one-line meaning). The table is the
 * contract: the event reference (docs/reference/events.md) is generated from it, and
 * {@link eventPayloadProblem} checks an emitted event against it (the test beds check every event
 * they see, so an undeclared kind or field fails the test that emitted it).
 *
 * Payloads never carry secrets (tokens, passwords, codes, keys): declare ids and outcomes.
 *
 * @module
 */

/**
 * The JSON type of a payload field: `object` and `object[]` are JSON objects whose inner
 * fields the meaning describes.
 */
export type EventFieldType = "string" | "integer" | "number" | "boolean" | "object" | "string[]" | "object[]";

/** One field of an event's `data`. */
export interface EventField {
  /** Its JSON type. */
  readonly type: EventFieldType;
  /** A one-line meaning. */
  readonly doc: string;
  /** Whether the field may be left out (absent from some events of the kind). */
  readonly optional?: boolean;
  /** Whether the field may be `null`. */
  readonly nullable?: boolean;
}

/** The fields of an event's `data`, by name. An empty object declares an empty `data`. */
export type EventPayload = Readonly<Record<string, EventField>>;

/** What a field may also be: absent (`optional`) or `null` (`nullable`). */
export interface EventFieldFlags {
  /** The field may be absent. */
  readonly optional?: boolean;
  /** The field may be `null`. */
  readonly nullable?: boolean;
}

function field(type: EventFieldType) {
  return (doc: string, flags: EventFieldFlags = {}): EventField => ({ type, doc, ...flags });
}

/**
 * Builders of payload fields, one per type: `eventField.string("the session started", { nullable: true })`.
 *
 * @example
 * ```ts
 * import { eventField, type EventPayload, payloadProblem } from "@svc/svc";
 *
 * const payload: EventPayload = {
 *   reportId: eventField.string("the report generated"),
 *   rows: eventField.integer("how many rows it holds"),
 *   note: eventField.string("what the author added", { optional: true, nullable: true }),
 * };
 * console.log(payloadProblem(payload, { reportId: "r1", rows: 3 })); // null
 * console.log(payloadProblem(payload, { reportId: "r1", rows: 3, secret: "x" })); // "field secret is not declared"
 * ```
 */
export const eventField: {
  /** A string field. */
  readonly string: (doc: string, flags?: EventFieldFlags) => EventField;
  /** A whole-number field. */
  readonly integer: (doc: string, flags?: EventFieldFlags) => EventField;
  /** A number field. */
  readonly number: (doc: string, flags?: EventFieldFlags) => EventField;
  /** A boolean field. */
  readonly boolean: (doc: string, flags?: EventFieldFlags) => EventField;
  /** A JSON object field (its inner fields described in `doc`). */
  readonly object: (doc: string, flags?: EventFieldFlags) => EventField;
  /** A list of strings. */
  readonly strings: (doc: string, flags?: EventFieldFlags) => EventField;
  /** A list of JSON objects (their fields described in `doc`). */
  readonly objects: (doc: string, flags?: EventFieldFlags) => EventField;
} = Object.freeze({
  string: field("string"),
  integer: field("integer"),
  number: field("number"),
  boolean: field("boolean"),
  object: field("object"),
  strings: field("string[]"),
  objects: field("object[]"),
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fits(type: EventFieldType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isSafeInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isPlainObject(value);
    case "string[]":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "object[]":
      return Array.isArray(value) && value.every(isPlainObject);
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "number" && !Number.isInteger(value) ? "a fractional number" : `a ${typeof value}`;
}

/**
 * What is wrong with `data` for `payload`, or null when it fits: a field not declared, a
 * declared field missing, or a value of another type. A field whose value is `undefined` counts
 * as absent (JSON drops it).
 */
export function payloadProblem(payload: EventPayload, data: unknown): string | null {
  if (!isPlainObject(data)) return "data is not an object";
  for (const [name, value] of Object.entries(data)) {
    if (value === undefined) continue;
    const declared = Object.hasOwn(payload, name) ? payload[name] : undefined;
    if (declared === undefined) return `field ${name} is not declared`;
    if (value === null) {
      if (!declared.nullable) return `field ${name} is null but not declared nullable`;
      continue;
    }
    if (!fits(declared.type, value)) return `field ${name} is ${describe(value)}, declared ${declared.type}`;
  }
  for (const [name, declared] of Object.entries(payload)) {
    if (!declared.optional && data[name] === undefined) return `field ${name} is missing`;
  }
  return null;
}

/** A catalog entry as the check needs it: a kind and its declared payload (absent: not declared). */
export interface DeclaredEventKind {
  /** The kind (`login.succeeded`), or a family pattern (`login.*`), which declares no payload. */
  readonly kind: string;
  /** Its payload; absent for family patterns and for plugin kinds declared without one. */
  readonly payload?: EventPayload;
}

/**
 * A check of events against a catalog (for example `pluginEventCatalog(plugins)`): the returned
 * function answers what is wrong with an event (its kind is not in the catalog, it has no
 * declared payload, or its data does not fit it), or null. With `acceptUndeclaredPayloads`, a
 * kind in the catalog without a payload (a third-party plugin's) accepts any data.
 */
export function eventPayloadProblem(
  catalog: readonly DeclaredEventKind[],
  options: { readonly acceptUndeclaredPayloads?: boolean } = {},
): (event: { readonly kind: string; readonly data: unknown }) => string | null {
  const byKind = new Map(catalog.map((entry) => [entry.kind, entry.payload]));
  return (event) => {
    if (!byKind.has(event.kind) || event.kind.endsWith(".*")) {
      return `event kind ${event.kind} is not in the catalog`;
    }
    const payload = byKind.get(event.kind);
    if (payload === undefined) {
      return options.acceptUndeclaredPayloads ? null : `event kind ${event.kind} declares no payload`;
    }
    const problem = payloadProblem(payload, event.data);
    return problem === null ? null : `event ${event.kind}: ${problem}`;
  };
}
