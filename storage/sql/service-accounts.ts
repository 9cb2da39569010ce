/**
 * The SQL service-account store. Secret rotation is one UPDATE whose SET clause reads the
 * row's old values (`previous_secret_hash = secret_hash`), so it is atomic.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { ServiceAccountRecord, ServiceAccountStore } from "../../core/storage/service-accounts.ts";
import type { Executor, ServiceAccountsTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";
import { deliveriesInsert } from "./security-events.ts";

function toRecord(row: Selectable<ServiceAccountsTable>): ServiceAccountRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    key: row.key,
    displayName: row.display_name,
    secretHash: row.secret_hash,
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    disabled: row.disabled,
    createdAt: row.created_at,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** A {@link ServiceAccountStore} over the svc schema. */
export function createSqlServiceAccountStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): ServiceAccountStore {
  return {
    async create(input) {
      try {
        const row = await db.insertInto("service_accounts").values({
          id: randomUuid(deps.random),
          realm_id: input.realmId,
          key: input.key,
          display_name: input.displayName,
          secret_hash: input.secretHash,
          previous_secret_hash: null,
          previous_secret_expires_at: null,
          disabled: false,
          created_at: new Date(deps.clock.now()),
        }).returningAll().executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ConflictError("A service account with this key exists.", {
            reason: "service_account_key_taken",
          });
        }
        throw error;
      }
    },

    async get(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("service_accounts").selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async getByKey(realmId, key) {
      if (!isUuid(realmId)) return null;
      const row = await db.selectFrom("service_accounts").selectAll()
        .where("realm_id", "=", realmId).where("key", "=", key).executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async list(realmId) {
      if (!isUuid(realmId)) return [];
      const rows = await db.selectFrom("service_accounts").selectAll().where("realm_id", "=", realmId)
        .orderBy("key").execute();
      return rows.map(toRecord);
    },

    async listPage(realmId, page) {
      if (!isUuid(realmId)) return { items: [], total: 0 };
      let base = db.selectFrom("service_accounts").where("realm_id", "=", realmId);
      const search = page.search?.trim();
      if (search) {
        // A LIKE pattern matching the text anywhere, with `%`, `_` and `\\` matching themselves.
        const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        base = base.where((eb) => eb.or([eb("key", "ilike", pattern), eb("display_name", "ilike", pattern)]));
      }
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy("key").orderBy("id").offset(page.offset).limit(page.limit).execute(),
        base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toRecord), total: Number(count.n) };
    },

    async rotateSecret(id, newSecretHash, overlapMs) {
      if (!isUuid(id)) return null;
      const row = await db.updateTable("service_accounts")
        .set((eb) => ({
          previous_secret_hash: eb.ref("secret_hash"),
          previous_secret_expires_at: new Date(deps.clock.now() + overlapMs),
          secret_hash: sql<string>`${newSecretHash}::text`,
        }))
        .where("id", "=", id).returningAll().executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async setDisabled(id, disabled) {
      if (!isUuid(id)) return false;
      const result = await db.updateTable("service_accounts").set({ disabled }).where("id", "=", id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(id) {
      if (!isUuid(id)) return false;
      const result = await db.deleteFrom("service_accounts").where("id", "=", id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async recordGrant(check, deliveries) {
      if (!isUuid(check.accountId) || !isUuid(check.realmId) || !isUuid(deliveries.realmId)) return null;
      const at = new Date(check.at);
      // The authentication's condition (acceptedSecretHashes), on the stored row, in the statement
      // that records the event: a copy read earlier cannot be stale when the grant is recorded.
      const { rows } = await sql<{ ok: boolean; queued: number | string }>`
        WITH ok AS (
          SELECT 1 FROM service_accounts a
          WHERE a.id = ${check.accountId}::uuid AND a.realm_id = ${check.realmId}::uuid
            AND a.key = ${check.key}::text AND NOT a.disabled
            AND (a.secret_hash = ${check.secretHash}::text OR (a.previous_secret_hash = ${check.secretHash}::text
              AND a.previous_secret_expires_at > ${at}::timestamptz))
        ), dl AS (${deliveriesInsert(deliveries, new Date(deps.clock.now()), sql`EXISTS (SELECT 1 FROM ok)`)})
        SELECT EXISTS (SELECT 1 FROM ok) AS ok, (SELECT count(*) FROM dl) AS queued`.execute(db);
      return rows[0].ok ? Number(rows[0].queued) : null;
    },
  };
}
