/**
 * The SQL signing-key store. Rotation is one transaction; the partial unique index
 * `signing_keys_one_primary` guarantees at most one primary per realm, so a concurrent
 * rotation loses with a `ConflictError` instead of leaving two primaries.
 *
 * @module
 */
import type { Selectable } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type { SigningKeyRecord, SigningKeyStore } from "../../core/storage/signing-keys.ts";
import type { Executor, SigningKeysTable } from "../database.ts";
import { atomically } from "./transaction.ts";
import { isUuid } from "../../core/ids.ts";

function toRecord(row: Selectable<SigningKeysTable>): SigningKeyRecord {
  return {
    realmId: row.realm_id,
    kid: row.kid,
    isPrimary: row.is_primary,
    algorithm: row.algorithm,
    privateKey: new Uint8Array(row.private_key),
    createdAt: row.created_at,
    retiredAt: row.retired_at,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** A {@link SigningKeyStore} over the svc schema. */
export function createSqlSigningKeyStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): SigningKeyStore {
  const now = () => new Date(deps.clock.now());
  return {
    async insert(realmId, key) {
      try {
        const row = await db.insertInto("signing_keys").values({
          realm_id: realmId,
          kid: key.kid,
          is_primary: key.isPrimary ?? false,
          algorithm: key.algorithm ?? "RS256",
          private_key: key.privateKey,
          created_at: now(),
          retired_at: null,
        }).returningAll().executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ConflictError("The realm already has this key id or a primary key.", { kid: key.kid });
        }
        throw error;
      }
    },

    async getPrimary(realmId) {
      if (!isUuid(realmId)) return null;
      const row = await db.selectFrom("signing_keys").selectAll()
        .where("realm_id", "=", realmId).where("is_primary", "=", true).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async get(realmId, kid) {
      if (!isUuid(realmId)) return null;
      const row = await db.selectFrom("signing_keys").selectAll()
        .where("realm_id", "=", realmId).where("kid", "=", kid).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async rotate(realmId, newKey) {
      const at = now();
      try {
        return await atomically(db, async (trx) => {
          const retired = await trx.updateTable("signing_keys")
            .set({ is_primary: false, retired_at: at })
            .where("realm_id", "=", realmId).where("is_primary", "=", true)
            .returningAll().executeTakeFirst();
          const primary = await trx.insertInto("signing_keys").values({
            realm_id: realmId,
            kid: newKey.kid,
            is_primary: true,
            algorithm: newKey.algorithm ?? "RS256",
            private_key: newKey.privateKey,
            created_at: at,
            retired_at: null,
          }).returningAll().executeTakeFirstOrThrow();
          return { primary: toRecord(primary), retired: retired ? toRecord(retired) : null };
        });
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ConflictError("The key id is taken or the realm was rotated concurrently.", {
            kid: newKey.kid,
          });
        }
        throw error;
      }
    },

    async listPublished(realmId, overlapMs) {
      if (!isUuid(realmId)) return [];
      const cutoff = new Date(deps.clock.now() - overlapMs);
      const rows = await db.selectFrom("signing_keys").selectAll()
        .where("realm_id", "=", realmId)
        .where((eb) => eb.or([eb("retired_at", "is", null), eb("retired_at", ">", cutoff)]))
        .orderBy("is_primary", "desc").orderBy("created_at", "desc").orderBy("kid")
        .execute();
      return rows.map(toRecord);
    },

    async list(realmId) {
      if (!isUuid(realmId)) return [];
      const rows = await db.selectFrom("signing_keys").selectAll().where("realm_id", "=", realmId)
        .orderBy("is_primary", "desc").orderBy("created_at", "desc").orderBy("kid").execute();
      return rows.map(toRecord);
    },

    async pruneRetired(realmId, overlapMs) {
      if (!isUuid(realmId)) return 0;
      const cutoff = new Date(deps.clock.now() - overlapMs);
      const result = await db.deleteFrom("signing_keys")
        .where("realm_id", "=", realmId).where("is_primary", "=", false)
        .where("retired_at", "<=", cutoff)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
