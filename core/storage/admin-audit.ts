/**
 * The admin audit ledger (spec 2.7, 6): a per-realm, tamper-evident hash chain. Each
 * entry has a gap-free sequence number, the previous entry's hash (all zeros for the
 * first), and a hash over its content (payload digests, not payloads) and that previous
 * hash. Redaction nulls only payloads, so the chain still verifies.
 *
 * @module
 */

/** Who acted. */
export type AuditActorKind = "User" | "ServiceAccount" | "ApiKey" | "System" | "BreakGlass";

/** The predecessor hash of the first entry of a chain. */
export const GENESIS_HASH: string = "0".repeat(64);

/** A stored audit entry. */
export interface AdminAuditEntry {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** 1, 2, 3, … per realm, without gaps. */
  readonly seq: number;
  /** When it happened. */
  readonly occurredAt: Date;
  /** What was done, for example `role.create`. */
  readonly action: string;
  /**
   * Who acted: a user id (`User`; under impersonation the impersonating administrator), a
   * service account id (`ServiceAccount`), an API key id (`ApiKey`), or a component name
   * (`System`, for example `svc:bootstrap`).
   */
  readonly actorId: string;
  /** What kind of actor `actorId` names. */
  readonly actorKind: AuditActorKind;
  /**
   * Whom the actor acted for: the impersonated user (actor kind `User`) or the owner of the
   * API key (actor kind `ApiKey`); null otherwise.
   */
  readonly onBehalfOf: string | null;
  /** What the action concerns (for example a user or role-assignment id), or null. */
  readonly target: string | null;
  /** The organization it concerns, or null. */
  readonly orgId: string | null;
  /** Snapshot before the mutation; null when absent or redacted. */
  readonly before: unknown | null;
  /** Snapshot after the mutation; null when absent or redacted. */
  readonly after: unknown | null;
  /** SHA-256 hex of the canonical JSON of `before` (of `null` when absent). */
  readonly beforeDigest: string;
  /** SHA-256 hex of the canonical JSON of `after` (of `null` when absent). */
  readonly afterDigest: string;
  /** The entry hash of the previous entry of the realm ({@link GENESIS_HASH} for the first). */
  readonly prevHash: string;
  /** SHA-256 hex over the entry's content and `prevHash` (the chain link). */
  readonly entryHash: string;
}

/** An entry to append. */
export interface NewAdminAuditEntry {
  /** What was done, for example `role.create`. */
  readonly action: string;
  /** Who acted. */
  readonly actorId: string;
  /** What kind of actor `actorId` names. */
  readonly actorKind: AuditActorKind;
  /** See {@link AdminAuditEntry.onBehalfOf}. */
  readonly onBehalfOf?: string | null;
  /** What the action concerns (for example a user id), or null. */
  readonly target?: string | null;
  /** The organization it concerns, or null. */
  readonly orgId?: string | null;
  /** Snapshot before the mutation; absent: none. */
  readonly before?: unknown;
  /** Snapshot after the mutation; absent: none. */
  readonly after?: unknown;
}

/** The result of verifying a realm's chain. */
export type AuditChainVerification =
  | { readonly ok: true; readonly count: number }
  | {
    readonly ok: false;
    /** The first sequence number at which the chain is broken. */
    readonly brokenAt: number;
    /** `sequence_gap`, `prev_hash_mismatch`, `entry_hash_mismatch` or `payload_digest_mismatch`. */
    readonly reason: string;
  };

/** Why verification stopped at an entry. */
export type AuditChainBreak =
  | "sequence_gap"
  | "prev_hash_mismatch"
  | "entry_hash_mismatch"
  | "payload_digest_mismatch";

/** The full answer of {@link AdminAuditStore.verify}. */
export interface AuditChainReport {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** True when every entry links, hashes and digests correctly. */
  readonly valid: boolean;
  /** Entries checked and found good (on failure: those before the first bad one). */
  readonly checked: number;
  /** The entry hash of the last good entry (the chain head when valid); the genesis hash when none. */
  readonly headHash: string;
  /** The sequence number of the last good entry (0 when none). */
  readonly headSeq: number;
  /** The first bad entry, or null when valid. */
  readonly firstBad: { readonly seq: number; readonly reason: AuditChainBreak } | null;
}

/** Admin-audit storage. */
export interface AdminAuditStore {
  /**
   * Appends to the realm's chain atomically: appends to one realm are serialized (a
   * per-realm transaction lock), so concurrent appends get consecutive sequence numbers
   * and link correctly. A sequence collision with a writer that bypassed the lock re-reads
   * the tail and relinks; persistent faults surface as `StorageError` after bounded tries.
   */
  append(realmId: string, entry: NewAdminAuditEntry): Promise<AdminAuditEntry>;
  /**
   * Takes the realm's append lock for the rest of the caller's transaction (the lock `append`
   * takes), so that an admin mutation that takes it first runs after every other one of the realm
   * has committed: what it reads then is what the previous one left, and a concurrent duplicate
   * finds the change made and changes nothing. Only a store bound to a transaction can hold it
   * (`StorageError` otherwise).
   */
  lock(realmId: string): Promise<void>;
  /** Entries of the realm in sequence order, after `afterSeq` (default 0), at most `limit` (default 100). */
  list(
    realmId: string,
    options?: { readonly afterSeq?: number; readonly limit?: number },
  ): Promise<AdminAuditEntry[]>;
  /** The last entry of the realm's chain, or null. */
  head(realmId: string): Promise<AdminAuditEntry | null>;
  /**
   * Recomputes the realm's chain from the start: sequence continuity, predecessor links,
   * entry hashes, and digests of payloads that are still present.
   */
  verifyChain(realmId: string): Promise<AuditChainVerification>;
  /** {@link verifyChain} with the head hash and the number of entries checked. */
  verify(realmId: string): Promise<AuditChainReport>;
  /**
   * Retention: nulls payloads of entries older than `cutoff` (all realms, or one when given);
   * digests and hashes stay, so the chain still verifies. Returns how many.
   */
  redactOlderThan(cutoff: Date, options?: { readonly realmId?: string }): Promise<number>;
  /**
   * Erasure: nulls payloads of entries where the user is actor, acted-for (`onBehalfOf`) or
   * target; returns how many.
   */
  redactForSubject(subjectId: string): Promise<number>;
}
