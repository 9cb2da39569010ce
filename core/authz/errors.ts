/**
 * Errors raised by the authorization engine. Each is a {@link SvcError} with a
 * stable `code`; the structured fields (`reason`, `path`, `field`) are repeated in
 * `details` so the HTTP layer can report them without knowing the classes.
 *
 * @module
 */
import { SvcError } from "../errors.ts";

/** Why a permission id or pattern was rejected. */
export type PermissionFormatReason =
  | "wildcard_in_id"
  | "uppercase"
  | "dotted_segment"
  | "empty_segment"
  | "segment_count"
  | "unknown_scope"
  | "two_wildcards"
  | "partial_scope_wildcard"
  | "invalid_character";

/**
 * A permission id (`service:scope:action`) or permission pattern does not follow
 * the grammar. Code `permission_format`; `reason` says which rule failed and the
 * message names the offending text.
 */
export class PermissionFormatError extends SvcError {
  /** Which grammar rule failed. */
  readonly reason: PermissionFormatReason;
  /** The rejected text (or a description of a non-string input). */
  readonly text: string;

  /** The failed rule, the rejected text and a message naming it. */
  constructor(reason: PermissionFormatReason, text: string, message: string) {
    super("permission_format", message, 400, { reason, text });
    this.reason = reason;
    this.text = text;
  }
}

/**
 * A condition document is invalid (wrong version, unknown operator or combinator,
 * malformed node). Code `condition_format`; `path` locates the bad node, for
 * example `condition.allOf[2].op` (the empty string is the document itself).
 */
export class ConditionFormatError extends SvcError {
  /** Location of the offending node inside the document. */
  readonly path: string;

  /** The JSON path of the offending node and a message. */
  constructor(path: string, message: string) {
    super("condition_format", message, 400, { path });
    this.path = path;
  }
}

/**
 * A grant is structurally invalid outside its pattern and condition (for example an
 * effect other than `Allow`/`Deny`). Code `grant_format`; `field` names the field.
 */
export class GrantFormatError extends SvcError {
  /** The offending grant field. */
  readonly field: string;

  /** The offending field and a message. */
  constructor(field: string, message: string) {
    super("grant_format", message, 400, { field });
    this.field = field;
  }
}

/**
 * A subject snapshot is structurally invalid (for example `teamIds` is not a list of
 * strings). Code `snapshot_format`; `field` names the field.
 */
export class SnapshotFormatError extends SvcError {
  /** The offending snapshot field. */
  readonly field: string;

  /** The offending field and a message. */
  constructor(field: string, message: string) {
    super("snapshot_format", message, 400, { field });
    this.field = field;
  }
}
