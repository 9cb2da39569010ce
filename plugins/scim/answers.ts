/**
 * SCIM answers: `application/scim+json`, never cached, and every refusal (SCIM's own, svc's,
 * an unexpected failure) as a SCIM error body with its status and `scimType`.
 *
 * @module
 */
import { ConflictError, SvcError } from "../../mod.ts";
import { invalidValue, notFound, ScimError, scimErrorBody, uniqueness } from "./errors.ts";

/** The content type of SCIM answers. */
export const SCIM_CONTENT_TYPE = "application/scim+json; charset=utf-8";

/** A SCIM JSON answer. */
export function scimJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": SCIM_CONTENT_TYPE, "Cache-Control": "no-store", ...headers },
  });
}

/** The SCIM error answer of a refusal (an unexpected error is logged and answered 500). */
export function errorResponse(error: unknown, logError?: (line: string) => void): Response {
  let e: ScimError | SvcError;
  if (error instanceof ScimError || error instanceof SvcError) e = error;
  else if ((error as { status?: number })?.status === 404) e = notFound();
  else {
    logError?.(`scim: request failed: ${(error as Error)?.message?.split("\n")[0]}`);
    e = new ScimError(500, null, "The request failed.");
  }
  if (e instanceof SvcError && !(e instanceof ScimError)) {
    // svc's own refusals in SCIM's shape.
    if (e.status === 409 || e instanceof ConflictError) e = uniqueness(e.message);
    else if (e.status === 400) e = invalidValue(e.message);
    else if (e.status === 413) e = new ScimError(413, null, e.message);
  }
  const headers: Record<string, string> = e.status === 401
    ? { "WWW-Authenticate": 'Bearer realm="scim"' }
    : {};
  return scimJson(scimErrorBody(e), e.status, headers);
}
