/**
 * The SQL webhook store. Workers claim due deliveries with one statement
 * (`UPDATE … FROM (SELECT … FOR UPDATE OF d SKIP LOCKED)`) that also starts a lease, so
 * concurrent workers never claim the same delivery. Outcomes are recorded in one
 * transaction that locks the endpoint row first, then updates the delivery only while it
 * is still in flight, then the endpoint's failure counter.
 *
 * @module
 */
import { type Selectable, sql, type Updateable } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { ValidationError } from "../../core/errors.ts";
import { type RandomSource, randomUuid } from "../../core/random.ts";
import {
  type ClaimedWebhookDelivery,
  eventPatternMatches,
  WEBHOOK_DISABLE_AFTER_FAILURES,
  WEBHOOK_RETRY_DELAYS_MS,
  type WebhookDeliveryRecord,
  type WebhookEndpointRecord,
  type WebhookStore,
} from "../../core/storage/webhooks.ts";
import type { Executor, WebhookDeliveriesTable, WebhookEndpointsTable } from "../database.ts";
import { atomically } from "./transaction.ts";
import { isUuid } from "../../core/ids.ts";

function toEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpointRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    orgId: row.org_id,
    url: row.url,
    description: row.description,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    eventPatterns: row.event_patterns ?? [],
    enabled: row.enabled,
    consecutiveFailures: Number(row.consecutive_failures),
    disabledAt: row.disabled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toDelivery(row: Selectable<WebhookDeliveriesTable>): WebhookDeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventKind: row.event_kind,
    payload: row.payload,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    lastStatusCode: row.last_status_code,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

function checkPatterns(patterns: readonly string[]): string[] {
  for (const pattern of patterns) {
    if (typeof pattern !== "string" || pattern.length === 0) {
      throw new ValidationError("Event patterns are non-empty strings.", { field: "eventPatterns" });
    }
  }
  return [...patterns];
}

