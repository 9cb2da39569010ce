/**
 * The in-process event sink: svc emits typed events into it, and plugins and hosts
 * subscribe. Delivery to a subscriber never fails the emitter: a throwing subscriber is
 * reported through `onSubscriberError` and the others still run.
 *
 * @module
 */

/** One event as svc emits it. `kind` is a stable string (for example `login.succeeded`). */
export interface SvcEvent {
  /** The event kind. */
  readonly kind: string;
  /** When it happened (milliseconds since the Unix epoch, from the injected clock). */
  readonly occurredAt: number;
  /** The realm it belongs to, when known. */
  readonly realmId?: string | null;
  /** The organization it belongs to, when known. */
  readonly orgId?: string | null;
  /** The user it concerns, when known. */
  readonly userId?: string | null;
  /** Kind-specific data; never secrets. */
  readonly data: Readonly<Record<string, unknown>>;
}

/** Where events are emitted. */
export interface EventSink {
  /** Emits one event to every subscriber. */
  emit(event: SvcEvent): void;
  /**
   * Hands events that were already recorded durably, by the statement of the change that caused
   * them (a refresh grant's, `RefreshGrantGuard.event`), to the in-process subscribers without
   * recording them again; `queued`: webhook deliveries were queued. A sink without it records
   * nothing: `emit` is its equivalent.
   */
  recorded?(events: readonly SvcEvent[], queued: boolean): void;
}

/** A subscriber; it may be async, and its failures never reach the emitter. */
export type EventSubscriber = (event: SvcEvent) => void | Promise<void>;

/** An event sink that fans out to subscribers in process. */
export class EventHub implements EventSink {
  readonly #subscribers = new Set<EventSubscriber>();
  readonly #onSubscriberError: (error: unknown, event: SvcEvent) => void;

  /** `onSubscriberError` receives what a subscriber threw (default: ignored). */
  constructor(options: { onSubscriberError?: (error: unknown, event: SvcEvent) => void } = {}) {
    this.#onSubscriberError = options.onSubscriberError ?? (() => {});
  }

  /** Adds a subscriber; returns a function that removes it. */
  subscribe(subscriber: EventSubscriber): () => void {
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  /** Hands the event to every subscriber; a throwing or rejecting subscriber goes to `onSubscriberError`. */
  emit(event: SvcEvent): void {
    for (const subscriber of this.#subscribers) {
      try {
        const result = subscriber(event);
        if (result instanceof Promise) result.catch((error) => this.#onSubscriberError(error, event));
      } catch (error) {
        this.#onSubscriberError(error, event);
      }
    }
  }
}

/** A sink that drops everything. */
export const nullEventSink: EventSink = { emit: () => {} };
