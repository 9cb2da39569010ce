/**
 * The SQL user store. Emails are stored normalized (`normalizeEmail`: NFKC, trimmed,
 * lowercased, IDNA ASCII domain); `(realm_id, email)` is unique.
 *
 * @module
 */
import { type Selectable, type SelectQueryBuilder, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomToken, randomUuid } from "../../core/random.ts";
import { normalizeEmail, type User, type UserSearch, type UserStore } from "../../core/storage/users.ts";
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
    async createMany(inputs) {
      if (inputs.length === 0) return [];
      const at = now(deps.clock);
      const values = inputs.map((input) => {
        requireUuid(input.realmId, "Realm");
        return {
          id: randomUuid(deps.random),
          realm_id: input.realmId,
          email: checkedEmail(input.email),
          email_verified: input.emailVerified ?? false,
          display_name: input.displayName ?? null,
          status: input.status ?? "Active",
          attributes: jsonb(checkedAttributes(input.attributes ?? {})),
          is_break_glass: input.isBreakGlass ?? false,
          anonymized_at: null,
          created_at: at,
          updated_at: at,
          // Each bulk-created user starts with its own random stamp (a later password write rotates it).
          credential_stamp: randomToken(deps.random, 16),
        };
      });
      await guarded(CONSTRAINTS, () => db.insertInto("users").values(values).execute());
      return values.map((v, i) => ({
        id: v.id,
        realmId: v.realm_id,
        email: v.email,
        emailVerified: v.email_verified,
        displayName: v.display_name,
        status: v.status,
        attributes: { ...(inputs[i].attributes ?? {}) },
        isBreakGlass: v.is_break_glass,
        anonymizedAt: null,
        createdAt: at,
        updatedAt: at,
        version: 1,
      }));
    },
    async findManyByEmail(realmId, emails) {
      if (!isUuid(realmId) || emails.length === 0) return [];
      // One unique-index probe per email (a lateral join): the plan stays per email even while the
      // table grows faster than its statistics during a bulk import, where `email IN (…)` would scan
      // the realm's rows once per batch.
      const list = [...new Set(emails.map((e) => normalizeEmail(e)))];
      const rows = await sql<Selectable<Database["users"]>>`
        SELECT u.* FROM unnest(${list}::text[]) AS e(email)
        CROSS JOIN LATERAL (SELECT * FROM users WHERE realm_id = ${realmId} AND email = e.email) AS u`
        .execute(db);
      return rows.rows.map(userFromRow);
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
    async update(id, changes, options = {}) {
      requireUuid(id, "User");
      const set: Record<string, unknown> = { updated_at: now(deps.clock), version: sql`version + 1` };
      if (changes.email !== undefined) set.email = checkedEmail(changes.email);
      if (changes.displayName !== undefined) set.display_name = changes.displayName;
      if (changes.emailVerified !== undefined) set.email_verified = changes.emailVerified;
      if (changes.status !== undefined) set.status = changes.status;
      if (changes.attributes !== undefined) set.attributes = jsonb(checkedAttributes(changes.attributes));
      const expected = options.expectedVersion;
      const row = await guarded(CONSTRAINTS, () => {
        let query = db.updateTable("users").set(set).where("id", "=", id);
        if (expected !== undefined) query = query.where("version", "=", expected);
        return query.returningAll().executeTakeFirst();
      });
      if (row !== undefined) return userFromRow(row);
      const exists = expected !== undefined &&
        await db.selectFrom("users").select("id").where("id", "=", id).executeTakeFirst() !== undefined;
      if (exists) {
        throw new ConflictError("The user changed since it was read.", { reason: "user_version_stale" });
      }
      throw new NotFoundError("User not found.");
    },
    async mergeAttributes(id, attributes) {
      requireUuid(id, "User");
      const patch = jsonb(checkedAttributes(attributes));
      const row = await db.updateTable("users")
        .set({
          attributes: sql`attributes || ${patch}`,
          updated_at: now(deps.clock),
          version: sql`version + 1`,
        })
        .where("id", "=", id).returningAll().executeTakeFirst();
      if (row === undefined) throw new NotFoundError("User not found.");
      return userFromRow(row);
    },
    async credentialStamp(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("users").select("credential_stamp").where("id", "=", id)
        .executeTakeFirst();
      return row === undefined ? null : row.credential_stamp;
    },
    rotateCredentialStamp(id, expected) {
      return rotateCredentialStamp(db, deps.random, id, expected);
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
        version: sql`version + 1`,
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
    search(realmId, search) {
      return searchUsers(db, realmId, search);
    },
  };
}

/** `text` as a LIKE pattern matching itself. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * One page of a realm's users in (created_at, id) order. A page past the first skips `offset`
 * keys in the `users_realm_order` index (index-only, no row fetched) to find its first key,
 * then seeks there and reads `limit` rows: the rows before the page are never read.
 */
async function searchUsers(db: Executor, realmId: string, search: UserSearch) {
  const { offset, limit } = pageOf(search);
  if (!isUuid(realmId) || (search.memberOf !== undefined && !isUuid(search.memberOf))) {
    return { items: [], total: 0 };
  }
  // A prefix, not an address: NFKC and lowercase like an email, without its domain rules.
  const q = (search.q ?? "").normalize("NFKC").trim().toLowerCase();
  const matching = <O>(query: SelectQueryBuilder<Database, "users", O>) => {
    let filtered = query.where("realm_id", "=", realmId);
    if (q !== "") {
      const prefix = `${likeLiteral(q)}%`;
      filtered = filtered.where((eb) =>
        eb.or([
          eb("email", "like", prefix),
          eb(sql`lower(display_name)`, "like", prefix),
        ])
      );
    }
    if (search.status !== undefined) filtered = filtered.where("status", "=", search.status);
    if (search.memberOf !== undefined) {
      const orgId = search.memberOf;
      filtered = filtered.where((eb) =>
        eb.exists(
          eb.selectFrom("org_memberships as m").select(sql`1`.as("one"))
            .where("m.org_id", "=", orgId).whereRef("m.user_id", "=", "users.id"),
        )
      );
    }
    return filtered;
  };
  let page = matching(db.selectFrom("users").selectAll()).orderBy("created_at").orderBy("id");
  if (offset > 0) {
    const boundary = matching(db.selectFrom("users").select(["created_at", "id"]))
      .orderBy("created_at").orderBy("id").offset(offset).limit(1);
    page = page.where(sql<boolean>`(users.created_at, users.id) >= (${boundary})`);
  }
  const [rows, count] = await Promise.all([
    limit === 0 ? Promise.resolve([]) : page.limit(limit ?? 50).execute(),
    matching(db.selectFrom("users").select((eb) => eb.fn.countAll<number | string | bigint>().as("n")))
      .executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(userFromRow), total: Number(count.n) };
}

/**
 * Gives the user a fresh credential stamp (only if it still equals `expected`, when given);
 * password-credential writes call it in their transaction, so every password change rotates it.
 */
export async function rotateCredentialStamp(
  db: Executor,
  random: RandomSource,
  id: string,
  expected?: string,
): Promise<boolean> {
  if (!isUuid(id)) return false;
  let query = db.updateTable("users").set({ credential_stamp: randomToken(random, 16) }).where("id", "=", id);
  if (expected !== undefined) query = query.where("credential_stamp", "=", expected);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A `users` row as a {@link User}. */
export function userFromRow(row: Selectable<Database["users"]>): User {
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
    version: row.version,
  };
}
