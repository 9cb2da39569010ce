/**
 * The SQL password-credential store. Writes of one user's credentials are serialized by
 * a per-user advisory transaction lock, so `replace` and `rehash` keep "exactly one
 * working password" even when they race.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { type RandomSource, randomToken, randomUuid } from "../../core/random.ts";
import type {
  PasswordCredentialRecord,
  PasswordCredentialStore,
  PasswordHash,
} from "../../core/storage/password-credentials.ts";
import type { Executor, PasswordCredentialsTable } from "../database.ts";
import { atomically } from "./transaction.ts";
import { rotateCredentialStamp } from "./users.ts";
import { isUuid } from "../../core/ids.ts";
import { LockClass, lockForTransaction } from "./advisory-locks.ts";

/** A `password_credentials` row as a record. */
export function passwordCredentialFromRow(
  row: Selectable<PasswordCredentialsTable>,
): PasswordCredentialRecord {
  return {
    id: row.id,
    userId: row.user_id,
    algorithm: row.algorithm,
    hash: row.hash,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A {@link PasswordCredentialStore} over the svc schema. */
export function createSqlPasswordCredentialStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): PasswordCredentialStore {
  const lockUser = (trx: Executor, userId: string) =>
    lockForTransaction(trx, LockClass.passwordCredentials, userId);

  /** Deletes every other row of the user and upserts `value`: afterwards it is the only one. */
  const setOnly = async (trx: Executor, userId: string, value: PasswordHash) => {
    const at = new Date(deps.clock.now());
    await trx.deleteFrom("password_credentials")
      .where("user_id", "=", userId).where("algorithm", "<>", value.algorithm).execute();
    const row = await trx.insertInto("password_credentials").values({
      id: randomUuid(deps.random),
      user_id: userId,
      algorithm: value.algorithm,
      hash: value.hash,
      created_at: at,
      updated_at: at,
    }).onConflict((oc) =>
      oc.columns(["user_id", "algorithm"]).doUpdateSet((eb) => ({
        hash: eb.ref("excluded.hash"),
        updated_at: eb.ref("excluded.updated_at"),
      }))
    ).returningAll().executeTakeFirstOrThrow();
    return passwordCredentialFromRow(row);
  };

  return {
    async get(userId) {
      if (!isUuid(userId)) return null;
      const row = await db.selectFrom("password_credentials").selectAll().where("user_id", "=", userId)
        .orderBy("updated_at", "desc").orderBy("id").limit(1).executeTakeFirst();
      return row ? passwordCredentialFromRow(row) : null;
    },

    async list(userId) {
      if (!isUuid(userId)) return [];
      const rows = await db.selectFrom("password_credentials").selectAll().where("user_id", "=", userId)
        .orderBy("updated_at", "desc").orderBy("id").execute();
      return rows.map(passwordCredentialFromRow);
    },

    async listForUsers(userIds) {
      const ids = userIds.filter((id) => isUuid(id));
      if (ids.length === 0) return [];
      const rows = await db.selectFrom("password_credentials").selectAll().where("user_id", "in", ids)
        .orderBy("updated_at", "desc").orderBy("id").execute();
      return rows.map(passwordCredentialFromRow);
    },

    async insertMany(rows, options = {}) {
      if (rows.length === 0) return;
      const at = new Date(deps.clock.now());
      await atomically(db, async (trx) => {
        await trx.insertInto("password_credentials").values(rows.map(({ userId, value }) => ({
          id: randomUuid(deps.random),
          user_id: userId,
          algorithm: value.algorithm,
          hash: value.hash,
          created_at: at,
          updated_at: at,
        }))).execute();
        if (options.freshUsers) return;
        // A password write: each user's credential stamp rotates, in one statement.
        const stamps = rows.map(({ userId }) => sql`(${userId}::uuid, ${randomToken(deps.random, 16)})`);
        await sql`UPDATE users SET credential_stamp = v.stamp FROM (VALUES ${
          sql.join(stamps)
        }) AS v(id, stamp)
          WHERE users.id = v.id`.execute(trx);
      });
    },

    async upsert(userId, value) {
      return await atomically(db, async (trx) => {
        await lockUser(trx, userId);
        const previous = await trx.selectFrom("password_credentials").select("hash")
          .where("user_id", "=", userId).where("algorithm", "=", value.algorithm).executeTakeFirst();
        const at = new Date(deps.clock.now());
        const row = await trx.insertInto("password_credentials").values({
          id: randomUuid(deps.random),
          user_id: userId,
          algorithm: value.algorithm,
          hash: value.hash,
          created_at: at,
          updated_at: at,
        }).onConflict((oc) =>
          oc.columns(["user_id", "algorithm"]).doUpdateSet((eb) => ({
            hash: eb.ref("excluded.hash"),
            updated_at: eb.ref("excluded.updated_at"),
          }))
        ).returningAll().returning(sql<boolean>`(xmax = 0)`.as("inserted")).executeTakeFirstOrThrow();
        if (row.inserted || previous?.hash !== value.hash) {
          await rotateCredentialStamp(trx, deps.random, userId);
        }
        return { credential: passwordCredentialFromRow(row), created: row.inserted };
      });
    },

    async replace(userId, value) {
      return await atomically(db, async (trx) => {
        await lockUser(trx, userId);
        const credential = await setOnly(trx, userId, value);
        // A password change: every reset link minted before it dies.
        await rotateCredentialStamp(trx, deps.random, userId);
        return credential;
      });
    },

    async rehash(userId, expected, next) {
      if (!isUuid(userId)) return false;
      return await atomically(db, async (trx) => {
        await lockUser(trx, userId);
        const current = await trx.deleteFrom("password_credentials")
          .where("user_id", "=", userId)
          .where("algorithm", "=", expected.algorithm)
          .where("hash", "=", expected.hash)
          .returning("id").executeTakeFirst();
        if (!current) return false;
        await setOnly(trx, userId, next);
        return true;
      });
    },

    async deleteAllForUser(userId) {
      if (!isUuid(userId)) return 0;
      return await atomically(db, async (trx) => {
        await lockUser(trx, userId);
        const result = await trx.deleteFrom("password_credentials").where("user_id", "=", userId)
          .executeTakeFirst();
        if (result.numDeletedRows > 0n) await rotateCredentialStamp(trx, deps.random, userId);
        return Number(result.numDeletedRows);
      });
    },
  };
}
