/**
 * The SQL known-device store: one upsert per sighting; `xmax = 0` on the returned row
 * tells an insert (a new device) from an update.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ValidationError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import type { KnownDeviceRecord, KnownDeviceStore } from "../../core/storage/known-devices.ts";
import type { Executor, KnownDevicesTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A `known_devices` row as a record. */
export function knownDeviceFromRow(row: Selectable<KnownDevicesTable>): KnownDeviceRecord {
  return {
    userId: row.user_id,
    fingerprintHash: row.fingerprint_hash,
    description: row.description,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
  };
}

/** A {@link KnownDeviceStore} over the svc schema. */
export function createSqlKnownDeviceStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): KnownDeviceStore {
  return {
    async recordSeen(userId, fingerprintHash, description) {
      if (!SHA256_HEX.test(fingerprintHash)) {
        throw new ValidationError("fingerprintHash must be the SHA-256 hex of the fingerprint.", {
          field: "fingerprintHash",
        });
      }
      const at = new Date(deps.clock.now());
      const row = await db.insertInto("known_devices").values({
        user_id: userId,
        fingerprint_hash: fingerprintHash,
        description: description ?? null,
        first_seen_at: at,
        last_seen_at: at,
      }).onConflict((oc) =>
        oc.columns(["user_id", "fingerprint_hash"]).doUpdateSet((eb) => ({
          // Never move last seen backwards (a slower concurrent sighting).
          last_seen_at: sql<Date>`greatest(${eb.ref("known_devices.last_seen_at")}, ${
            eb.ref("excluded.last_seen_at")
          })`,
          description: sql<string | null>`coalesce(${eb.ref("excluded.description")}, ${
            eb.ref("known_devices.description")
          })`,
        }))
      ).returningAll().returning(sql<boolean>`(xmax = 0)`.as("inserted")).executeTakeFirstOrThrow();
      return { device: knownDeviceFromRow(row), isNew: row.inserted };
    },

    async get(userId, fingerprintHash) {
      if (!isUuid(userId)) return null;
      const row = await db.selectFrom("known_devices").selectAll()
        .where("user_id", "=", userId).where("fingerprint_hash", "=", fingerprintHash).executeTakeFirst();
      return row ? knownDeviceFromRow(row) : null;
    },

    async listByUser(userId) {
      if (!isUuid(userId)) return [];
      const rows = await db.selectFrom("known_devices").selectAll().where("user_id", "=", userId)
        .orderBy("last_seen_at", "desc").orderBy("fingerprint_hash").execute();
      return rows.map(knownDeviceFromRow);
    },

    async delete(userId, fingerprintHash) {
      if (!isUuid(userId)) return false;
      const result = await db.deleteFrom("known_devices")
        .where("user_id", "=", userId).where("fingerprint_hash", "=", fingerprintHash).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteAllForUser(userId) {
      if (!isUuid(userId)) return 0;
      const result = await db.deleteFrom("known_devices").where("user_id", "=", userId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
