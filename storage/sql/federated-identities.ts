/**
 * The SQL federated-identity store; (provider, external subject) is unique.
 *
 * @module
 */
import type { Selectable } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ConflictError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type {
  FederatedIdentityRecord,
  FederatedIdentityStore,
} from "../../core/storage/federated-identities.ts";
import type { Executor, FederatedIdentitiesTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";

function toRecord(row: Selectable<FederatedIdentitiesTable>): FederatedIdentityRecord {
  return {
    id: row.id,
    userId: row.user_id,
    providerId: row.provider_id,
    externalSubject: row.external_subject,
    createdAt: row.created_at,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** A {@link FederatedIdentityStore} over the svc schema. */
export function createSqlFederatedIdentityStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): FederatedIdentityStore {
  return {
    async link(userId, providerId, externalSubject) {
      try {
        const row = await db.insertInto("federated_identities").values({
          id: randomUuid(deps.random),
          user_id: userId,
          provider_id: providerId,
          external_subject: externalSubject,
          created_at: new Date(deps.clock.now()),
        }).returningAll().executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError("This external identity is already linked.");
        throw error;
      }
    },

    async find(providerId, externalSubject) {
      const row = await db.selectFrom("federated_identities").selectAll()
        .where("provider_id", "=", providerId).where("external_subject", "=", externalSubject)
        .executeTakeFirst();
      return row ? toRecord(row) : null;
    },

    async listByUser(userId) {
      if (!isUuid(userId)) return [];
      const rows = await db.selectFrom("federated_identities").selectAll().where("user_id", "=", userId)
        .orderBy("created_at").orderBy("id").execute();
      return rows.map(toRecord);
    },

    async unlink(userId, id) {
      if (!isUuid(userId) || !isUuid(id)) return false;
      const result = await db.deleteFrom("federated_identities")
        .where("id", "=", id).where("user_id", "=", userId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteAllForUser(userId) {
      if (!isUuid(userId)) return 0;
      const result = await db.deleteFrom("federated_identities").where("user_id", "=", userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
