/**
 * Permission patterns: `service:scope:action` where service and action may hold one
 * `*` (whole, prefix, suffix or infix) and scope is `*` or one concrete scope.
 *
 * @module
 */
import { PermissionFormatError } from "./errors.ts";
import { type PermissionId, quote, type Scope, splitSegments } from "./permission.ts";

const WILDCARD_SEGMENT = /^[a-z0-9_-]*\*[a-z0-9_-]*$/;
const CONCRETE = /^[a-z0-9_-]+$/;

/**
 * One compiled service or action segment. A concrete segment has `wildcard: false`
 * and matches only `text`; a wildcard segment matches any string that starts with
 * `prefix`, ends with `suffix` and is at least as long as both together (`*`
 * matches zero or more characters and never crosses a `:`).
 */
export interface PatternSegment {
  /** The segment as written. */
  readonly text: string;
  /** Whether the segment holds a `*`. */
  readonly wildcard: boolean;
  /** Characters before the `*` (the whole text when concrete). */
  readonly prefix: string;
  /** Characters after the `*` (empty when concrete). */
  readonly suffix: string;
}

/** Whether a compiled segment matches one concrete segment. */
export function segmentMatches(segment: PatternSegment, text: string): boolean {
  if (!segment.wildcard) return segment.text === text;
  return text.length >= segment.prefix.length + segment.suffix.length &&
    text.startsWith(segment.prefix) && text.endsWith(segment.suffix);
}

/** A compiled permission pattern. Frozen. */
export interface PermissionPattern {
  /** The canonical text; `toString()` returns it and parsing it gives back an equal pattern. */
  readonly text: string;
  /** The service segment. */
  readonly service: PatternSegment;
  /** The scope segment: one scope or `*`. */
  readonly scope: Scope | "*";
  /** The action segment. */
  readonly action: PatternSegment;
  /** Whether the pattern matches a concrete permission id. */
  matches(id: PermissionId): boolean;
  /** Whether the pattern matches the id `service:scope:action` given as (valid) parts. */
  matchesParts(service: string, scope: Scope, action: string): boolean;
  /** The canonical text. */
  toString(): string;
}

class CompiledPattern implements PermissionPattern {
  readonly text: string;
  readonly service: PatternSegment;
  readonly scope: Scope | "*";
  readonly action: PatternSegment;

  constructor(text: string, service: PatternSegment, scope: Scope | "*", action: PatternSegment) {
    this.text = text;
    this.service = service;
    this.scope = scope;
    this.action = action;
    Object.freeze(this);
  }

  matches(id: PermissionId): boolean {
    return this.matchesParts(id.service, id.scope, id.action);
  }

  matchesParts(service: string, scope: Scope, action: string): boolean {
    return (this.scope === "*" || this.scope === scope) && segmentMatches(this.service, service) &&
      segmentMatches(this.action, action);
  }

  toString(): string {
    return this.text;
  }
}

function compileSegment(text: string, whole: string, which: string): PatternSegment {
  const star = text.indexOf("*");
  if (star === -1) {
    if (!CONCRETE.test(text)) {
      throw new PermissionFormatError(
        "invalid_character",
        whole,
        `The ${which} segment of the permission pattern ${quote(whole)} has a character outside [a-z0-9_-*].`,
      );
    }
    return Object.freeze({ text, wildcard: false, prefix: text, suffix: "" });
  }
  if (text.indexOf("*", star + 1) !== -1) {
    throw new PermissionFormatError(
      "two_wildcards",
      whole,
      `The ${which} segment of the permission pattern ${quote(whole)} has more than one '*'.`,
    );
  }
  if (!WILDCARD_SEGMENT.test(text)) {
    throw new PermissionFormatError(
      "invalid_character",
      whole,
      `The ${which} segment of the permission pattern ${quote(whole)} has a character outside [a-z0-9_-*].`,
    );
  }
  return Object.freeze({ text, wildcard: true, prefix: text.slice(0, star), suffix: text.slice(star + 1) });
}

/**
 * Parses and compiles a permission pattern once.
 *
 * @throws {PermissionFormatError} on uppercase, dots, a wrong segment count, an empty
 *   segment, two `*` in one segment (`two_wildcards`), a partial scope wildcard such
 *   as `gl*` (`partial_scope_wildcard`), an unknown scope or another character.
 */
export function parsePermissionPattern(text: string): PermissionPattern {
  const [service, scope, action] = splitSegments(text, "permission pattern");
  const serviceSegment = compileSegment(service, text, "service");
  let compiledScope: Scope | "*";
  if (scope === "*") {
    compiledScope = "*";
  } else if (scope.includes("*")) {
    throw new PermissionFormatError(
      "partial_scope_wildcard",
      text,
      `The scope segment of the permission pattern ${quote(text)} must be '*' or a whole scope, not ${
        quote(scope)
      }.`,
    );
  } else if (scope === "global" || scope === "org" || scope === "team" || scope === "self") {
    compiledScope = scope;
  } else {
    throw new PermissionFormatError(
      "unknown_scope",
      text,
      `The permission pattern ${quote(text)} has the unknown scope ${quote(scope)}.`,
    );
  }
  const actionSegment = compileSegment(action, text, "action");
  return new CompiledPattern(text, serviceSegment, compiledScope, actionSegment);
}
