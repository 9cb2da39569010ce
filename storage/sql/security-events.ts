/**
 * The SQL security-event store: inserts only, plus erasure redaction and retention.
 *
 * @module
 */
import { type RawBuilder, type Selectable, sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import type {
  EventDeliveries,
  NewSecurityEvent,
  SecurityEventRecord,
  SecurityEventStore,
} from "../../core/storage/security-events.ts";
import type { Executor, KnownDevicesTable, SecurityEventsTable } from "../database.ts";
import { knownDeviceFromRow } from "./known-devices.ts";
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

/**
 * Whether one of the endpoint `e`'s patterns matches the event kind `kind`, in SQL: `*` in a
 * pattern matches any text (`eventPatternMatches`), LIKE with `%`, every other character literal.
 */
export function endpointPatternMatches(kind: string): RawBuilder<unknown> {
  return sql`EXISTS (SELECT 1 FROM unnest(e.event_patterns) AS p(pattern)
            WHERE ${kind}::text LIKE replace(replace(replace(replace(p.pattern,
              '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'))`;
}

/**
 * The INSERT of an event's webhook deliveries (`RETURNING 1`, one row per delivery): one pending
 * delivery due at `at` per enabled endpoint of the realm (and of the event's organization) whose
 * patterns match the kind; with `condition`, only when it holds. `deliveries.realmId` must be a
 * UUID.
 */
export function deliveriesInsert(
  deliveries: EventDeliveries,
  at: Date,
  condition?: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const orgId = deliveries.orgId !== undefined && deliveries.orgId !== null && isUuid(deliveries.orgId)
    ? deliveries.orgId
    : null;
  // One delivery per endpoint, its id derived from the event's random seed and the endpoint.
  return sql`
        INSERT INTO webhook_deliveries (id, endpoint_id, event_kind, payload, status, attempts,
          next_attempt_at, last_error, last_status_code, created_at, completed_at)
        SELECT md5(${deliveries.idSeed}::text || e.id::text)::uuid, e.id, ${deliveries.eventKind},
          ${deliveries.payload}, 'pending', 0, ${at}, NULL, NULL, ${at}, NULL
        FROM webhook_endpoints e
        WHERE ${
    condition === undefined ? sql`` : sql`${condition} AND `
  }e.realm_id = ${deliveries.realmId}::uuid AND e.enabled
          AND (e.org_id IS NULL OR e.org_id = ${orgId}::uuid)
          AND ${endpointPatternMatches(deliveries.eventKind)}
        RETURNING 1`;
}

/** A {@link SecurityEventStore} over the svc schema. */
export function createSqlSecurityEventStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): SecurityEventStore {
  const ledgerValues = (event: NewSecurityEvent) => ({
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
  });
  /** A sign-in also updates the user's login history, in the same statement. */
  const updatesHistory = (values: ReturnType<typeof ledgerValues>) =>
    values.kind === LOGIN_SUCCEEDED_KIND && values.user_id !== null && isUuid(values.user_id) &&
    values.realm_id !== null;
  /** The statement parts of `record`: the ledger entry (and login history), the deliveries. */
  const eventCtes = (ledger: NewSecurityEvent | null, deliveries: EventDeliveries | null) => {
    const ctes: RawBuilder<unknown>[] = [];
    if (ledger !== null) {
      const values = ledgerValues(ledger);
      ctes.push(sql`ev AS (
        INSERT INTO security_events
          (id, realm_id, user_id, org_id, kind, occurred_at, data_json, ip_address, device_description)
        VALUES (${values.id}, ${values.realm_id}, ${values.user_id}, ${values.org_id}, ${values.kind},
          ${values.occurred_at}, ${values.data_json}, ${values.ip_address}, ${values.device_description})
        RETURNING *)`);
      if (updatesHistory(values)) ctes.push(sql`history AS (${recordLoginFromEvent})`);
    }
    const queue = deliveries !== null && isUuid(deliveries.realmId);
    if (queue) ctes.push(sql`dl AS (${deliveriesInsert(deliveries, new Date(deps.clock.now()))})`);
    return { ctes, queue };
  };
  return {
    async append(event) {
      const values = ledgerValues(event);
      if (updatesHistory(values)) {
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

    async record(ledger, deliveries) {
      const { ctes, queue } = eventCtes(ledger, deliveries);
      if (ctes.length === 0) return 0;
      const { rows } = await sql<{ queued: number | string }>`WITH ${sql.join(ctes, sql`, `)}
        SELECT ${queue ? sql`(SELECT count(*) FROM dl)` : sql`0`} AS queued`.execute(db);
      return Number(rows[0].queued);
    },

    async recordSignIn(ledger, deliveries, writes) {
      const { ctes, queue } = eventCtes(ledger, deliveries);
      if (writes.clearCounter !== null) {
        ctes.push(sql`clr AS (DELETE FROM abuse_counters WHERE key = ${writes.clearCounter} RETURNING 1)`);
      }
      const device = writes.device;
      if (device !== null) {
        const at = new Date(deps.clock.now());
        // As KnownDeviceStore.recordSeen: last seen never moves backwards.
        ctes.push(sql`dev AS (
          INSERT INTO known_devices (user_id, fingerprint_hash, description, first_seen_at, last_seen_at)
          VALUES (${device.userId}, ${device.fingerprintHash}, ${device.description}, ${at}, ${at})
          ON CONFLICT (user_id, fingerprint_hash) DO UPDATE SET
            last_seen_at = greatest(known_devices.last_seen_at, excluded.last_seen_at),
            description = coalesce(excluded.description, known_devices.description)
          RETURNING *, (xmax = 0) AS inserted)`);
      }
      if (ctes.length === 0) return { queued: 0, device: null };
      const { rows } = await sql<Record<string, unknown>>`WITH ${sql.join(ctes, sql`, `)}
        SELECT ${queue ? sql`(SELECT count(*) FROM dl)` : sql`0`} AS queued${
        device !== null ? sql`, dev.*` : sql``
      }${writes.clearCounter !== null ? sql`, (SELECT count(*) FROM clr) AS cleared` : sql``}
        ${device !== null ? sql`FROM dev` : sql``}`.execute(db);
      const row = rows[0];
      return {
        queued: Number(row.queued),
        device: device === null ? null : {
          record: knownDeviceFromRow(row as unknown as Selectable<KnownDevicesTable>),
          isNew: row.inserted === true,
        },
      };
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
