/**
 * The webhook dispatcher: claims due deliveries from the Postgres outbox (`FOR UPDATE SKIP
 * LOCKED` with a lease, so any number of instances can run one), signs each body at send
 * time (spec 2.8), POSTs it through the outbound guard (private receivers refused after DNS
 * resolution, a timeout, no redirect followed), and records the
 * outcome. A failure schedules the next retry (1m, 5m, 30m, 2h, 12h by default) or
 * dead-letters the delivery. The endpoint counts consecutive failed DELIVERIES (dead-lettered
 * after their retries), not attempts: a burst of first attempts that fail never disables it. The
 * dead-letter that reaches the limit disables the endpoint and, in the same transaction, emits
 * `webhook.endpoint_disabled` and appends a `System` entry to the admin audit chain.
 *
 * Lock order: an admin mutation takes the realm's audit lock first and then the rows it changes
 * (an endpoint's, for a PATCH). The disabling failure does the same: it takes the audit lock
 * before `markFailed` locks the endpoint row. It is taken only where a disable is possible (the
 * claimed endpoint is one failure from the limit); a failure that disables the endpoint without
 * having taken it (concurrent failures of the same endpoint counted meanwhile) rolls back and
 * runs again with the lock first, so the dispatcher never waits on the audit lock while holding
 * an endpoint row an admin mutation waits on.
 *
 * Delivery is at least once: a dispatcher that dies after sending and before recording leaves
 * the delivery claimed until its lease runs out, and the next claim sends it again with the
 * same `X-Svc-Delivery`. Time comes from the injected clock (due times, signatures), the
 * network from the injected outbound guard.
 *
 * @module
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { Clock } from "../clock.ts";
import type { Storage } from "../storage/storage.ts";
import {
  type ClaimedWebhookDelivery,
  WEBHOOK_DISABLE_AFTER_FAILURES,
  WEBHOOK_RETRY_DELAYS_MS,
  type WebhookDeliveryStatus,
} from "../storage/webhooks.ts";
import { EVENT_KINDS } from "../events/catalog.ts";
import { PollingLoop } from "../polling-loop.ts";
import { inSpan } from "../tracing.ts";
import type { EventPublisher } from "../events/publisher.ts";
import type { EventSink, SvcEvent } from "../events/sink.ts";
import { OutboundError, type OutboundErrorCode, type OutboundFetch } from "../net/outbound.ts";
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signWebhookPayload } from "./signature.ts";

/** The audit actor id of the dispatcher's own mutations (endpoint auto-disable). */
export const DISPATCHER_ACTOR_ID = "svc:webhook-dispatcher";

/** What the dispatcher is built from. */
export interface WebhookDispatcherOptions {
  /** The outbox: deliveries are claimed, recorded and endpoints disabled through it. */
  readonly storage: Storage;
  /**
   * Sends requests: svc's outbound guard (`createOutboundFetch`), which refuses private and
   * loopback receivers unless its policy allows them (a test builds one over a fake `fetch`).
   */
  readonly outbound: OutboundFetch;
  /**
   * The current time: signature timestamps, the previous secret's expiry and the disable event's
   * `occurredAt`.
   */
  readonly clock: Clock;
  /** Records `webhook.endpoint_disabled` durably (outbox, then the in-process sink). */
  readonly publisher?: EventPublisher;
  /** Without a publisher: where `webhook.endpoint_disabled` goes after commit. */
  readonly events?: EventSink;
  /** Delays before the 1st, 2nd… retry; past the last, dead-letter. Default 1m, 5m, 30m, 2h, 12h. */
  readonly retryDelaysMs?: readonly number[];
  /** Consecutive failures that disable an endpoint (default 10). */
  readonly disableAfter?: number;
  /** Time limit of one request in milliseconds (default 10 000). */
  readonly timeoutMs?: number;
  /** How long a claimed delivery stays invisible to other claims (default 60 s, at least 2 × timeout). */
  readonly leaseMs?: number;
  /** Deliveries claimed per batch (default 20). */
  readonly batchSize?: number;
  /** Requests in flight at once within a batch (default 8). */
  readonly concurrency?: number;
  /** Pause between polls when the outbox is drained, in real milliseconds (default 1000). */
  readonly pollIntervalMs?: number;
  /** Where unexpected errors go (the server log). */
  readonly onError?: (line: string) => void;
}

