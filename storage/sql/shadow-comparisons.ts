/** Shadow-mode comparisons on SQL. */
import { sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { ShadowComparisonStore } from "../../core/storage/shadow-comparisons.ts";
import type { Executor } from "../database.ts";

/** The SQL shadow comparison store. */
export function createSqlShadowComparisonStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): ShadowComparisonStore {
  return {
    async record(input) {
      await db.insertInto("authz_shadow_comparisons").values({
        id: randomUuid(deps.random),
        realm_id: input.realmId,
        user_id: input.userId,
        org_id: input.orgId,
        permission: input.permission,
        legacy_allowed: input.legacyAllowed,
        svc_decision: input.svcDecision,
        agreed: input.agreed,
        recorded_at: new Date(deps.clock.now()),
      }).execute();
    },

    async tally(realmId, filter = {}) {
      let query = db.selectFrom("authz_shadow_comparisons")
        .select([
          sql<string>`count(*) FILTER (WHERE agreed)::text`.as("agreements"),
          sql<string>`count(*) FILTER (WHERE NOT agreed)::text`.as("divergences"),
        ])
        .where("realm_id", "=", realmId);
      if (filter.from) query = query.where("recorded_at", ">=", filter.from);
      if (filter.to) query = query.where("recorded_at", "<", filter.to);
      if (filter.permission !== undefined) query = query.where("permission", "=", filter.permission);
      const row = await query.executeTakeFirstOrThrow();
      return { agreements: Number(row.agreements), divergences: Number(row.divergences) };
    },
  };
}
