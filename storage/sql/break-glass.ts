/** Break-glass state on SQL: each record is one upsert. */
import { type Clock, nowDate } from "../../core/clock.ts";
import type { BreakGlassState, BreakGlassStore } from "../contract/break-glass.ts";
import type { BreakGlassStateTable, Executor } from "../database.ts";

/** The SQL break-glass store over a kysely executor; time comes from `clock`. */
export function createSqlBreakGlassStore(db: Executor, clock: Clock): BreakGlassStore {
  return {
    async recordDrill(realmId) {
      const now = nowDate(clock);
      const row = await db.insertInto("break_glass_state")
        .values({ realm_id: realmId, last_drill_at: now, last_use_at: null })
        .onConflict((oc) => oc.column("realm_id").doUpdateSet({ last_drill_at: now }))
        .returningAll()
        .executeTakeFirstOrThrow();
      return fromRow(row);
    },

    async recordUse(realmId) {
      const now = nowDate(clock);
      const row = await db.insertInto("break_glass_state")
        .values({ realm_id: realmId, last_drill_at: null, last_use_at: now })
        .onConflict((oc) => oc.column("realm_id").doUpdateSet({ last_use_at: now }))
        .returningAll()
        .executeTakeFirstOrThrow();
      return fromRow(row);
    },

    async get(realmId) {
      const row = await db.selectFrom("break_glass_state").selectAll().where("realm_id", "=", realmId)
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },
  };
}

function fromRow(row: BreakGlassStateTable): BreakGlassState {
  return {
    realmId: row.realm_id,
    lastDrillAt: row.last_drill_at === null ? null : new Date(row.last_drill_at),
    lastUseAt: row.last_use_at === null ? null : new Date(row.last_use_at),
  };
}
