/**
 * Webhook endpoints and deliveries (spec 2.8, 3, 8). Endpoints subscribe to event-kind
 * patterns (`login.*`), realm-wide or for one organization. A delivery's id is its
 * idempotency key (`X-Svc-Delivery`); its payload is the raw body that gets signed.
 * Failed deliveries retry after 1m, 5m, 30m, 2h, 12h, then dead-letter; an endpoint with
 * 10 consecutive failures is disabled.
 *
 * The endpoint secret is stored as issued (`whsec_…`): signing needs the key itself, so
 * it cannot be hashed.
 *
 * @module
 */

/** Retry delays after the 1st, 2nd, … failed attempt; past the last, dead-letter. */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  60_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  12 * 3_600_000,
];

/** Consecutive failures after which an endpoint is disabled. */
export const WEBHOOK_DISABLE_AFTER_FAILURES = 10;

/** A stored endpoint. */
export interface WebhookEndpointRecord {
  /** The id. */
  readonly id: string;
  /** The realm it belongs to. */
  readonly realmId: string;
  /** Null: realm-wide. */
  readonly orgId: string | null;
  /** Where deliveries are POSTed. */
  readonly url: string;
  /** A description for people. */
  readonly description: string | null;
  /** The signing secret (`whsec_…`). */
  readonly secret: string;
  /** The secret before the last rotation, accepted by receivers until it expires. */
  readonly previousSecret: string | null;
  /** When the previous secret stops being used, or null. */
  readonly previousSecretExpiresAt: Date | null;
  /** Event-kind patterns it subscribes to (`*` matches any run of characters). */
  readonly eventPatterns: readonly string[];
  /** Whether deliveries are made; false once disabled. */
  readonly enabled: boolean;
  /** Failed deliveries in a row (dead-lettered after their retries, not attempts); a success resets it. */
  readonly consecutiveFailures: number;
  /** When it was disabled, or null. */
  readonly disabledAt: Date | null;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it last changed. */
  readonly updatedAt: Date;
}

/** An endpoint to create. */
export interface NewWebhookEndpoint {
  /** The realm it belongs to. */
  readonly realmId: string;
  /** The organization it concerns, or null. */
  readonly orgId?: string | null;
  /** Where deliveries are POSTed. */
  readonly url: string;
  /** A description for people. */
  readonly description?: string | null;
  /** The signing secret (`whsec_…`). */
  readonly secret: string;
  /** Event-kind patterns it subscribes to (`*` matches any run of characters). */
  readonly eventPatterns: readonly string[];
}

/** Delivery states. */
export type WebhookDeliveryStatus = "pending" | "retrying" | "succeeded" | "dead_letter";

/** A stored delivery. */
export interface WebhookDeliveryRecord {
  /** The idempotency key. */
  readonly id: string;
  /** The endpoint it goes to. */
  readonly endpointId: string;
  /** The event kind, for example `login.succeeded`. */
  readonly eventKind: string;
  /** The raw body. */
  readonly payload: string;
  /** Where it stands. */
  readonly status: WebhookDeliveryStatus;
  /** Attempts started (claims). */
  readonly attempts: number;
  /** When it is next due (a claim's lease end, or the next retry). */
  readonly nextAttemptAt: Date;
  /** Why the last attempt failed, or null. */
  readonly lastError: string | null;
  /** The HTTP status of the last attempt, or null. */
  readonly lastStatusCode: number | null;
  /** When it was created. */
  readonly createdAt: Date;
  /** When it succeeded or was dead-lettered; null before. */
  readonly completedAt: Date | null;
}

/** A claimed delivery with what is needed to send it. */
export interface ClaimedWebhookDelivery {
  /** The claimed delivery. */
  readonly delivery: WebhookDeliveryRecord;
  /** Its endpoint. */
  readonly endpoint: WebhookEndpointRecord;
}

/** What recording a failure did. */
export interface WebhookFailureOutcome {
  /** The delivery afterwards (`retrying` or `dead_letter`); null when it was not in flight. */
  readonly delivery: WebhookDeliveryRecord | null;
  /** True only for the failure that disabled the endpoint (emit `webhook.endpoint_disabled`). */
  readonly endpointDisabled: boolean;
}

