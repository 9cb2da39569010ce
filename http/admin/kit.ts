/**
 * The conventions every `/svc-admin` route shares, in one place so that routes cannot drift:
 *
 * - lists answer `{ items, offset, limit, total }` (`?offset=&limit=`, limit 1–200, default 50);
 * - query strings are validated by valibot like bodies (U+0000 refused by `parseQuery`);
 * - what the caller may not see is 404 (`hidden`), never 403;
 * - updates of versioned resources (users, roles, organizations) answer an `ETag` (`"<version>"`)
 *   and honour `If-Match` (412 `precondition_failed` on a stale write; no header: last write wins);
 * - every mutation goes through {@link adminMutation}: refused while impersonating (403
 *   `impersonation_forbidden`), one audit chain entry with the true actor (`auditActor`), events
 *   recorded in the same transaction;
 * - a mutation decides inside its transaction, which runs after every other admin mutation of the
 *   realm (`runAdminMutation` takes the realm's audit lock first), whether it changes anything: it
 *   reads the target there and checks the rows its writes affected; one that changes nothing
 *   (a repeat: {@link changesNothing}, {@link sameView}) emits no event and appends no entry, and
 *   answers what it answers sequentially (404 for a delete of what is gone, the unchanged
 *   resource or 204 for an idempotent revoke, disable or state change).
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  type AdminMutationContext,
  type AdminMutationResult,
  runAdminMutation,
} from "../../core/audit/mutation.ts";
import { canonicalJson } from "../../core/canonical-json.ts";
import type { EventPublisher } from "../../core/events/publisher.ts";
import { ConflictError, NotFoundError, SvcError } from "../../core/errors.ts";
import type { AdminAuditEntry } from "../../core/storage/admin-audit.ts";
import type { Storage } from "../../core/storage/storage.ts";
import { auditActor } from "../auth/audit-actor.ts";
import { covers, type FenceScope } from "../auth/fence.ts";
import type { Principal } from "../auth/principal.ts";
import { validationError } from "../errors.ts";
import type { SvcEnv } from "../request-id.ts";

/** Default page size of admin lists. */
export const PAGE_LIMIT_DEFAULT = 50;
/** Largest page size of admin lists. */
export const PAGE_LIMIT_MAX = 200;

