/**
 * The SQL passkey-credential store. The sign counter moves only forward, in one
 * conditional UPDATE (`… WHERE sign_count < $new OR (sign_count = 0 AND $new = 0)`).
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError, ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type {
  PasskeyCredentialRecord,
  PasskeyCredentialStore,
} from "../../core/storage/passkey-credentials.ts";
import type { Executor, PasskeyCredentialsTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

function toRecord(row: Selectable<PasskeyCredentialsTable>): PasskeyCredentialRecord {
  return {
    id: row.id,
    userId: row.user_id,
    credentialId: new Uint8Array(row.credential_id),
    publicKey: new Uint8Array(row.public_key),
    signCount: Number(row.sign_count),
    userVerificationCapable: row.user_verification_capable,
    transports: row.transports ?? [],
    name: row.name,
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

function checkCount(count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new ValidationError("A sign count is a non-negative integer.", { field: "signCount" });
  }
}

/** A {@link PasskeyCredentialStore} over the svc schema. */
export function createSqlPasskeyCredentialStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): PasskeyCredentialStore {
  return {
    async create(input) {
      const signCount = input.signCount ?? 0;
      checkCount(signCount);
      try {
        const row = await db.insertInto("passkey_credentials").values({
          id: randomUuid(deps.random),
          user_id: input.userId,
          credential_id: input.credentialId,
          public_key: input.publicKey,
          sign_count: signCount,
          user_verification_capable: input.userVerificationCapable,
          transports: [...(input.transports ?? [])],
          name: input.name ?? null,
          last_used_at: null,
          created_at: new Date(deps.clock.now()),
        }).returningAll().executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError("This passkey is already registered.");
        throw error;
      }
    },

    async listByUser(userId) {
      if (!isUuid(userId)) return [];
      const rows = await db.selectFrom("passkey_credentials").selectAll().where("user_id", "=", userId)
        .orderBy("created_at").orderBy("id").execute();
      return rows.map(toRecord);
    },

    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("passkey_credentials").selectAll().where("id", "=", id)
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async getByCredentialId(credentialId) {
      const row = await db.selectFrom("passkey_credentials").selectAll()
        .where("credential_id", "=", credentialId).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async updateCounter(id, newCount, lastUsedAt) {
      checkCount(newCount);
      if (!isUuid(id)) return false;
      const count = sql<number>`${newCount}::bigint`;
      const result = await db.updateTable("passkey_credentials")
        .set({ sign_count: count, last_used_at: lastUsedAt ?? new Date(deps.clock.now()) })
        .where("id", "=", id)
        .where((eb) =>
          eb.or([
            eb("sign_count", "<", count),
            eb.and([eb("sign_count", "=", 0), eb(count, "=", sql<number>`0`)]),
          ])
        )
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async rename(userId, id, name) {
      if (!isUuid(userId) || !isUuid(id)) return false;
      const result = await db.updateTable("passkey_credentials").set({ name })
        .where("id", "=", id).where("user_id", "=", userId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(userId, id) {
      if (!isUuid(userId) || !isUuid(id)) return false;
      const result = await db.deleteFrom("passkey_credentials")
        .where("id", "=", id).where("user_id", "=", userId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteAllForUser(userId) {
      if (!isUuid(userId)) return 0;
      const result = await db.deleteFrom("passkey_credentials").where("user_id", "=", userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
