/**
 * The SQL admin-audit store: a per-realm hash chain. An append takes a per-realm
 * advisory transaction lock (`lockForTransaction`, namespaced by the schema), reads the
 * tail, and inserts the next entry, so concurrent appends to one realm serialize and the
 * sequence stays gap-free. The primary key (realm, seq) backs that up: a writer that
 * bypassed the lock makes the insert collide, and the append retries (re-reading the
 * tail and relinking) a bounded number of times before raising `StorageError`.
 *
 * Hashes: `beforeDigest`/`afterDigest` are SHA-256 hex of the canonical JSON (sorted
 * keys) of the payloads; the entry hash is SHA-256 hex of a JSON array of the entry's
 * content (with the digests, not the payloads) and the previous hash. `onBehalfOf` is
 * appended to that array only when set, so entries without it hash exactly as before.
 *
 * @module
 */
import type { Kysely, Selectable } from "kysely";
import { sql } from "kysely";
import type { Clock } from "../../core/clock.ts";
import { sha256Hex } from "../../core/digest.ts";
import { StorageError, ValidationError } from "../../core/errors.ts";
import type { RandomSource } from "../../core/random.ts";
import {
  type AdminAuditEntry,
  type AdminAuditStore,
  type AuditChainReport,
  type AuditChainVerification,
  GENESIS_HASH,
} from "../../core/storage/admin-audit.ts";
import type { AdminAuditEntriesTable, Database, Executor } from "../database.ts";
import { isUuid } from "../../core/ids.ts";
import { canonicalJson } from "../../core/canonical-json.ts";
import { LockClass, lockForTransaction } from "./advisory-locks.ts";

/**
 * Advisory-lock class id of audit appends (first key of the two-key form; the second is
 * `advisoryLockKey(realmId)`).
 */
export const LOCK_CLASS = LockClass.adminAudit;
const MAX_ATTEMPTS = 5;
const VERIFY_BATCH = 500;
/** Serialization failure, deadlock, unique violation: worth another try. */
const RETRYABLE = new Set(["40001", "40P01", "23505"]);

/** The canonical serialization the chain hashes (kept exported here for existing importers). */
export { canonicalJson };

/** The digest of a payload (absent payloads digest as `null`). */
export function payloadDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value ?? null));
}

/** The entry hash over an entry's content and its predecessor's hash. */
export function auditEntryHash(
  entry: Omit<AdminAuditEntry, "before" | "after" | "entryHash" | "onBehalfOf"> & {
    readonly onBehalfOf?: string | null;
  },
): string {
  const onBehalfOf = entry.onBehalfOf ?? null;
  return sha256Hex(JSON.stringify([
    "svc.audit.v1",
    entry.realmId,
    entry.seq,
    entry.occurredAt.toISOString(),
    entry.action,
    entry.actorId,
    entry.actorKind,
    entry.target,
    entry.orgId,
    entry.beforeDigest,
    entry.afterDigest,
    entry.prevHash,
    ...(onBehalfOf === null ? [] : [onBehalfOf]),
  ]));
}

function toEntry(row: Selectable<AdminAuditEntriesTable>): AdminAuditEntry {
  return {
    realmId: row.realm_id,
    seq: Number(row.seq),
    occurredAt: row.occurred_at,
    action: row.action,
    actorId: row.actor_id,
    actorKind: row.actor_kind,
    onBehalfOf: row.on_behalf_of ?? null,
    target: row.target,
    orgId: row.org_id,
    before: row.before_json ?? null,
    after: row.after_json ?? null,
    beforeDigest: row.before_digest,
    afterDigest: row.after_digest,
    prevHash: row.prev_hash,
    entryHash: row.entry_hash,
  };
}