/** A {@link WebhookStore} over the svc schema. */
export function createSqlWebhookStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): WebhookStore {
  const now = () => new Date(deps.clock.now());
  async function subscribersOf(
    event: { readonly realmId: string; readonly orgId?: string | null; readonly eventKind: string },
  ): Promise<string[]> {
    if (!isUuid(event.realmId)) return [];
    const orgId = event.orgId ?? null;
    const candidates = await db.selectFrom("webhook_endpoints").select(["id", "event_patterns"])
      .where("realm_id", "=", event.realmId).where("enabled", "=", true)
      .where((eb) =>
        orgId === null || !isUuid(orgId)
          ? eb("org_id", "is", null)
          : eb.or([eb("org_id", "is", null), eb("org_id", "=", orgId)])
      )
      .orderBy("created_at").orderBy("id").execute();
    return candidates.filter((e) => e.event_patterns.some((p) => eventPatternMatches(p, event.eventKind)))
      .map((e) => e.id);
  }
  return {
    async createEndpoint(input) {
      const at = now();
      const row = await db.insertInto("webhook_endpoints").values({
        id: randomUuid(deps.random),
        realm_id: input.realmId,
        org_id: input.orgId ?? null,
        url: input.url,
        description: input.description ?? null,
        secret: input.secret,
        previous_secret: null,
        previous_secret_expires_at: null,
        event_patterns: checkPatterns(input.eventPatterns),
        enabled: true,
        consecutive_failures: 0,
        disabled_at: null,
        created_at: at,
        updated_at: at,
      }).returningAll().executeTakeFirstOrThrow();
      return toEndpoint(row);
    },

    async getEndpoint(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("webhook_endpoints").selectAll().where("id", "=", id)
        .executeTakeFirst();
      return row ? toEndpoint(row) : null;
    },

    async listEndpoints(realmId) {
      if (!isUuid(realmId)) return [];
      const rows = await db.selectFrom("webhook_endpoints").selectAll().where("realm_id", "=", realmId)
        .orderBy("created_at").orderBy("id").execute();
      return rows.map(toEndpoint);
    },

    async updateEndpoint(id, patch) {
      if (!isUuid(id)) return null;
      const at = now();
      const set: Updateable<WebhookEndpointsTable> = { updated_at: at };
      if (patch.url !== undefined) set.url = patch.url;
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.eventPatterns !== undefined) set.event_patterns = checkPatterns(patch.eventPatterns);
      if (patch.enabled === true) {
        Object.assign(set, { enabled: true, consecutive_failures: 0, disabled_at: null });
      }
      if (patch.enabled === false) Object.assign(set, { enabled: false, disabled_at: at });
      const row = await db.updateTable("webhook_endpoints").set(set).where("id", "=", id).returningAll()
        .executeTakeFirst();
      return row ? toEndpoint(row) : null;
    },

    async rotateSecret(id, newSecret, overlapMs) {
      if (!isUuid(id)) return null;
      const at = deps.clock.now();
      const row = await db.updateTable("webhook_endpoints")
        .set((eb) => ({
          previous_secret: eb.ref("secret"),
          previous_secret_expires_at: new Date(at + overlapMs),
          secret: sql<string>`${newSecret}::text`,
          updated_at: new Date(at),
        }))
        .where("id", "=", id).returningAll().executeTakeFirst();
      return row ? toEndpoint(row) : null;
    },

    async deleteEndpoint(id) {
      if (!isUuid(id)) return false;
      const result = await db.deleteFrom("webhook_endpoints").where("id", "=", id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    subscribersOf: (event) => subscribersOf(event),

    async enqueueForEvent(event) {
      const targets = await subscribersOf(event);
      if (targets.length === 0) return [];
      const at = now();
      const rows = await db.insertInto("webhook_deliveries").values(targets.map((endpointId) => ({
        id: randomUuid(deps.random),
        endpoint_id: endpointId,
        event_kind: event.eventKind,
        payload: event.payload,
        status: "pending" as const,
        attempts: 0,
        next_attempt_at: at,
        last_error: null,
        last_status_code: null,
        created_at: at,
        completed_at: null,
      }))).returningAll().execute();
      return rows.map(toDelivery);
    },

    async enqueue(endpointId, eventKind, payload) {
      const at = now();
      const row = await db.insertInto("webhook_deliveries").values({
        id: randomUuid(deps.random),
        endpoint_id: endpointId,
        event_kind: eventKind,
        payload,
        status: "pending",
        attempts: 0,
        next_attempt_at: at,
        last_error: null,
        last_status_code: null,
        created_at: at,
        completed_at: null,
      }).returningAll().executeTakeFirstOrThrow();
      return toDelivery(row);
    },

    async claimDue(options) {
      const limit = Math.max(1, Math.min(1000, Math.trunc(options?.limit ?? 10)));
      const at = deps.clock.now();
      const lease = new Date(at + (options?.leaseMs ?? 60_000));
      const claimed = await sql<Selectable<WebhookDeliveriesTable>>`
        UPDATE webhook_deliveries AS w
        SET attempts = w.attempts + 1, next_attempt_at = ${lease}::timestamptz
        FROM (
          SELECT d.id FROM webhook_deliveries AS d
          JOIN webhook_endpoints AS e ON e.id = d.endpoint_id
          WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= ${new Date(at)}::timestamptz
            AND e.enabled
          ORDER BY d.next_attempt_at, d.id
          LIMIT ${limit}
          FOR UPDATE OF d SKIP LOCKED
        ) AS due
        WHERE w.id = due.id
        RETURNING w.*`.execute(db);
      if (claimed.rows.length === 0) return [];
      const endpointIds = [...new Set(claimed.rows.map((r) => r.endpoint_id))];
      const endpoints = await db.selectFrom("webhook_endpoints").selectAll().where("id", "in", endpointIds)
        .execute();
      const byId = new Map(endpoints.map((e) => [e.id, toEndpoint(e)]));
      const out: ClaimedWebhookDelivery[] = [];
      for (const row of claimed.rows) {
        const endpoint = byId.get(row.endpoint_id);
        if (endpoint) out.push({ delivery: toDelivery(row), endpoint });
      }
      return out.sort((a, b) =>
        a.delivery.createdAt.getTime() - b.delivery.createdAt.getTime() ||
        a.delivery.id.localeCompare(b.delivery.id)
      );
    },

    async markSucceeded(id, statusCode) {
      if (!isUuid(id)) return null;
      return await atomically(db, async (trx) => {
        const at = now();
        const row = await trx.updateTable("webhook_deliveries")
          .set({
            status: "succeeded",
            completed_at: at,
            last_status_code: statusCode ?? null,
            last_error: null,
          })
          .where("id", "=", id).where("status", "in", ["pending", "retrying"])
          .returningAll().executeTakeFirst();
        if (!row) return null;
        await trx.updateTable("webhook_endpoints").set({ consecutive_failures: 0 })
          .where("id", "=", row.endpoint_id).where("consecutive_failures", "<>", 0).execute();
        return toDelivery(row);
      });
    },

    async markFailed(id, failure, options) {
      if (!isUuid(id)) return { delivery: null, endpointDisabled: false };
      const delays = options?.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_MS;
      const disableAfter = options?.disableAfter ?? WEBHOOK_DISABLE_AFTER_FAILURES;
      return await atomically(db, async (trx) => {
        const ref = await trx.selectFrom("webhook_deliveries").select("endpoint_id").where("id", "=", id)
          .executeTakeFirst();
        if (!ref) return { delivery: null, endpointDisabled: false };
        // Lock order: endpoint, then delivery (as endpoint deletion cascades).
        const endpoint = await trx.selectFrom("webhook_endpoints").select(["enabled", "consecutive_failures"])
          .where("id", "=", ref.endpoint_id).forUpdate().executeTakeFirst();
        const at = deps.clock.now();
        const current = await trx.selectFrom("webhook_deliveries").select(["attempts", "status"])
          .where("id", "=", id).forUpdate().executeTakeFirst();
        if (!current || (current.status !== "pending" && current.status !== "retrying")) {
          return { delivery: null, endpointDisabled: false };
        }
        const attempts = Math.max(1, Number(current.attempts));
        const delay = delays[attempts - 1];
        const row = await trx.updateTable("webhook_deliveries").set(
          delay === undefined
            ? { status: "dead_letter", completed_at: new Date(at) }
            : { status: "retrying", next_attempt_at: new Date(at + delay) },
        ).set({ last_error: failure.error, last_status_code: failure.statusCode ?? null })
          .where("id", "=", id).returningAll().executeTakeFirstOrThrow();
        let endpointDisabled = false;
        // The endpoint counts failed deliveries, not attempts: only a dead-letter (retries
        // exhausted) adds to its consecutive failures.
        if (endpoint && delay === undefined) {
          const failures = Number(endpoint.consecutive_failures) + 1;
          endpointDisabled = endpoint.enabled && failures >= disableAfter;
          await trx.updateTable("webhook_endpoints").set({
            consecutive_failures: failures,
            ...(endpointDisabled
              ? { enabled: false, disabled_at: new Date(at), updated_at: new Date(at) }
              : {}),
          }).where("id", "=", ref.endpoint_id).execute();
        }
        return { delivery: toDelivery(row), endpointDisabled };
      });
    },

    async getDelivery(id) {
      if (!isUuid(id)) return null;
      const row = await db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id)
        .executeTakeFirst();
      return row ? toDelivery(row) : null;
    },

    async listDeliveries(endpointId, options) {
      if (!isUuid(endpointId)) return [];
      const limit = Math.max(1, Math.min(1000, Math.trunc(options?.limit ?? 50)));
      let query = db.selectFrom("webhook_deliveries").selectAll().where("endpoint_id", "=", endpointId);
      if (options?.status !== undefined) query = query.where("status", "=", options.status);
      const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
      return rows.map(toDelivery);
    },

    async requeueDeadLetter(id) {
      if (!isUuid(id)) return false;
      const result = await db.updateTable("webhook_deliveries")
        .set({ status: "pending", attempts: 0, next_attempt_at: now(), completed_at: null })
        .where("id", "=", id).where("status", "=", "dead_letter").executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async releaseClaims(ids) {
      const valid = ids.filter(isUuid);
      if (valid.length === 0) return 0;
      const result = await db.updateTable("webhook_deliveries")
        .set((eb) => ({ attempts: eb("attempts", "-", 1), next_attempt_at: now() }))
        .where("id", "in", valid)
        .where("status", "in", ["pending", "retrying"])
        .where("attempts", ">", 0)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async queueStats() {
      const row = await sql<{ pending: number; retrying: number; dead_letter: number; oldest: Date | null }>`
        SELECT
          count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
          count(*) FILTER (WHERE d.status = 'retrying')::int AS retrying,
          count(*) FILTER (WHERE d.status = 'dead_letter')::int AS dead_letter,
          min(d.next_attempt_at) FILTER (WHERE d.status IN ('pending', 'retrying') AND e.enabled) AS oldest
        FROM webhook_deliveries AS d
        JOIN webhook_endpoints AS e ON e.id = d.endpoint_id`.execute(db);
      const stats = row.rows[0];
      return {
        pending: stats.pending,
        retrying: stats.retrying,
        deadLetter: stats.dead_letter,
        oldestDueAt: stats.oldest === null ? null : new Date(stats.oldest).getTime(),
      };
    },
  };
}
