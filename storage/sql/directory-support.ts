/**
 * Shared plumbing of the directory stores (realms, organizations, users, teams,
 * groups, roles, policies, catalogs): id checks, Postgres error mapping, jsonb and
 * array parameters that behave the same on PGlite and postgres.js, transactions
 * that nest into a caller's transaction, pagination and grant rows.
 *
 * @module
 */
import { type RawBuilder, type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import type { RandomSource } from "../../core/random.ts";
import { ConflictError, NotFoundError, SvcError, ValidationError } from "../../core/errors.ts";
import type { Database, Executor } from "../database.ts";
import type { PageRequest } from "../../core/storage/organizations.ts";
import type { Grant, GrantEffect, GrantInput } from "../../core/storage/roles.ts";
import { isUuid } from "../../core/ids.ts";
export { isUuid } from "../../core/ids.ts";

export { atomically } from "./transaction.ts";

/** Throws NotFoundError unless `id` is a UUID (a non-UUID can never name a row). */
export function requireUuid(id: string, what: string): void {
  if (!isUuid(id)) throw new NotFoundError(`${what} not found.`);
}

/** The clock's current time as a Date. */
export function now(clock: Clock): Date {
  return new Date(clock.now());
}

/** A jsonb parameter: sent as text and cast, so neither driver re-encodes it. */
export function jsonb(value: unknown): RawBuilder<unknown> {
  return sql<unknown>`${JSON.stringify(value)}::text::jsonb`;
}

/** A text[] parameter. */
export function textArray(values: readonly string[]): RawBuilder<string[]> {
  return sql<string[]>`cast(${[...values]} as text[])`;
}

/** jsonb comes back parsed from both drivers; a string is tolerated for safety. */
export function parseJson(value: unknown): unknown {
  if (typeof value !== "string") return value ?? null;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** A JSON object, or an empty one for anything else. */
export function asObject(value: unknown): Record<string, unknown> {
  const parsed = parseJson(value);
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
    ? parsed as Record<string, unknown>
    : {};
}

interface PgErrorShape {
  code?: unknown;
  constraint?: unknown;
  constraint_name?: unknown;
}

/** The SQLSTATE and constraint name of a driver error (PGlite and postgres.js name them differently). */
export function pgError(error: unknown): { code: string; constraint: string } | null {
  if (error === null || typeof error !== "object") return null;
  const e = error as PgErrorShape;
  if (typeof e.code !== "string") return null;
  const constraint = typeof e.constraint === "string"
    ? e.constraint
    : typeof e.constraint_name === "string"
    ? e.constraint_name
    : "";
  return { code: e.code, constraint };
}

/** How constraint violations of one statement translate into svc errors. */
export interface ConstraintMap {
  /** Unique constraint or index name → the stable conflict reason (ConflictError details.reason). */
  readonly unique?: Readonly<Record<string, string>>;
  /** Foreign-key constraint name → what was not found ("Realm", "Organization"…). */
  readonly foreign?: Readonly<Record<string, string>>;
}

/**
 * Translates a driver error into a svc error: unique violations → ConflictError with
 * `details.reason` (a stable snake_case code), foreign-key violations → NotFoundError,
 * check and not-null violations → ValidationError. Anything else is rethrown as is.
 */
export function translate(error: unknown, map: ConstraintMap): never {
  if (error instanceof SvcError) throw error;
  const info = pgError(error);
  if (info === null) throw error;
  let mapped: SvcError | undefined;
  switch (info.code) {
    case "23505": {
      const reason = map.unique?.[info.constraint] ?? "duplicate";
      mapped = new ConflictError(`Duplicate key (${reason}).`, { reason, constraint: info.constraint });
      break;
    }
    case "23503": {
      const what = map.foreign?.[info.constraint] ?? "Referenced row";
      mapped = new NotFoundError(`${what} not found.`);
      break;
    }
    case "23514":
    case "23502":
    case "22P02":
      mapped = new ValidationError("A value violates a storage constraint.", { constraint: info.constraint });
      break;
  }
  if (mapped === undefined) throw error;
  (mapped as { cause?: unknown }).cause = error;
  throw mapped;
}

/** Runs a statement, translating constraint violations per `map`. */
export async function guarded<T>(map: ConstraintMap, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    translate(error, map);
  }
}

/** Offset and limit of a page request, validated; `limit` undefined means no limit. */
export function pageOf(page: PageRequest | undefined): { offset: number; limit: number | undefined } {
  const offset = page?.offset ?? 0;
  const limit = page?.limit;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new ValidationError("offset must be a non-negative integer.", { field: "offset" });
  }
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new ValidationError("limit must be a non-negative integer.", { field: "limit" });
  }
  return { offset, limit };
}

// ---- Grants (shared by roles and policies) ----

/** Conflict reason of a grant whose logical identity (owner, pattern, effect, condition) exists. */
export const GRANT_EXISTS = "grant_exists";

const GRANT_CONSTRAINTS: ConstraintMap = {
  unique: { grants_logical_identity: GRANT_EXISTS },
  foreign: { grants_role_id_fkey: "Role", grants_policy_id_fkey: "Policy" },
};

/** The owner of a grant row. */
export type GrantOwner = { readonly roleId: string } | { readonly policyId: string };

const EFFECTS: ReadonlySet<string> = new Set<GrantEffect>(["Allow", "Deny"]);

function checkGrantInput(grant: GrantInput): void {
  if (typeof grant.pattern !== "string" || grant.pattern.length === 0) {
    throw new ValidationError("A grant needs a pattern.", { field: "pattern" });
  }
  if (!EFFECTS.has(grant.effect)) {
    throw new ValidationError("A grant effect is Allow or Deny.", { field: "effect" });
  }
  if (grant.orgId != null && !isUuid(grant.orgId)) {
    throw new ValidationError("A grant orgId is an organization id (a UUID).", { field: "orgId" });
  }
}