function errorCode(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

function jsonb(value: unknown) {
  return value === undefined || value === null ? null : sql`${JSON.stringify(value)}::jsonb`;
}

/** Takes the realm's append lock until the end of the transaction of `trx` (realm id lower-case). */
async function lockChain(trx: Executor, realmId: string): Promise<void> {
  await lockForTransaction(trx, LockClass.adminAudit, realmId);
}

/** A {@link AdminAuditStore} over the svc schema. */
export function createSqlAdminAuditStore(
  db: Executor,
  deps: { clock: Clock; random: RandomSource },
): AdminAuditStore {
  const appendOnce = async (
    trx: Executor,
    realmId: string,
    entry: Parameters<AdminAuditStore["append"]>[1],
  ) => {
    await lockChain(trx, realmId);
    const tail = await trx.selectFrom("admin_audit_entries").select(["seq", "entry_hash"])
      .where("realm_id", "=", realmId).orderBy("seq", "desc").limit(1).executeTakeFirst();
    const content = {
      realmId,
      seq: tail ? Number(tail.seq) + 1 : 1,
      occurredAt: new Date(deps.clock.now()),
      action: entry.action,
      actorId: entry.actorId,
      actorKind: entry.actorKind,
      onBehalfOf: entry.onBehalfOf ?? null,
      target: entry.target ?? null,
      orgId: entry.orgId?.toLowerCase() ?? null,
      beforeDigest: payloadDigest(entry.before),
      afterDigest: payloadDigest(entry.after),
      prevHash: tail?.entry_hash ?? GENESIS_HASH,
    };
    const entryHash = auditEntryHash(content);
    const row = await trx.insertInto("admin_audit_entries").values({
      realm_id: content.realmId,
      seq: content.seq,
      occurred_at: content.occurredAt,
      action: content.action,
      actor_id: content.actorId,
      actor_kind: content.actorKind,
      on_behalf_of: content.onBehalfOf,
      target: content.target,
      org_id: content.orgId,
      before_json: jsonb(entry.before),
      after_json: jsonb(entry.after),
      before_digest: content.beforeDigest,
      after_digest: content.afterDigest,
      prev_hash: content.prevHash,
      entry_hash: entryHash,
    }).returningAll().executeTakeFirstOrThrow();
    return toEntry(row);
  };

  return {
    async append(realmIdInput, entry) {
      if (!isUuid(realmIdInput)) throw new ValidationError("realmId must be a realm id (a UUID).");
      if (entry.orgId != null && !isUuid(entry.orgId)) {
        throw new ValidationError("orgId must be an organization id (a UUID).");
      }
      const realmId = realmIdInput.toLowerCase();
      // Inside a caller's transaction a failed statement aborts it: no retry is possible there.
      if (db.isTransaction) return await appendOnce(db, realmId, entry);
      let lastError: unknown;
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        try {
          return await (db as Kysely<Database>).transaction().execute((trx) =>
            appendOnce(trx, realmId, entry)
          );
        } catch (error) {
          const code = errorCode(error);
          if (code === undefined || !(RETRYABLE.has(code) || code.startsWith("08"))) throw error;
          lastError = error;
        }
      }
      throw new StorageError("Appending to the admin audit chain kept failing.", { cause: lastError });
    },

    async lock(realmIdInput) {
      if (!isUuid(realmIdInput)) throw new ValidationError("realmId must be a realm id (a UUID).");
      if (!db.isTransaction) throw new StorageError("The audit chain's lock is held by a transaction only.");
      await lockChain(db, realmIdInput.toLowerCase());
    },

    async list(realmId, options) {
      if (!isUuid(realmId)) return [];
      const limit = Math.max(1, Math.min(1000, Math.trunc(options?.limit ?? 100)));
      const rows = await db.selectFrom("admin_audit_entries").selectAll()
        .where("realm_id", "=", realmId).where("seq", ">", options?.afterSeq ?? 0)
        .orderBy("seq").limit(limit).execute();
      return rows.map(toEntry);
    },

    async head(realmId) {
      if (!isUuid(realmId)) return null;
      const row = await db.selectFrom("admin_audit_entries").selectAll().where("realm_id", "=", realmId)
        .orderBy("seq", "desc").limit(1).executeTakeFirst();
      return row ? toEntry(row) : null;
    },

    async verifyChain(realmId): Promise<AuditChainVerification> {
      const report = await this.verify(realmId);
      return report.firstBad === null
        ? { ok: true, count: report.checked }
        : { ok: false, brokenAt: report.firstBad.seq, reason: report.firstBad.reason };
    },

    async verify(realmId): Promise<AuditChainReport> {
      let expectedSeq = 1;
      let prevHash = GENESIS_HASH;
      const report = (firstBad: AuditChainReport["firstBad"]): AuditChainReport => ({
        realmId,
        valid: firstBad === null,
        checked: expectedSeq - 1,
        headHash: prevHash,
        headSeq: expectedSeq - 1,
        firstBad,
      });
      if (!isUuid(realmId)) return report(null);
      for (;;) {
        const rows = await db.selectFrom("admin_audit_entries").selectAll()
          .where("realm_id", "=", realmId).where("seq", ">=", expectedSeq)
          .orderBy("seq").limit(VERIFY_BATCH).execute();
        for (const row of rows) {
          const entry = toEntry(row);
          if (entry.seq !== expectedSeq) return report({ seq: expectedSeq, reason: "sequence_gap" });
          if (entry.prevHash !== prevHash) return report({ seq: entry.seq, reason: "prev_hash_mismatch" });
          if (auditEntryHash(entry) !== entry.entryHash) {
            return report({ seq: entry.seq, reason: "entry_hash_mismatch" });
          }
          if (
            (row.before_json !== null && payloadDigest(entry.before) !== entry.beforeDigest) ||
            (row.after_json !== null && payloadDigest(entry.after) !== entry.afterDigest)
          ) return report({ seq: entry.seq, reason: "payload_digest_mismatch" });
          prevHash = entry.entryHash;
          expectedSeq++;
        }
        if (rows.length < VERIFY_BATCH) return report(null);
      }
    },

    async redactOlderThan(cutoff, options) {
      if (options?.realmId !== undefined && !isUuid(options.realmId)) return 0;
      const result = await db.updateTable("admin_audit_entries").set({ before_json: null, after_json: null })
        .where("occurred_at", "<", cutoff)
        .where((eb) => options?.realmId === undefined ? eb.lit(true) : eb("realm_id", "=", options.realmId))
        .where((eb) => eb.or([eb("before_json", "is not", null), eb("after_json", "is not", null)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async redactForSubject(subjectId) {
      const result = await db.updateTable("admin_audit_entries").set({ before_json: null, after_json: null })
        .where((eb) =>
          eb.or([
            eb("actor_id", "=", subjectId),
            eb("on_behalf_of", "=", subjectId),
            eb("target", "=", subjectId),
          ])
        )
        .where((eb) => eb.or([eb("before_json", "is not", null), eb("after_json", "is not", null)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}