/** What happened to one claimed delivery. */
export interface DispatchOutcome {
  /** The claimed delivery (also sent as `X-Svc-Delivery`). */
  readonly deliveryId: string;
  /** The endpoint it was sent to. */
  readonly endpointId: string;
  /** Whether the receiver answered 2xx (the delivery succeeded). */
  readonly ok: boolean;
  /** The receiver's HTTP status, or null when no answer came (refused, timed out, network error). */
  readonly statusCode: number | null;
  /** Why the delivery failed (first line, at most 500 characters), or null on success. */
  readonly error: string | null;
  /** The delivery's state afterwards (null when another worker had already recorded it). */
  readonly status: WebhookDeliveryStatus | null;
  /** Whether this failure reached the consecutive-failure limit and disabled the endpoint. */
  readonly endpointDisabled: boolean;
}

/** The outbox dispatcher of one instance. */
export class WebhookDispatcher {
  readonly #o: WebhookDispatcherOptions;
  readonly #delays: readonly number[];
  readonly #disableAfter: number;
  readonly #timeoutMs: number;
  readonly #leaseMs: number;
  readonly #poll: PollingLoop<DispatchOutcome>;
  /** Set while stop() runs: the batch in progress starts no new delivery. */
  #stopping = false;

  /**
   * Applies the options' defaults (retries, disable limit, 10 s timeout, lease of at least twice the
   * timeout).
   */
  constructor(options: WebhookDispatcherOptions) {
    this.#o = options;
    this.#delays = options.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_MS;
    this.#disableAfter = options.disableAfter ?? WEBHOOK_DISABLE_AFTER_FAILURES;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#leaseMs = Math.max(options.leaseMs ?? 60_000, 2 * this.#timeoutMs);
    this.#poll = new PollingLoop({
      runOnce: () => this.runOnce(),
      batchSize: options.batchSize ?? 20,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      onError: (error) => options.onError?.(`webhooks: dispatch failed: ${describe(error)}`),
    });
  }

  /** Claims one batch of due deliveries and sends it; resolves when every outcome is recorded. */
  async runOnce(): Promise<DispatchOutcome[]> {
    const claimed = await this.#o.storage.webhooks.claimDue({
      limit: this.#o.batchSize ?? 20,
      leaseMs: this.#leaseMs,
    });
    const outcomes: DispatchOutcome[] = [];
    let next = 0;
    const worker = async () => {
      // A dispatcher asked to stop starts no new delivery.
      while (next < claimed.length && !this.#stopping) {
        outcomes.push(await this.#deliver(claimed[next++]));
      }
    };
    const workers = Math.max(1, Math.min(this.#o.concurrency ?? 8, claimed.length));
    await Promise.all(Array.from({ length: workers }, worker));
    // What was claimed but not started goes back to the queue, due now, for another instance.
    const unstarted = claimed.slice(next).map((c) => c.delivery.id);
    if (unstarted.length > 0) await this.#o.storage.webhooks.releaseClaims(unstarted);
    return outcomes;
  }

  /** Runs batches until none is due; returns every outcome. */
  drain(maxBatches = 1000): Promise<DispatchOutcome[]> {
    return this.#poll.drain(maxBatches);
  }

  /** Starts polling in the background (idempotent). */
  start(): void {
    this.#poll.start();
  }

  /** Asks a running dispatcher to poll now (new deliveries were queued). */
  wake(): void {
    this.#poll.wake();
  }

  /**
   * Stops polling: deliveries in flight finish and are recorded, and those of the batch not yet
   * started are handed back to the queue (due now) for another instance; resolves when done.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    try {
      await this.#poll.stop();
    } finally {
      this.#stopping = false;
    }
  }

  #deliver(claimed: ClaimedWebhookDelivery): Promise<DispatchOutcome> {
    const { delivery, endpoint } = claimed;
    // The receiver's host only: a URL's path or query may carry the receiver's own secret.
    let host = "";
    try {
      host = new URL(endpoint.url).hostname;
    } catch { /* refused below */ }
    return inSpan("svc.webhook.deliver", {
      kind: SpanKind.CLIENT,
      attributes: {
        "http.request.method": "POST",
        "server.address": host,
        "svc.webhook.endpoint_id": endpoint.id,
        "svc.webhook.delivery_id": delivery.id,
        "svc.event.kind": delivery.eventKind,
      },
    }, async (span) => {
      const outcome = await this.#deliverNow(claimed);
      if (outcome.statusCode !== null) span.setAttribute("http.response.status_code", outcome.statusCode);
      span.setAttribute("svc.webhook.outcome", outcome.ok ? "delivered" : "failed");
      if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR });
      return outcome;
    });
  }

  async #deliverNow({ delivery, endpoint }: ClaimedWebhookDelivery): Promise<DispatchOutcome> {
    const base = { deliveryId: delivery.id, endpointId: endpoint.id };
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      statusCode = await this.#send(delivery.id, delivery.eventKind, delivery.payload, endpoint);
      if (statusCode < 200 || statusCode > 299) error = `receiver answered ${statusCode}`;
    } catch (err) {
      // A runtime's own network error ("TypeError: fetch failed") reads as a reason, never raw.
      error = err instanceof OutboundError
        ? this.#describeOutbound(err)
        : `could not connect: ${connectReason(err)}`;
    }
    if (error === null) {
      const recorded = await this.#o.storage.webhooks.markSucceeded(delivery.id, statusCode);
      return {
        ...base,
        ok: true,
        statusCode,
        error,
        status: recorded?.status ?? null,
        endpointDisabled: false,
      };
    }
    const disabledEvents: SvcEvent[] = [];
    const record = (auditLocked: boolean) => async (tx: Storage) => {
      // Audit lock, then endpoint row: the order of admin mutations (see the module doc).
      if (auditLocked) await tx.adminAudit.lock(endpoint.realmId);
      const outcome = await tx.webhooks.markFailed(delivery.id, { error: error!, statusCode }, {
        retryDelaysMs: this.#delays,
        disableAfter: this.#disableAfter,
      });
      if (outcome.endpointDisabled) {
        // The endpoint row is locked and the audit lock is not: roll back, then again in order.
        if (!auditLocked) throw new AuditLockFirst();
        disabledEvents.length = 0;
        const event: SvcEvent = {
          kind: EVENT_KINDS.webhookEndpointDisabled,
          occurredAt: this.#o.clock.now(),
          realmId: endpoint.realmId,
          orgId: endpoint.orgId,
          userId: null,
          data: {
            endpointId: endpoint.id,
            url: urlWithoutSecrets(endpoint.url),
            consecutiveFailures: this.#disableAfter,
            lastError: error,
          },
        };
        await tx.adminAudit.append(endpoint.realmId, {
          action: "webhook.endpoint.disable",
          actorId: DISPATCHER_ACTOR_ID,
          actorKind: "System",
          target: endpoint.id,
          orgId: endpoint.orgId,
          before: { enabled: true },
          after: { enabled: false, reason: "consecutive_failures", lastError: error },
        });
        if (this.#o.publisher) await this.#o.publisher.record(tx, event);
        disabledEvents.push(event);
      }
      return outcome;
    };
    // Only a delivery's last attempt (its dead-letter) counts toward the limit.
    const lastAttempt = delivery.attempts > this.#delays.length;
    const mayDisable = lastAttempt && endpoint.enabled &&
      endpoint.consecutiveFailures + 1 >= this.#disableAfter;
    const outcome = await this.#o.storage.transaction(record(mayDisable)).catch((err) => {
      if (err instanceof AuditLockFirst) return this.#o.storage.transaction(record(true));
      throw err;
    });
    if (this.#o.publisher) this.#o.publisher.announce(disabledEvents);
    else for (const event of disabledEvents) this.#o.events?.emit(event);
    return {
      ...base,
      ok: false,
      statusCode,
      error,
      status: outcome.delivery?.status ?? null,
      endpointDisabled: outcome.endpointDisabled,
    };
  }

  /** The recorded error of a guard failure: refusals keep the receiver API's reasons. */
  #describeOutbound(err: OutboundError): string {
    const refusal = REFUSALS[err.code as OutboundErrorCode];
    if (refusal !== undefined) return `receiver refused: ${refusal}`;
    if (err.code === "outbound_timeout") return `timed out after ${this.#timeoutMs} ms`;
    if (err.code === "outbound_unreachable") return `could not connect: ${connectReason(err.cause)}`;
    if (err.code === "outbound_too_many_redirects") return "receiver redirected (redirects are not followed)";
    if (err.code === "outbound_response_too_large") return "receiver's answer is larger than allowed";
    return describe(err);
  }

  async #send(
    deliveryId: string,
    eventKind: string,
    payload: string,
    endpoint: ClaimedWebhookDelivery["endpoint"],
  ): Promise<number> {
    const now = this.#o.clock.now();
    const secrets = [endpoint.secret];
    if (
      endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null &&
      endpoint.previousSecretExpiresAt.getTime() > now
    ) secrets.push(endpoint.previousSecret);
    const signature = await signWebhookPayload(payload, secrets, Math.floor(now / 1000));
    // The guard refuses private receivers (after resolving the name), never follows a redirect
    // (a 3xx is a failed delivery) and bounds the exchange by the timeout.
    const response = await this.#o.outbound(endpoint.url, {
      method: "POST",
      body: payload,
      timeoutMs: this.#timeoutMs,
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "svc-webhooks/1",
        [SIGNATURE_HEADER]: signature,
        [EVENT_HEADER]: eventKind,
        [DELIVERY_HEADER]: deliveryId,
      },
    });
    await response.body?.cancel().catch(() => {});
    return response.status;
  }
}

