/**
 * The cache bus: how one instance tells every instance to drop cached subject snapshots, and
 * which sessions ended (so that their access tokens are refused everywhere at once).
 * In process by default; over Postgres `LISTEN/NOTIFY` when instances share a Postgres
 * server, so that a role change or a logout on one instance reaches every other.
 *
 * @module
 */

/**
 * A message of the bus: evict one user's snapshots (every organization), evict everything, or
 * `sessions`: these sessions ended at `endedAt` (clock milliseconds); snapshots ignore it.
 */
export type CacheInvalidation =
  | { readonly scope: "user"; readonly userId: string }
  | { readonly scope: "all" }
  | { readonly scope: "sessions"; readonly sessionIds: readonly string[]; readonly endedAt: number };

/** Session ids per `sessions` message: keeps a payload far below Postgres' 8000-byte NOTIFY limit. */
export const MAX_SESSION_IDS_PER_MESSAGE = 100;

/** A publish-subscribe channel of invalidations. */
export interface CacheBus {
  /** Sends an invalidation to every subscriber (on every instance, for a shared bus). */
  publish(message: CacheInvalidation): Promise<void>;
  /** Subscribes; resolves once subscribed, to a function that unsubscribes. */
  subscribe(handler: (message: CacheInvalidation) => void): Promise<() => Promise<void>>;
}

/** The cache bus of a single instance. */
export class InProcessCacheBus implements CacheBus {
  readonly #handlers = new Set<(message: CacheInvalidation) => void>();

  /** Calls every handler subscribed on this instance, synchronously. */
  publish(message: CacheInvalidation): Promise<void> {
    for (const handler of this.#handlers) handler(message);
    return Promise.resolve();
  }

  /** Adds `handler`; resolves at once to a function that removes it. */
  subscribe(handler: (message: CacheInvalidation) => void): Promise<() => Promise<void>> {
    this.#handlers.add(handler);
    return Promise.resolve(() => {
      this.#handlers.delete(handler);
      return Promise.resolve();
    });
  }
}

/** The part of a notification channel (Postgres LISTEN/NOTIFY) the bus needs. */
export interface NotificationChannel {
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
}

/** The channel name svc uses for snapshot invalidations. */
export const SNAPSHOT_CHANNEL = "svc_authz_snapshots";

/**
 * A cache bus over a notification channel shared by every instance. Malformed payloads
 * (anything svc did not send) evict everything, which is always safe.
 */
export class NotificationCacheBus implements CacheBus {
  readonly #notifications: NotificationChannel;
  readonly #channel: string;

  /** A bus over `notifications`, on `channel` (default {@link SNAPSHOT_CHANNEL}). */
  constructor(notifications: NotificationChannel, channel: string = SNAPSHOT_CHANNEL) {
    this.#notifications = notifications;
    this.#channel = channel;
  }

  /** Sends `message` as JSON on the channel. */
  publish(message: CacheInvalidation): Promise<void> {
    return this.#notifications.notify(this.#channel, JSON.stringify(message));
  }

  /** Listens on the channel; each payload reaches `handler` decoded by {@link decodeInvalidation}. */
  subscribe(handler: (message: CacheInvalidation) => void): Promise<() => Promise<void>> {
    return this.#notifications.listen(this.#channel, (payload) => handler(decodeInvalidation(payload)));
  }
}

/** Reads a bus payload; anything unexpected becomes "evict everything". */
export function decodeInvalidation(payload: string): CacheInvalidation {
  try {
    const value = JSON.parse(payload);
    if (value?.scope === "user" && typeof value.userId === "string") {
      return { scope: "user", userId: value.userId };
    }
    if (
      value?.scope === "sessions" && Array.isArray(value.sessionIds) &&
      value.sessionIds.every((id: unknown) => typeof id === "string") && Number.isFinite(value.endedAt)
    ) {
      return { scope: "sessions", sessionIds: value.sessionIds, endedAt: value.endedAt };
    }
  } catch {
    // fall through
  }
  return { scope: "all" };
}
