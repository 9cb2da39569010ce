/**
 * Publishing an event durably: inside the transaction of the change that caused it, the
 * event is queued in the webhook outbox (one delivery per subscribed endpoint) and, when it
 * concerns a user and its kind belongs to the user-visible ledger, appended to the security
 * events. Only after that transaction commits is it handed to the in-process sink, so
 * subscribers never see an event that was rolled back, and webhooks never lose one that was
 * committed.
 *
 * The webhook body is the JSON of {@link WebhookEventBody}; it is stored once and signed as is
 * on every attempt.
 *
 * @module
 */
import { type RandomSource, randomUuid } from "../random.ts";
import type {
  EventDeliveries,
  NewSecurityEvent,
  SignInWrites,
  SignInWritten,
} from "../storage/security-events.ts";
import type { Storage } from "../storage/storage.ts";
import { isSecurityLedgerKind } from "./catalog.ts";
import type { EventSink, SvcEvent } from "./sink.ts";

/** The JSON body of every webhook delivery. */
export interface WebhookEventBody {
  /** The event's id (the same in every endpoint's delivery of it). */
  readonly id: string;
  /** The event kind, also sent as `X-Svc-Event`. */
  readonly kind: string;
  /** ISO 8601 time of the event. */
  readonly occurredAt: string;
  /** The realm the event belongs to, or null. */
  readonly realmId: string | null;
  /** The organization the event belongs to, or null. */
  readonly orgId: string | null;
  /** The user the event concerns, or null. */
  readonly userId: string | null;
  /** Kind-specific data, as emitted; never secrets. */
  readonly data: Readonly<Record<string, unknown>>;
}

/** Where a security event was observed from (stored in the user-visible ledger only). */
export interface EventOrigin {
  /** The client IP address the event was observed from, when known. */
  readonly ipAddress?: string | null;
  /** A human description of the client device (user agent summary), when known. */
  readonly deviceDescription?: string | null;
}

/** The webhook body of an event. */
export function webhookBody(id: string, event: SvcEvent): string {
  const body: WebhookEventBody = {
    id,
    kind: event.kind,
    occurredAt: new Date(event.occurredAt).toISOString(),
    realmId: event.realmId ?? null,
    orgId: event.orgId ?? null,
    userId: event.userId ?? null,
    data: event.data,
  };
  return JSON.stringify(body);
}

/** What {@link EventPublisher} needs. */
export interface EventPublisherOptions {
  /** The default storage whose transactions record events (outbox rows and ledger entries). */
  readonly storage: Storage;
  /** The in-process sink (an `EventHub`), told after commit. */
  readonly sink: EventSink;
  /** Source of the random event ids (UUIDs) in webhook bodies. */
  readonly random: RandomSource;
  /** Told when a fire-and-forget {@link EventPublisher.emit} could not be stored. */
  readonly onError?: (error: unknown, event: SvcEvent) => void;
  /** Told after commit that deliveries were queued (for example, to wake the dispatcher). */
  readonly onQueued?: () => void;
}

/** The emit function handed to the work of {@link EventPublisher.transaction}. */
export type EmitInTransaction = (event: SvcEvent, origin?: EventOrigin) => Promise<void>;

/** Durable event publishing over the outbox and the security-event ledger. */
export class EventPublisher implements EventSink {
  readonly #options: EventPublisherOptions;
  /** The {@link emit}s still being recorded. */
  readonly #inFlight = new Set<Promise<void>>();

  /** Wires the publisher to its storage, sink and hooks. */
  constructor(options: EventPublisherOptions) {
    this.#options = options;
  }