/** Guard refusals by the reasons the receiver API reports (`webhook_receiver_refused`). */
const REFUSALS: Partial<Record<OutboundErrorCode, string>> = {
  outbound_invalid_url: "invalid_url",
  outbound_unsupported_scheme: "unsupported_scheme",
  outbound_credentials_in_url: "credentials_in_url",
  outbound_address_refused: "private_address",
  outbound_unresolvable: "unresolvable_host",
};

/**
 * Known connection failures, by the system error code or the runtime's wording (Node's `cause.code`,
 * Deno's and Bun's messages), as the reasons an admin reads. Anything else is "network error": the
 * runtime's text (addresses, internals) is never recorded.
 */
const CONNECT_REASONS: readonly (readonly [RegExp, string])[] = [
  [/ECONNREFUSED|connection refused/i, "connection refused"],
  [/ECONNRESET|connection reset|socket hang up|other side closed|UND_ERR_SOCKET/i, "connection reset"],
  [/ENOTFOUND|EAI_AGAIN|dns error|failed to lookup|name resolution/i, "host name does not resolve"],
  [/ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|timed out/i, "connection timed out"],
  [/EHOSTUNREACH|ENETUNREACH|no route to host|network is unreachable/i, "host unreachable"],
  [
    /CERT|UNABLE_TO_VERIFY|certificate|self[- ]signed|tls|ssl|handshake/i,
    "TLS handshake failed (certificate not accepted)",
  ],
];