/** The grants column that names `owner`, as a `where` condition. */
function ownerColumn(owner: GrantOwner): ["role_id" | "policy_id", "=", string] {
  return "roleId" in owner ? ["role_id", "=", owner.roleId] : ["policy_id", "=", owner.policyId];
}

/** Inserts grants for one owner in order, one statement each (so `created_at, id` order is input order). */
export async function insertGrants(
  db: Executor,
  owner: GrantOwner,
  grants: readonly GrantInput[],
  at: Date,
  newId: () => string,
): Promise<Grant[]> {
  for (const grant of grants) checkGrantInput(grant);
  const out: Grant[] = [];
  for (const grant of grants) {
    const row = await guarded(GRANT_CONSTRAINTS, () =>
      db.insertInto("grants").values({
        id: newId(),
        role_id: "roleId" in owner ? owner.roleId : null,
        policy_id: "policyId" in owner ? owner.policyId : null,
        pattern: grant.pattern,
        effect: grant.effect,
        org_id: grant.orgId ?? null,
        team_ids: textArray(grant.teamIds ?? []),
        condition: grant.condition === undefined || grant.condition === null ? null : jsonb(grant.condition),
        created_at: at,
      }).returningAll().executeTakeFirstOrThrow());
    out.push(grantFromRow(row));
  }
  return out;
}

/** Every grant of one owner, in creation order (created_at, then id). */
async function listGrantsOf(db: Executor, owner: GrantOwner): Promise<Grant[]> {
  const rows = await db.selectFrom("grants").selectAll()
    .where(...ownerColumn(owner))
    .orderBy("created_at").orderBy("id")
    .execute();
  return rows.map(grantFromRow);
}

/** The grant of `owner` with this logical identity, or null. Conditions compare as JSON values. */
async function findGrantOf(
  db: Executor,
  owner: GrantOwner,
  pattern: string,
  effect: string,
  condition: unknown,
): Promise<Grant | null> {
  const row = await db.selectFrom("grants").selectAll()
    .where(...ownerColumn(owner))
    .where("pattern", "=", pattern)
    .where("effect", "=", effect as GrantEffect)
    .where((eb) =>
      condition === undefined || condition === null
        ? eb("condition", "is", null)
        : eb("condition", "=", jsonb(condition))
    )
    .executeTakeFirst();
  return row === undefined ? null : grantFromRow(row);
}

/** Deletes one grant of `owner`; false when there was none. */
async function deleteGrantOf(db: Executor, owner: GrantOwner, grantId: string): Promise<boolean> {
  if (!isUuid(grantId)) return false;
  const result = await db.deleteFrom("grants")
    .where("id", "=", grantId)
    .where(...ownerColumn(owner))
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The grant methods a role or policy store exposes, over one kind of owner. */
export interface GrantMethods {
  addGrant(ownerId: string, grant: GrantInput): Promise<Grant>;
  removeGrant(ownerId: string, grantId: string): Promise<boolean>;
  listGrants(ownerId: string): Promise<Grant[]>;
  findGrantByLogicalIdentity(
    ownerId: string,
    pattern: string,
    effect: GrantEffect,
    condition: unknown,
  ): Promise<Grant | null>;
}

/**
 * The grant methods of roles (`kind` "Role") or policies ("Policy"): adding to an unknown or
 * malformed owner id is NotFoundError; reads and removals of one answer empty, null or false.
 */
export function grantMethods(
  db: Executor,
  kind: "Role" | "Policy",
  deps: { clock: Clock; newId: () => string },
): GrantMethods {
  const owner = (id: string): GrantOwner => kind === "Role" ? { roleId: id } : { policyId: id };
  return {
    async addGrant(ownerId, grant) {
      requireUuid(ownerId, kind);
      const [inserted] = await insertGrants(db, owner(ownerId), [grant], now(deps.clock), deps.newId);
      return inserted;
    },
    async removeGrant(ownerId, grantId) {
      if (!isUuid(ownerId)) return false;
      return await deleteGrantOf(db, owner(ownerId), grantId);
    },
    async listGrants(ownerId) {
      if (!isUuid(ownerId)) return [];
      return await listGrantsOf(db, owner(ownerId));
    },
    async findGrantByLogicalIdentity(ownerId, pattern, effect, condition) {
      if (!isUuid(ownerId)) return null;
      return await findGrantOf(db, owner(ownerId), pattern, effect, condition);
    },
  };
}

/** A grant row as a record. */
export function grantFromRow(row: Selectable<Database["grants"]>): Grant {
  return {
    id: row.id,
    roleId: row.role_id,
    policyId: row.policy_id,
    pattern: row.pattern,
    effect: row.effect,
    orgId: row.org_id,
    teamIds: row.team_ids ?? [],
    condition: parseJson(row.condition),
    createdAt: row.created_at,
  };
}

/**
 * An organization's realm, for checks that an org-level record stays in its realm:
 * NotFoundError when the organization does not exist, ValidationError when it
 * belongs to another realm.
 */
export async function requireOrgInRealm(db: Executor, orgId: string, realmId: string): Promise<void> {
  requireUuid(orgId, "Organization");
  const org = await db.selectFrom("organizations").select("realm_id").where("id", "=", orgId)
    .executeTakeFirst();
  if (org === undefined) throw new NotFoundError("Organization not found.");
  if (org.realm_id !== realmId) {
    throw new ValidationError("The organization belongs to another realm.", { field: "orgId" });
  }
}

/** What every directory store factory takes besides the executor. */
export interface StoreDeps {
  readonly clock: Clock;
  readonly random: RandomSource;
}
