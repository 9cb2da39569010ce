/**
 * The SQL passkey-ceremony store. Consumption is a single `DELETE … RETURNING`: whatever
 * the outcome, the ceremony is gone after the first attempt; an expired one is deleted
 * and reported as absent.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { sha256Hex } from "../../core/digest.ts";
import { type RandomSource, randomToken } from "../../core/random.ts";
import {
  PASSKEY_CEREMONY_TTL_MS,
  type PasskeyCeremonyRecord,
  type PasskeyCeremonyStore,
} from "../../core/storage/passkey-ceremonies.ts";
import type { Executor, PasskeyCeremoniesTable } from "../database.ts";

function toRecord(row: Selectable<PasskeyCeremoniesTable>): PasskeyCeremonyRecord {
  const data = typeof row.data === "string" ? JSON.parse(row.data) : row.data;
  return {
    id: row.id,
    kind: row.kind,
    challengeHash: row.challenge_hash,
    realmId: row.realm_id,
    userId: row.user_id,
    data: (data ?? {}) as Record<string, unknown>,
    expiresAt: row.expires_at,
  };
}

/** A {@link PasskeyCeremonyStore} over the svc schema. */
export function createSqlPasskeyCeremonyStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): PasskeyCeremonyStore {
  return {
    async create(input) {
      const row = await db.insertInto("passkey_ceremonies").values({
        id: randomToken(deps.random, 24),
        kind: input.kind,
        challenge_hash: sha256Hex(input.challenge),
        realm_id: input.realmId ?? null,
        user_id: input.userId ?? null,
        data: sql`${JSON.stringify(input.data ?? {})}::jsonb`,
        expires_at: new Date(deps.clock.now() + (input.ttlMs ?? PASSKEY_CEREMONY_TTL_MS)),
      }).returningAll().executeTakeFirstOrThrow();
      return toRecord(row);
    },

    async consume(id) {
      const row = await db.deleteFrom("passkey_ceremonies").where("id", "=", id).returningAll()
        .executeTakeFirst();
      if (!row || row.expires_at.getTime() <= deps.clock.now()) return null;
      return toRecord(row);
    },

    async pruneExpired() {
      const result = await db.deleteFrom("passkey_ceremonies")
        .where("expires_at", "<=", new Date(deps.clock.now())).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