/** The reason of a connection failure, from its error and causes (at most 4 deep). */
export function connectReason(error: unknown): string {
  const texts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    if (typeof current === "object") {
      const { code, message } = current as { code?: unknown; message?: unknown };
      if (typeof code === "string") texts.push(code);
      if (typeof message === "string") texts.push(message.slice(0, 500));
      current = (current as { cause?: unknown }).cause;
    } else {
      texts.push(String(current).slice(0, 500));
      break;
    }
  }
  const text = texts.join(" | ");
  for (const [pattern, reason] of CONNECT_REASONS) if (pattern.test(text)) return reason;
  return "network error";
}

function describe(error: unknown): string {
  const text = error instanceof Error
    ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`
    : String(error);
  return text.split("\n")[0].slice(0, 500);
}

/** A failure would disable its endpoint without holding the audit lock: it runs again, taking it first. */
class AuditLockFirst extends Error {
  constructor() {
    super("the disabling failure runs again with the realm's audit lock taken first");
  }
}

/**
 * An endpoint URL as events carry it: origin and path, without user info, query or fragment,
 * where receivers often put a token (`https://hooks.example/in?token=…`). Events reach other
 * endpoints' receivers and the in-process subscribers; the admin API keeps the whole URL.
 */
export function urlWithoutSecrets(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "";
  }
}
