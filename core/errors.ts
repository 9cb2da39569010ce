/**
 * The base of every error svc raises on purpose. Each subclass carries a stable
 * machine-readable `code` (snake_case, never changes once shipped) and the HTTP
 * status the HTTP layer answers with. Messages are for humans and never contain
 * secrets; `code` is what clients branch on.
 *
 * @example
 * ```ts
 * import { SvcError } from "@svc/svc";
 *
 * try {
 *   throw new SvcError("not_found", "The session was not found.", 404);
 * } catch (err) {
 *   if (!(err instanceof SvcError)) throw err;
 *   err.code; // "not_found": what clients branch on
 *   err.status; // 404: what the HTTP layer answers with
 *   err.message; // "The session was not found."
 * }
 * ```
 */
export class SvcError extends Error {
  /** Stable machine-readable error code. */
  readonly code: string;
  /** HTTP status the error maps to. */
  readonly status: number;
  /** Optional structured, non-secret details (for example the invalid field). */
  readonly details?: Record<string, unknown>;

  /** An error with its stable `code`, a message for people, the HTTP `status` and optional non-secret details. */
  constructor(code: string, message: string, status = 400, details?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/** A request body, query or parameter failed validation. Code `invalid_request`. */
export class ValidationError extends SvcError {
  /** A validation failure; `details` names the field. */
  constructor(message: string, details?: Record<string, unknown>) {
    super("invalid_request", message, 400, details);
  }
}

/** The resource does not exist or the caller may not know it exists. Code `not_found`. */
export class NotFoundError extends SvcError {
  /** A 404 with an optional message. */
  constructor(message = "Not found.") {
    super("not_found", message, 404);
  }
}

/** The caller is not authenticated. Code `unauthenticated`. */
export class UnauthenticatedError extends SvcError {
  /** A 401 with an optional message. */
  constructor(message = "Authentication is required.") {
    super("unauthenticated", message, 401);
  }
}

/** The caller is authenticated but not permitted. Code `forbidden`. */
export class ForbiddenError extends SvcError {
  /** A 403 with an optional message. */
  constructor(message = "You are not allowed to do this.") {
    super("forbidden", message, 403);
  }
}

/** A uniqueness or state conflict. Code `conflict`. */
export class ConflictError extends SvcError {
  /** A conflict; `details` names what conflicts. */
  constructor(message: string, details?: Record<string, unknown>) {
    super("conflict", message, 409, details);
  }
}

/** A persistent storage fault that survived the bounded retries. Code `storage_unavailable`. */
export class StorageError extends SvcError {
  /** A storage fault; `cause` keeps the driver error for logs. */
  constructor(message: string, options?: { cause?: unknown }) {
    super("storage_unavailable", message, 503);
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}