/** Whether an event kind matches a subscription pattern (`*` matches any run of characters). */
export function eventPatternMatches(pattern: string, kind: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === kind;
  const first = parts[0], last = parts[parts.length - 1];
  if (!kind.startsWith(first) || kind.length < first.length + last.length || !kind.endsWith(last)) {
    return false;
  }
  let at = first.length;
  const end = kind.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = kind.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** Webhook storage. */
export interface WebhookStore {
  /** Creates an endpoint (enabled, no failures). */
  createEndpoint(input: NewWebhookEndpoint): Promise<WebhookEndpointRecord>;
  /** The endpoint with this id, or null. */
  getEndpoint(id: string): Promise<WebhookEndpointRecord | null>;
  /** The realm's endpoints (all organizations), oldest first. */
  listEndpoints(realmId: string): Promise<WebhookEndpointRecord[]>;
  /**
   * Updates fields. Setting `enabled: true` also resets the failure count and the
   * disabled time. Returns the endpoint, or null when unknown.
   */
  updateEndpoint(
    id: string,
    patch: {
      readonly url?: string;
      readonly description?: string | null;
      readonly eventPatterns?: readonly string[];
      readonly enabled?: boolean;
    },
  ): Promise<WebhookEndpointRecord | null>;
  /**
   * One UPDATE: the current secret becomes the previous one until now + `overlapMs` and
   * `newSecret` becomes current. Returns the endpoint, or null when unknown.
   */
  rotateSecret(id: string, newSecret: string, overlapMs: number): Promise<WebhookEndpointRecord | null>;
  /** Deletes an endpoint and its deliveries; returns whether it existed. */
  deleteEndpoint(id: string): Promise<boolean>;

  /**
   * Queues one `pending` delivery, due now, to every enabled endpoint of the realm that
   * subscribes to `eventKind` (realm-wide endpoints, plus those of `orgId` when given).
   */
  enqueueForEvent(event: {
    readonly realmId: string;
    readonly orgId?: string | null;
    readonly eventKind: string;
    readonly payload: string;
  }): Promise<WebhookDeliveryRecord[]>;
  /**
   * The ids of the enabled endpoints of the realm that subscribe to `eventKind` (realm-wide
   * endpoints, plus those of `orgId` when given), oldest first: what {@link enqueueForEvent}
   * would queue a delivery to.
   */
  subscribersOf(event: {
    readonly realmId: string;
    readonly orgId?: string | null;
    readonly eventKind: string;
  }): Promise<string[]>;
  /** Queues one delivery to one endpoint (an admin test ping, a replay). */
  enqueue(endpointId: string, eventKind: string, payload: string): Promise<WebhookDeliveryRecord>;
  /**
   * Claims up to `limit` due deliveries (pending or retrying, due now, endpoint enabled)
   * atomically with `FOR UPDATE SKIP LOCKED`: concurrent workers never claim the same one.
   * Each claimed delivery gets `attempts + 1` and a lease: it is not due again for
   * `leaseMs` (default 60 s), so a crashed worker's delivery is retried after the lease.
   */
  claimDue(
    options?: { readonly limit?: number; readonly leaseMs?: number },
  ): Promise<ClaimedWebhookDelivery[]>;
  /** Records a success: the delivery is `succeeded` and the endpoint's failure count resets. */
  markSucceeded(id: string, statusCode?: number | null): Promise<WebhookDeliveryRecord | null>;
  /**
   * Records a failed attempt in one transaction: the delivery becomes `retrying` (due
   * after the next delay) or `dead_letter` when the delays are exhausted. Only a dead-letter
   * adds to the endpoint's consecutive failures (deliveries, not attempts), disabling it at
   * the threshold.
   */
  markFailed(
    id: string,
    failure: { readonly error: string; readonly statusCode?: number | null },
    options?: { readonly retryDelaysMs?: readonly number[]; readonly disableAfter?: number },
  ): Promise<WebhookFailureOutcome>;
  /** The delivery with this id, or null. */
  getDelivery(id: string): Promise<WebhookDeliveryRecord | null>;
  /** An endpoint's deliveries, newest first, optionally of one status, at most `limit` (default 50). */
  listDeliveries(
    endpointId: string,
    options?: { readonly status?: WebhookDeliveryStatus; readonly limit?: number },
  ): Promise<WebhookDeliveryRecord[]>;
  /** Puts a dead-lettered delivery back to `pending`, due now, attempts reset; returns whether it applied. */
  requeueDeadLetter(id: string): Promise<boolean>;
  /**
   * Hands claimed deliveries back unattempted (a worker that stops): each one still pending or
   * retrying gets its attempt back and is due now, for another worker. Returns how many.
   */
  releaseClaims(ids: readonly string[]): Promise<number>;
  /**
   * The delivery queue at a glance, for metrics: deliveries by status across every realm, and the
   * due time of the oldest delivery waiting (pending or retrying, endpoint enabled), or null.
   */
  queueStats(): Promise<WebhookQueueStats>;
}

/** What {@link WebhookStore.queueStats} reports. */
export interface WebhookQueueStats {
  /** Deliveries in state `pending` (not failed yet), across every realm. */
  readonly pending: number;
  /** Deliveries in state `retrying`, across every realm. */
  readonly retrying: number;
  /** Deliveries in state `dead_letter`, across every realm. */
  readonly deadLetter: number;
  /** Epoch ms of the oldest due time among waiting deliveries (its lag is now minus this), or null. */
  readonly oldestDueAt: number | null;
}
