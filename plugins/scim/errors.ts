/**
 * SCIM errors (RFC 7644 section 3.12): every refusal of the SCIM endpoints is a {@link ScimError}
 * with its HTTP status and, where the RFC names one, its `scimType`; the routes answer its
 * {@link scimErrorBody}.
 *
 * @module
 */
import { SvcError } from "../../mod.ts";

/** The `scimType` values of RFC 7644 table 9 (and `tooMany`, `sensitive`). */
export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

/** The error schema URN. */
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

/** A SCIM refusal: code `scim_<scimType>` (or `scim_error`), its status and `scimType`. */
export class ScimError extends SvcError {
  /** The `scimType` of the answer, or null where the RFC names none (401, 403, 404, 412, 413). */
  readonly scimType: ScimType | null;
  constructor(status: number, scimType: ScimType | null, message: string) {
    super(scimType === null ? "scim_error" : `scim_${scimType}`, message, status);
    this.name = "ScimError";
    this.scimType = scimType;
  }
}

/** 400 `invalidFilter`. */
export const invalidFilter = (message: string): ScimError => new ScimError(400, "invalidFilter", message);
/** 400 `invalidPath`. */
export const invalidPath = (message: string): ScimError => new ScimError(400, "invalidPath", message);
/** 400 `invalidValue`. */
export const invalidValue = (message: string): ScimError => new ScimError(400, "invalidValue", message);
/** 400 `invalidSyntax`. */
export const invalidSyntax = (message: string): ScimError => new ScimError(400, "invalidSyntax", message);
/** 400 `mutability`. */
export const mutability = (message: string): ScimError => new ScimError(400, "mutability", message);
/** 400 `noTarget`. */
export const noTarget = (message: string): ScimError => new ScimError(400, "noTarget", message);
/** 409 `uniqueness`. */
export const uniqueness = (message: string): ScimError => new ScimError(409, "uniqueness", message);
/** 404: no such resource (or one the connection may not see). */
export const notFound = (): ScimError => new ScimError(404, null, "Resource not found.");

/** The body of a SCIM error answer. */
export function scimErrorBody(error: ScimError | SvcError): Record<string, unknown> {
  const scimType = error instanceof ScimError ? error.scimType : null;
  return {
    schemas: [ERROR_SCHEMA],
    status: String(error.status),
    ...(scimType === null ? {} : { scimType }),
    detail: error.message,
  };
}