  /**
   * Writes the event's outbox rows and ledger entry through `tx` (a storage bound to the
   * caller's transaction). The caller hands the event to {@link announce} after commit.
   */
  async record(tx: Storage, event: SvcEvent, origin?: EventOrigin): Promise<number> {
    return await tx.securityEvents.record(ledgerEntry(event, origin), this.#deliveries(event));
  }

  /**
   * Records one event on its own, in one statement (issue 29): the ledger entry and a delivery
   * for each webhook endpoint subscribed to it at that moment (as {@link transaction} would
   * write them, atomically, without opening a transaction). An endpoint created concurrently is
   * missed, as it was inside a transaction, which reads committed rows. Then the event is
   * announced. Rejects when the event could not be recorded.
   */
  async publish(
    event: SvcEvent,
    origin?: EventOrigin,
    storage: Storage = this.#options.storage,
  ): Promise<void> {
    const queued = await this.record(storage, event, origin);
    this.announce([event], queued > 0);
  }

  /**
   * {@link publish} of a sign-in's event with the sign-in's other writes (the account's abuse
   * counter cleared, the device recorded) in the same statement (issue 29); then announced.
   */
  async publishSignIn(
    event: SvcEvent,
    origin: EventOrigin | undefined,
    writes: SignInWrites,
  ): Promise<SignInWritten> {
    const written = await this.#options.storage.securityEvents.recordSignIn(
      ledgerEntry(event, origin),
      this.#deliveries(event),
      writes,
    );
    this.announce([event], written.queued > 0);
    return written;
  }

  #deliveries(event: SvcEvent): EventDeliveries | null {
    if (!event.realmId) return null;
    const random = this.#options.random;
    return {
      realmId: event.realmId,
      orgId: event.orgId ?? null,
      eventKind: event.kind,
      payload: webhookBody(randomUuid(random), event),
      idSeed: randomUuid(random),
    };
  }

  /** Events recorded by their change's own statement: announced (see {@link EventSink.recorded}). */
  recorded(events: readonly SvcEvent[], queued: boolean): void {
    this.announce(events, queued);
  }

  /** Hands committed events to the in-process sink and wakes the dispatcher. */
  announce(events: readonly SvcEvent[], queued = true): void {
    for (const event of events) this.#options.sink.emit(event);
    if (queued && events.length > 0) this.#options.onQueued?.();
  }

  /**
   * Runs `work` in one transaction with an `emit` that records events in it; once it commits,
   * the events go to the in-process sink. If `work` throws, nothing is recorded or announced.
   */
  async transaction<T>(
    work: (tx: Storage, emit: EmitInTransaction) => Promise<T>,
    storage: Storage = this.#options.storage,
  ): Promise<T> {
    const emitted: SvcEvent[] = [];
    let queued = 0;
    const result = await storage.transaction((tx) =>
      work(tx, async (event, origin) => {
        queued += await this.record(tx, event, origin);
        emitted.push(event);
      })
    );
    this.announce(emitted, queued > 0);
    return result;
  }

  /**
   * Fire-and-forget publishing for emitters without a transaction of their own (the
   * {@link EventSink} interface): the event is recorded in its own transaction, then
   * announced. A storage failure goes to `onError`; the event still reaches the sink.
   */
  emit(event: SvcEvent): void {
    const work = this.publish(event).catch((error) => {
      this.#options.onError?.(error, event);
      this.announce([event], false);
    }).finally(() => this.#inFlight.delete(work));
    this.#inFlight.add(work);
  }

  /**
   * Resolves once every {@link emit} made so far has been recorded (or reported to `onError`):
   * a shutdown awaits it before it closes the storage, so that no event still on its way to the
   * database is lost, or runs into a closing pool.
   */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }
}

/** The event's ledger entry when it concerns a user and its kind is a ledger kind; else null. */
function ledgerEntry(event: SvcEvent, origin?: EventOrigin): NewSecurityEvent | null {
  if (!event.userId || !isSecurityLedgerKind(event.kind)) return null;
  return {
    realmId: event.realmId ?? null,
    userId: event.userId,
    orgId: event.orgId ?? null,
    kind: event.kind,
    data: event.data,
    ipAddress: origin?.ipAddress ?? null,
    deviceDescription: origin?.deviceDescription ?? null,
    occurredAt: new Date(event.occurredAt),
  };
}
