/**
 * The SQL user store. Emails are stored trimmed and lowercased; `(realm_id, email)`
 * is unique.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { NotFoundError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import { normalizeEmail, type User, type UserStore } from "../contract/users.ts";
import type { Database, Executor } from "../database.ts";
import {
  asObject,
  type ConstraintMap,
  guarded,
  isUuid,
  jsonb,
  now,
  pageOf,
  requireUuid,
} from "./directory-support.ts";

const CONSTRAINTS: ConstraintMap = {
  unique: { users_realm_id_email_key: "user_email_taken" },
  foreign: { users_realm_id_fkey: "Realm" },
};

function checkedEmail(email: string): string {
  const normalized = typeof email === "string" ? normalizeEmail(email) : "";
  if (normalized.length === 0) throw new ValidationError("An email is required.", { field: "email" });
  return normalized;
}

function checkedAttributes(attributes: unknown): Record<string, unknown> {
  if (attributes === null || typeof attributes !== "object" || Array.isArray(attributes)) {
    throw new ValidationError("attributes must be a JSON object.", { field: "attributes" });
  }
  return attributes as Record<string, unknown>;
}

/** A {@link UserStore} over the svc schema. */
export function createSqlUserStore(db: Executor, deps: { clock: Clock; random: RandomSource }): UserStore {
  return {
    async create(input) {
      requireUuid(input.realmId, "Realm");
      const email = checkedEmail(input.email);
      const at = now(deps.clock);
      const row = await guarded(CONSTRAINTS, () =>
        db.insertInto("users").values({
          id: randomUuid(deps.random),
          realm_id: input.realmId,
          email,
          email_verified: input.emailVerified ?? false,
          display_name: input.displayName ?? null,
          status: input.status ?? "Active",
          attributes: jsonb(checkedAttributes(input.attributes ?? {})),
          is_break_glass: input.isBreakGlass ?? false,
          anonymized_at: null,
          created_at: at,
          updated_at: at,
        }).returningAll().executeTakeFirstOrThrow());
      return userFromRow(row);
    },
    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
      return row === undefined ? null : userFromRow(row);
    },
    async findByEmail(realmId, email) {
      if (!isUuid(realmId) || typeof email !== "string") return null;
      const row = await db.selectFrom("users").selectAll()
        .where("realm_id", "=", realmId).where("email", "=", normalizeEmail(email)).executeTakeFirst();
      return row === undefined ? null : userFromRow(row);
    },
    async update(id, changes) {
      requireUuid(id, "User");
      const set: Record<string, unknown> = { updated_at: now(deps.clock) };
      if (changes.email !== undefined) set.email = checkedEmail(changes.email);
      if (changes.displayName !== undefined) set.display_name = changes.displayName;
      if (changes.emailVerified !== undefined) set.email_verified = changes.emailVerified;
      if (changes.status !== undefined) set.status = changes.status;
      if (changes.attributes !== undefined) set.attributes = jsonb(checkedAttributes(changes.attributes));
      const row = await guarded(
        CONSTRAINTS,
        () => db.updateTable("users").set(set).where("id", "=", id).returningAll().executeTakeFirst(),
      );
      if (row === undefined) throw new NotFoundError("User not found.");
      return userFromRow(row);
    },
    async mergeAttributes(id, attributes) {
      requireUuid(id, "User");
      const patch = jsonb(checkedAttributes(attributes));
      const row = await db.updateTable("users")
        .set({ attributes: sql`attributes || ${patch}`, updated_at: now(deps.clock) })
        .where("id", "=", id).returningAll().executeTakeFirst();
      if (row === undefined) throw new NotFoundError("User not found.");
      return userFromRow(row);
    },
    async anonymize(id) {
      requireUuid(id, "User");
      const at = now(deps.clock);
      const row = await db.updateTable("users").set({
        email: `${id.toLowerCase()}@erased.invalid`,
        email_verified: false,
        display_name: null,
        attributes: jsonb({}),
        status: "Suspended",
        anonymized_at: at,
        updated_at: at,
      }).where("id", "=", id).returningAll().executeTakeFirst();
      if (row === undefined) throw new NotFoundError("User not found.");
      return userFromRow(row);
    },
    async listByRealm(realmId, page) {
      const { offset, limit } = pageOf(page);
      if (!isUuid(realmId) || limit === 0) return [];
      let query = db.selectFrom("users").selectAll().where("realm_id", "=", realmId)
        .orderBy("created_at").orderBy("id").offset(offset);
      if (limit !== undefined) query = query.limit(limit);
      return (await query.execute()).map(userFromRow);
    },
  };
}

function userFromRow(row: Selectable<Database["users"]>): User {
  return {
    id: row.id,
    realmId: row.realm_id,
    email: row.email,
    emailVerified: row.email_verified,
    displayName: row.display_name,
    status: row.status,
    attributes: asObject(row.attributes),
    isBreakGlass: row.is_break_glass,
    anonymizedAt: row.anonymized_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
