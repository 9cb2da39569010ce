/**
 * Admin mutations with their audit entry: the change, its entry in the realm's audit chain
 * (spec 2.7) and the events it causes are written in one transaction, so an admin change is
 * never committed without its entry. The transaction first takes the realm's audit lock, so the
 * admin mutations of a realm run one after the other: the work decides inside it, from what it
 * reads there (or from the rows its conditional writes affected), whether anything changes. A
 * work that changes nothing emits no event and returns a null audit record: no entry is written,
 * and of concurrent identical requests exactly one changes state, is audited and emits. When two mutations of one realm race for the same
 * sequence number despite the per-realm lock (a writer that bypassed it), or the database
 * reports a serialization failure or deadlock, the whole transaction runs again, which
 * re-reads the chain's tail and relinks; a fault that persists surfaces as `StorageError`
 * after a bounded number of attempts.
 *
 * @module
 */
import { StorageError } from "../errors.ts";
import type { AdminAuditEntry, AuditActorKind } from "../storage/admin-audit.ts";
import type { Storage } from "../storage/storage.ts";
import type { EmitInTransaction, EventOrigin } from "../events/publisher.ts";
import type { SvcEvent } from "../events/sink.ts";

/**
 * Who performs an admin mutation (spec 2.7 actor and actor kind). Routes derive it from the
 * caller with `auditActor(principal)` (`http/auth/audit-actor.ts`); components that act on
 * their own use actor kind `System` with their name as id.
 */
export interface AuditActor {
  /**
   * The actor's id (of a user, service account or API key), or a component's name for actor kind `System`.
   */
  readonly id: string;
  /**
   * What kind of principal the actor is (spec 2.7): `User`, `ServiceAccount`, `ApiKey`, `System` or
   * `BreakGlass`.
   */
  readonly kind: AuditActorKind;
  /** The impersonated user, or the owner of an API key; absent otherwise. */
  readonly onBehalfOf?: string | null;
}

/**
 * Records events inside a transaction and announces them after commit: an `EventPublisher`
 * (or anything with its `transaction`).
 */
export interface TransactionalEvents {
  /**
   * Runs `work` in one transaction (on `storage` when given), letting it record events with `emit`; announces
   * them after commit.
   */
  transaction<T>(work: (tx: Storage, emit: EmitInTransaction) => Promise<T>, storage?: Storage): Promise<T>;
}

/** The audit entry of a mutation, as the mutation describes it. */
export interface AuditRecord {
  /** What was done, for example `webhook.endpoint.create`. */
  readonly action: string;
  /** The id of what was changed (a user, role, endpoint…), or null/absent when there is none. */
  readonly target?: string | null;
  /** The organization the change belongs to, or null/absent for a realm-level change. */
  readonly orgId?: string | null;
  /** Snapshot before (null or absent for creations); never secrets. */
  readonly before?: unknown;
  /** Snapshot after (null or absent for deletions); never secrets. */
  readonly after?: unknown;
}

/** What the work of {@link runAdminMutation} gets. */
export interface AdminMutationContext {
  /** Storage bound to the mutation's transaction. */
  readonly tx: Storage;
  /** Records an event in the transaction (outbox and ledger); announced after commit. */
  emit(event: SvcEvent, origin?: EventOrigin): Promise<void>;
}

/** The result of a mutation's work: its value and the audit entry to append (null: nothing changed). */
export interface AdminMutationResult<T> {
  /** What the mutation answers to its caller. */
  readonly value: T;
  /**
   * The audit entry to append in the same transaction, or null when nothing changed (no entry is written).
   */
  readonly audit: AuditRecord | null;
}

const RETRYABLE = new Set(["40001", "40P01", "23505"]);
/** How many times a mutation runs before a persistent collision or fault surfaces as `StorageError`. */
export const ADMIN_MUTATION_MAX_ATTEMPTS = 5;

function retryable(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && RETRYABLE.has(code);
}

/**
 * Runs an admin mutation of `realmId` by `actor`: `work` changes things through `ctx.tx` and
 * returns the audit record, which is appended to the realm's chain in the same transaction.
 * The returned entry is null when `work` reported no change.
 */
export async function runAdminMutation<T>(
  deps: { readonly storage: Storage; readonly publisher?: TransactionalEvents },
  realmId: string,
  actor: AuditActor,
  work: (ctx: AdminMutationContext) => Promise<AdminMutationResult<T>>,
): Promise<{ value: T; entry: AdminAuditEntry | null }> {
  const inTransaction = <R>(fn: (tx: Storage, emit: EmitInTransaction) => Promise<R>): Promise<R> =>
    deps.publisher
      ? deps.publisher.transaction(fn, deps.storage)
      : deps.storage.transaction((tx) => fn(tx, () => Promise.resolve()));
  let lastError: unknown;
  for (let attempt = 1; attempt <= ADMIN_MUTATION_MAX_ATTEMPTS; attempt++) {
    try {
      return await inTransaction(async (tx, emit) => {
        // First: the realm's admin mutations run one after the other, so the work reads what the
        // previous one committed and a concurrent duplicate finds nothing left to change.
        await tx.adminAudit.lock(realmId);
        const { value, audit } = await work({ tx, emit });
        const entry = audit === null ? null : await tx.adminAudit.append(realmId, {
          action: audit.action,
          actorId: actor.id,
          actorKind: actor.kind,
          onBehalfOf: actor.onBehalfOf ?? null,
          target: audit.target ?? null,
          orgId: audit.orgId ?? null,
          before: audit.before ?? null,
          after: audit.after ?? null,
        });
        return { value, entry };
      });
    } catch (error) {
      if (!retryable(error)) throw error;
      lastError = error;
    }
  }
  throw new StorageError("The admin change kept colliding with concurrent changes.", { cause: lastError });
}
