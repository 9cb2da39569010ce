/**
 * Mail delivery (issue 14): the outbox is a durable queue, and a {@link MailDeliveryWorker}
 * drains it through a {@link MailRelay} (SMTP in production, the server log in development).
 *
 * A worker claims due messages with `FOR UPDATE SKIP LOCKED` and a lease (storage
 * `claimDue`), so any number of instances share one outbox and each message is handed to the
 * relay by one of them. A relay failure schedules the next attempt from the retry delays (the
 * clock is passed in), past the last one the message is dead-lettered; a relay that is down
 * therefore loses no mail, and the message goes out once it is back. A worker that dies after the
 * relay accepted a message and before recording it leaves the message claimed until its lease
 * ends, and it is sent again then (at least once at the edge); the lease is longer than any relay
 * timeout so that a slow send is never claimed twice meanwhile.
 *
 * @module
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { Clock } from "../clock.ts";
import { PollingLoop } from "../polling-loop.ts";
import { inSpan } from "../tracing.ts";
import {
  MAIL_RETRY_DELAYS_MS,
  type MailDeliveryStatus,
  type MailOutboxStore,
  type OutboxMessage,
} from "../storage/mail-outbox.ts";

/** Something that hands a stored message on (an SMTP server, the server log). */
export interface MailRelay {
  /** What the relay is, for logs: `smtp://host:port`, `log`. */
  readonly name: string;
  /** Resolves once the message is accepted; rejects with a one-line reason otherwise. */
  deliver(message: OutboxMessage): Promise<void>;
  /** Releases connections (pools). */
  close?(): Promise<void>;
}

/** What a {@link MailDeliveryWorker} is built from. */
export interface MailDeliveryWorkerOptions {
  readonly store: MailOutboxStore;
  readonly relay: MailRelay;
  readonly clock: Clock;
  /** Delays before the 1st, 2nd… retry; past the last, dead-letter (default {@link MAIL_RETRY_DELAYS_MS}). */
  readonly retryDelaysMs?: readonly number[];
  /** How long a claimed message stays invisible to other workers (default 120 s; keep it above the relay timeout). */
  readonly leaseMs?: number;
  /** Messages claimed per batch (default 10). */
  readonly batchSize?: number;
  /** Pause between polls when nothing is due, in real milliseconds (default 1000). */
  readonly pollIntervalMs?: number;
  /** Where failures go (the server log): one line, never a message body. */
  readonly onError?: (line: string) => void;
}

/** What happened to one claimed message. */
export interface MailDeliveryOutcome {
  readonly id: string;
  readonly ok: boolean;
  /** The message's state afterwards (null when it was no longer deliverable when recorded). */
  readonly status: MailDeliveryStatus | null;
  readonly error: string | null;
}

/** The delivery worker of one instance: polls the outbox and relays what is due. */
export class MailDeliveryWorker {
  readonly #o: MailDeliveryWorkerOptions;
  readonly #poll: PollingLoop<MailDeliveryOutcome>;

  constructor(options: MailDeliveryWorkerOptions) {
    this.#o = options;
    this.#poll = new PollingLoop({
      runOnce: () => this.runOnce(),
      batchSize: options.batchSize ?? 10,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      onError: (error) => options.onError?.(`mail: delivery failed: ${describe(error)}`),
    });
  }

  /** The relay this worker delivers through. */
  get relay(): MailRelay {
    return this.#o.relay;
  }

  /** Claims one batch of due messages and relays them one by one; resolves once each outcome is recorded. */
  async runOnce(): Promise<MailDeliveryOutcome[]> {
    const claimed = await this.#o.store.claimDue({
      limit: this.#o.batchSize ?? 10,
      leaseMs: this.#o.leaseMs ?? 120_000,
    });
    const outcomes: MailDeliveryOutcome[] = [];
    for (const message of claimed) outcomes.push(await this.#deliver(message));
    return outcomes;
  }

  /** Runs batches until none is due (or `maxBatches`); returns every outcome. */
  drain(maxBatches = 1000): Promise<MailDeliveryOutcome[]> {
    return this.#poll.drain(maxBatches);
  }

  /** Starts polling in the background (idempotent). */
  start(): void {
    this.#poll.start();
  }

  /** Asks a running worker to poll now (a message was queued). */
  wake(): void {
    this.#poll.wake();
  }

  /** Stops polling; resolves once the batch in progress is recorded, then closes the relay. */
  async stop(): Promise<void> {
    await this.#poll.stop();
    await this.#o.relay.close?.();
  }

  #deliver(message: OutboxMessage): Promise<MailDeliveryOutcome> {
    return inSpan("svc.mail.deliver", {
      kind: SpanKind.CLIENT,
      attributes: {
        "svc.mail.kind": message.kind,
        "svc.mail.message_id": message.id,
        "svc.mail.relay": this.#o.relay.name,
        "svc.mail.attempt": message.attempts,
      },
    }, async (span) => {
      const outcome = await this.#deliverNow(message);
      span.setAttribute("svc.mail.outcome", outcome.ok ? "sent" : outcome.status ?? "failed");
      if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR });
      return outcome;
    });
  }

  async #deliverNow(message: OutboxMessage): Promise<MailDeliveryOutcome> {
    let error: string | null = null;
    try {
      await this.#o.relay.deliver(message);
    } catch (err) {
      error = describe(err);
    }
    if (error === null) {
      const recorded = await this.#o.store.markDelivered(message.id);
      return { id: message.id, ok: true, status: recorded ? "sent" : null, error };
    }
    const status = await this.#o.store.markDeliveryFailed(message.id, error, {
      retryDelaysMs: this.#o.retryDelaysMs ?? MAIL_RETRY_DELAYS_MS,
    });
    this.#o.onError?.(
      `mail: ${message.kind} message ${message.id} not delivered through ${this.#o.relay.name} (attempt ${message.attempts}): ${error}; ${
        status === "dead_letter" ? "gave up (dead letter)" : "will retry"
      }`,
    );
    return { id: message.id, ok: false, status, error };
  }
}

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0].slice(0, 300);
}
