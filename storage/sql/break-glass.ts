/**
 * Break-glass state on SQL: each record is one upsert, the rotation reminder one conditional
 * update. The account is the realm's user with `is_break_glass` (a partial unique index keeps
 * it to one per realm).
 */
import { sql, type Updateable } from "kysely";
import { type Clock, nowDate } from "../../core/clock.ts";
import type { BreakGlassAccount, BreakGlassState, BreakGlassStore } from "../../core/storage/break-glass.ts";
import type { BreakGlassStateTable, Executor } from "../database.ts";

/** The SQL break-glass store over a kysely executor; time comes from `clock`. */
export function createSqlBreakGlassStore(db: Executor, clock: Clock): BreakGlassStore {
  const upsert = async (
    realmId: string,
    changes: Omit<Updateable<BreakGlassStateTable>, "realm_id">,
  ): Promise<BreakGlassState> => {
    const row = await db.insertInto("break_glass_state")
      .values({ realm_id: realmId, last_drill_at: null, last_use_at: null, ...changes })
      .onConflict((oc) => oc.column("realm_id").doUpdateSet(changes))
      .returningAll()
      .executeTakeFirstOrThrow();
    return fromRow(row);
  };
  return {
    recordDrill(realmId) {
      return upsert(realmId, { last_drill_at: nowDate(clock) });
    },

    recordUse(realmId) {
      return upsert(realmId, { last_use_at: nowDate(clock) });
    },

    recordLogin(realmId) {
      const now = nowDate(clock);
      return upsert(realmId, { last_use_at: now, rotation_required: true, rotation_reminded_at: now });
    },

    recordRotation(realmId) {
      return upsert(realmId, {
        last_rotated_at: nowDate(clock),
        rotation_required: false,
        rotation_reminded_at: null,
      });
    },

    async claimRotationReminder(realmId, intervalMs) {
      const now = nowDate(clock);
      const due = new Date(now.getTime() - intervalMs);
      const row = await db.updateTable("break_glass_state")
        .set({ rotation_reminded_at: now })
        .where("realm_id", "=", realmId)
        .where("rotation_required", "=", true)
        .where((eb) => eb.or([eb("rotation_reminded_at", "is", null), eb("rotation_reminded_at", "<=", due)]))
        .returningAll()
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async get(realmId) {
      const row = await db.selectFrom("break_glass_state").selectAll().where("realm_id", "=", realmId)
        .executeTakeFirst();
      return row ? fromRow(row) : null;
    },

    async account(realmId) {
      const row = await db.selectFrom("users").select(["id", "realm_id", "email", "created_at"])
        .where("realm_id", "=", realmId)
        .where("is_break_glass", "=", true)
        .executeTakeFirst();
      return row ? accountOf(row) : null;
    },

    async listAccounts() {
      const rows = await db.selectFrom("users")
        .leftJoin("break_glass_state", "break_glass_state.realm_id", "users.realm_id")
        .select([
          "users.id",
          "users.realm_id",
          "users.email",
          "users.created_at",
          sql<boolean>`break_glass_state.realm_id IS NOT NULL`.as("has_state"),
          "break_glass_state.last_drill_at",
          "break_glass_state.last_use_at",
          "break_glass_state.rotation_required",
          "break_glass_state.last_rotated_at",
          "break_glass_state.rotation_reminded_at",
        ])
        .where("users.is_break_glass", "=", true)
        .orderBy("users.realm_id")
        .execute();
      return rows.map((row) => ({
        account: accountOf(row),
        state: row.has_state
          ? fromRow({
            realm_id: row.realm_id,
            last_drill_at: row.last_drill_at,
            last_use_at: row.last_use_at,
            rotation_required: row.rotation_required ?? false,
            last_rotated_at: row.last_rotated_at,
            rotation_reminded_at: row.rotation_reminded_at,
          })
          : null,
      }));
    },
  };
}

type Time = Date | string | null;

function time(value: Time | undefined): Date | null {
  return value === null || value === undefined ? null : new Date(value);
}

function accountOf(
  row: { id: string; realm_id: string; email: string; created_at: Date | string },
): BreakGlassAccount {
  return { realmId: row.realm_id, userId: row.id, email: row.email, createdAt: new Date(row.created_at) };
}

function fromRow(row: {
  realm_id: string;
  last_drill_at: Time;
  last_use_at: Time;
  rotation_required: boolean;
  last_rotated_at: Time;
  rotation_reminded_at: Time;
}): BreakGlassState {
  return {
    realmId: row.realm_id,
    lastDrillAt: time(row.last_drill_at),
    lastUseAt: time(row.last_use_at),
    rotationRequired: row.rotation_required,
    lastRotatedAt: time(row.last_rotated_at),
    rotationRemindedAt: time(row.rotation_reminded_at),
  };
}
