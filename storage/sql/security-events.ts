/**
 * The SQL security-event store: inserts only, plus erasure redaction and retention.
 *
 * @module
 */
import { type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type { SecurityEventRecord, SecurityEventStore } from "../../core/storage/security-events.ts";
import type { Executor, SecurityEventsTable } from "../database.ts";
import { isUuid } from "../../core/ids.ts";
import { LOGIN_SUCCEEDED_KIND, recordLoginFromEvent } from "./login-history.ts";

const MAX_LIMIT = 1000;

function toRecord(row: Selectable<SecurityEventsTable>): SecurityEventRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    userId: row.user_id,
    orgId: row.org_id ?? null,
    kind: row.kind,
    occurredAt: row.occurred_at,
    data: row.data_json ?? null,
    ipAddress: row.ip_address,
    deviceDescription: row.device_description,
  };
}

/** A {@link SecurityEventStore} over the svc schema. */
export function createSqlSecurityEventStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): SecurityEventStore {
  return {
    async append(event) {
      const values = {
        id: randomUuid(deps.random),
        realm_id: event.realmId ?? null,
        user_id: event.userId ?? null,
        org_id: event.orgId ?? null,
        kind: event.kind,
        occurred_at: event.occurredAt ?? new Date(deps.clock.now()),
        data_json: event.data === undefined || event.data === null
          ? null
          : sql`${JSON.stringify(event.data)}::jsonb`,
        ip_address: event.ipAddress ?? null,
        device_description: event.deviceDescription ?? null,
      };
      if (
        event.kind === LOGIN_SUCCEEDED_KIND && values.user_id !== null && isUuid(values.user_id) &&
        values.realm_id !== null
      ) {
        // A sign-in also updates the user's login history, in this same statement.
        const { rows } = await sql<Selectable<SecurityEventsTable>>`WITH ev AS (
          INSERT INTO security_events
            (id, realm_id, user_id, org_id, kind, occurred_at, data_json, ip_address, device_description)
          VALUES (${values.id}, ${values.realm_id}, ${values.user_id}, ${values.org_id}, ${values.kind},
            ${values.occurred_at}, ${values.data_json}, ${values.ip_address}, ${values.device_description})
          RETURNING *
        ), history AS (${recordLoginFromEvent})
        SELECT * FROM ev`.execute(db);
        return toRecord(rows[0]);
      }
      const row = await db.insertInto("security_events").values(values).returningAll()
        .executeTakeFirstOrThrow();
      return toRecord(row);
    },

    async listByUser(userId, options) {
      if (!isUuid(userId)) return [];
      const limit = Math.max(1, Math.min(MAX_LIMIT, Math.trunc(options?.limit ?? 50)));
      let query = db.selectFrom("security_events").selectAll().where("user_id", "=", userId);
      if (options?.before !== undefined) query = query.where("occurred_at", "<", options.before);
      const context = options?.orgContext;
      if (context !== undefined) {
        query = query.where((eb) =>
          context.withoutOrg
            ? eb.or([eb("org_id", "=", context.orgId), eb("org_id", "is", null)])
            : eb("org_id", "=", context.orgId)
        );
      }
      const rows = await query.orderBy("occurred_at", "desc").orderBy("id", "desc").limit(limit).execute();
      return rows.map(toRecord);
    },

    async redactForUser(userId) {
      if (!isUuid(userId)) return 0;
      await db.updateTable("login_history").set({ last_ip: null }).where("user_id", "=", userId)
        .where("last_ip", "is not", null).execute();
      const result = await db.updateTable("security_events")
        .set({ data_json: null, ip_address: null, device_description: null })
        .where("user_id", "=", userId)
        .where((eb) =>
          eb.or([
            eb("data_json", "is not", null),
            eb("ip_address", "is not", null),
            eb("device_description", "is not", null),
          ])
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async deleteOlderThan(cutoff, options) {
      let query = db.deleteFrom("security_events").where("occurred_at", "<", cutoff);
      // The login history goes with the ledger: a user whose latest sign-in is past retention.
      let history = db.deleteFrom("login_history").where("last_at", "<", cutoff);
      if (options?.realmId !== undefined) {
        if (!isUuid(options.realmId)) return 0;
        query = query.where("realm_id", "=", options.realmId);
        history = history.where("realm_id", "=", options.realmId);
      }
      await history.execute();
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