/** A query parameter holding a whole number between `min` and `max` (validated, then a number). */
export const wholeNumber = (name: string, min: number, max: number): v.GenericSchema<string, number> =>
  v.pipe(
    v.string(`${name} must be a whole number`),
    v.regex(/^\d{1,10}$/, `${name} must be a whole number`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

/** An optional whole-number query parameter. */
export type OptionalNumberParam = v.OptionalSchema<v.GenericSchema<string, number>, undefined>;

/** The paging part of list queries: `offset` (default 0) and `limit` (1–200, default 50). */
export const PAGE_QUERY_ENTRIES: {
  readonly offset: OptionalNumberParam;
  readonly limit: OptionalNumberParam;
} = {
  offset: v.optional(
    v.pipe(wholeNumber("offset", 0, 1_000_000_000), v.description("Items to skip (default 0).")),
  ),
  limit: v.optional(
    v.pipe(wholeNumber("limit", 1, PAGE_LIMIT_MAX), v.description("Page size, 1–200 (default 50).")),
  ),
};

/** The query of a plain list route. */
export const PageQuerySchema: v.StrictObjectSchema<typeof PAGE_QUERY_ENTRIES, undefined> = v.strictObject(
  PAGE_QUERY_ENTRIES,
);

/** A page request after validation. */
export interface Page {
  /** Items of the whole list skipped before the page (0 or more). */
  readonly offset: number;
  /** Most items the page holds (1–200). */
  readonly limit: number;
}

/** The page of a validated query. */
export function pageOf(query: { offset?: number; limit?: number }): Page {
  return { offset: query.offset ?? 0, limit: query.limit ?? PAGE_LIMIT_DEFAULT };
}

/** A list answer. */
export interface ListBody<T> {
  /** The page's items, at most `limit` of them. */
  items: T[];
  /** Items of the whole list skipped before this page. */
  offset: number;
  /** The page size asked for (the last page may hold fewer). */
  limit: number;
  /** Items in the whole list. */
  total: number;
}

/** The list answer of one page. */
export function listBody<T>(items: T[], page: Page, total: number): ListBody<T> {
  return { items, offset: page.offset, limit: page.limit, total };
}

/** The list answer of one page of `all` (a list read whole), each item shown by `view`. */
export function listBodyOf<T, V>(all: readonly T[], page: Page, view: (item: T) => V): ListBody<V> {
  return listBody(
    all.slice(page.offset, page.offset + page.limit).map((item) => view(item)),
    page,
    all.length,
  );
}

/** The schema of a list answer of `item`s (for the OpenAPI document and response checks). */
export function listSchema<S extends v.GenericSchema>(item: S): v.ObjectSchema<{
  readonly items: v.ArraySchema<S, undefined>;
  readonly offset: v.NumberSchema<undefined>;
  readonly limit: v.NumberSchema<undefined>;
  readonly total: v.SchemaWithPipe<readonly [v.NumberSchema<undefined>, v.DescriptionAction<number, string>]>;
}, undefined> {
  return v.object({
    items: v.array(item),
    offset: v.number(),
    limit: v.number(),
    total: v.pipe(v.number(), v.description("Items in the whole list.")),
  });
}

/**
 * Validates the query string with `schema` (an object schema of strings). Repeated parameters
 * are refused; so is U+0000 (`invalid_request`).
 */
export function parseQuery<S extends v.GenericSchema>(c: Context<SvcEnv>, schema: S): v.InferOutput<S> {
  const all = c.req.queries();
  const query: Record<string, string> = {};
  for (const [name, values] of Object.entries(all)) {
    if (values.length !== 1) {
      throw new SvcError("invalid_request", `Invalid request: ${name}: give it once.`, 400);
    }
    query[name] = values[0];
  }
  const result = v.safeParse(schema, query);
  if (!result.success) throw validationError(result.issues);
  return result.output;
}

/** 404 for a resource the caller may not see (or that does not exist: the same answer). */
export function hidden(what = "resource"): NotFoundError {
  return new NotFoundError(`No such ${what}.`);
}

/** The resource of `orgId` (null: realm-level) is visible in `scope`, else 404. */
export function requireVisible(scope: FenceScope, orgId: string | null, what?: string): void {
  if (!covers(scope, orgId)) throw hidden(what);
}

/** `If-Match` failed: the resource changed since it was read. */
export class PreconditionFailedError extends SvcError {
  constructor() {
    super("precondition_failed", "The resource changed since it was read (If-Match); read it again.", 412);
  }
}

/** The entity tag of a resource version. */
export function versionTag(version: number): string {
  return `"${version}"`;
}

/** Sets the `ETag` of a versioned resource on the answer. */
export function setVersionTag(c: Context<SvcEnv>, version: number): void {
  c.header("ETag", versionTag(version));
}

/**
 * The version an `If-Match` header asks for: undefined without the header (or with `*`);
 * a list or a tag that is not one of ours can never match (412).
 */
export function ifMatchVersion(c: Context<SvcEnv>): number | undefined {
  const header = c.req.header("If-Match");
  if (header === undefined || header.trim() === "*") return undefined;
  const match = /^\s*(?:W\/)?"(\d{1,15})"\s*$/.exec(header);
  if (match === null) throw new PreconditionFailedError();
  return Number(match[1]);
}

/** Compares a resource's current version with the one `If-Match` asked for. */
export function checkVersion(expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== current) throw new PreconditionFailedError();
}

/** Refusal of admin mutations under impersonation. */
export class ImpersonationForbiddenError extends SvcError {
  constructor() {
    super("impersonation_forbidden", "This is not allowed while impersonating a user.", 403);
  }
}

/** Throws 403 `impersonation_forbidden` when the caller acts under impersonation (`act`). */
export function refuseUnderImpersonation(principal: Principal): void {
  if (principal.act) throw new ImpersonationForbiddenError();
}

/** What {@link adminMutation} needs. */
export interface AdminMutationDeps {
  readonly storage: Storage;
  readonly publisher?: EventPublisher;
}

/**
 * Runs an admin mutation for the fenced caller: refused under impersonation, then the work, its
 * audit entry (true actor kind) and its events in one transaction (`runAdminMutation`).
 */
export async function adminMutation<T>(
  deps: AdminMutationDeps,
  scope: FenceScope,
  work: (ctx: AdminMutationContext) => Promise<AdminMutationResult<T>>,
): Promise<{ value: T; entry: AdminAuditEntry | null }> {
  refuseUnderImpersonation(scope.principal);
  return await runAdminMutation(deps, scope.principal.realmId, auditActor(scope.principal), work);
}

/**
 * The requested `changes` (fields left undefined are not asked for) are what `current` holds
 * already: an update that would change nothing, which writes nothing and appends no entry.
 * Values compare as canonical JSON (lists in order, object keys in any order).
 */
export function changesNothing(current: object, changes: object): boolean {
  const held = current as Record<string, unknown>;
  return Object.entries(changes).every(([field, value]) =>
    value === undefined || canonicalJson(held[field] ?? null) === canonicalJson(value)
  );
}

/**
 * Two views of a resource, before and after a write, show the same thing: the write changed
 * nothing that matters, so it appends no entry and emits no event.
 */
export function sameView(before: unknown, after: unknown): boolean {
  return canonicalJson(before) === canonicalJson(after);
}

/**
 * A storage conflict as the 409 answer of admin routes: its stable `details.reason`
 * (`user_email_taken`, `organization_name_taken`, `role_key_taken`…) becomes the error code.
 * Anything else is rethrown unchanged.
 */
export function asConflict(error: unknown): never {
  if (error instanceof ConflictError) {
    const reason = error.details?.reason;
    if (typeof reason === "string" && /^[a-z0-9_]+$/.test(reason)) {
      throw new SvcError(reason, error.message, 409, { reason });
    }
  }
  throw error;
}
