/**
 * Permission ids: `service:scope:action`, fully concrete.
 *
 * @module
 */
import { PermissionFormatError } from "./errors.ts";

/** The four permission scopes. */
export type Scope = "global" | "org" | "team" | "self";

/** The scopes, in a fixed order. */
export const SCOPES: readonly Scope[] = Object.freeze(["global", "org", "team", "self"] as const);

/** A parsed, concrete permission id. Frozen. */
export interface PermissionId {
  /** The canonical text, `service:scope:action`. */
  readonly text: string;
  /** The service segment (`[a-z0-9_-]+`). */
  readonly service: string;
  /** The scope segment. */
  readonly scope: Scope;
  /** The action segment (`[a-z0-9_-]+`). */
  readonly action: string;
}

/** `[a-z0-9_-]+`, the alphabet of concrete service and action segments. */
export const CONCRETE_SEGMENT = /^[a-z0-9_-]+$/;
const UPPERCASE = /\p{Lu}/u;

/** Whether `text` is one of the four scopes. */
export function isScope(text: unknown): text is Scope {
  return text === "global" || text === "org" || text === "team" || text === "self";
}

/** Quotes a text for an error message, shortened when very long. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

/**
 * The checks shared by ids and patterns before segment-level validation: type,
 * uppercase, dots, segment count and empty segments. Returns the three segments.
 * @internal
 */
export function splitSegments(text: unknown, what: string): [string, string, string] {
  if (typeof text !== "string") {
    throw new PermissionFormatError(
      "invalid_character",
      String(text),
      `A ${what} must be a string, got ${text === null ? "null" : typeof text}.`,
    );
  }
  if (UPPERCASE.test(text)) {
    throw new PermissionFormatError(
      "uppercase",
      text,
      `The ${what} ${quote(text)} contains an uppercase letter.`,
    );
  }
  if (text.includes(".")) {
    throw new PermissionFormatError(
      "dotted_segment",
      text,
      `The ${what} ${quote(text)} contains a dot; segments are [a-z0-9_-].`,
    );
  }
  const parts = text.split(":");
  if (parts.length !== 3) {
    throw new PermissionFormatError(
      "segment_count",
      text,
      `The ${what} ${quote(text)} has ${parts.length} segment(s); expected service:scope:action.`,
    );
  }
  for (const part of parts) {
    if (part === "") {
      throw new PermissionFormatError(
        "empty_segment",
        text,
        `The ${what} ${quote(text)} has an empty segment.`,
      );
    }
  }
  return parts as [string, string, string];
}

/**
 * Parses a concrete permission id `service:scope:action`.
 *
 * @throws {PermissionFormatError} on any `*` (`wildcard_in_id`), uppercase letter,
 *   dot, wrong segment count, empty segment, unknown scope or other character.
 */
export function parsePermissionId(text: string): PermissionId {
  if (typeof text === "string" && text.includes("*")) {
    throw new PermissionFormatError(
      "wildcard_in_id",
      text,
      `The permission id ${quote(text)} contains a wildcard; only patterns may.`,
    );
  }
  const [service, scope, action] = splitSegments(text, "permission id");
  if (!CONCRETE_SEGMENT.test(service)) {
    throw new PermissionFormatError(
      "invalid_character",
      text,
      `The service segment of the permission id ${quote(text)} has a character outside [a-z0-9_-].`,
    );
  }
  if (!isScope(scope)) {
    throw new PermissionFormatError(
      "unknown_scope",
      text,
      `The permission id ${quote(text)} has the unknown scope ${quote(scope)}.`,
    );
  }
  if (!CONCRETE_SEGMENT.test(action)) {
    throw new PermissionFormatError(
      "invalid_character",
      text,
      `The action segment of the permission id ${quote(text)} has a character outside [a-z0-9_-].`,
    );
  }
  return Object.freeze({ text, service, scope, action });
}

const CACHE_LIMIT = 4096;
const cache = new Map<string, PermissionId>();

/**
 * {@link parsePermissionId} memoized in a small bounded map (first-in, first-out
 * eviction), for the hot path where the same permission strings repeat. Invalid
 * texts are not cached and throw every time.
 */
export function parsePermissionIdCached(text: string): PermissionId {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const id = parsePermissionId(text);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(text, id);
  return id;
}
