/**
 * Recently ended sessions, so that access tokens stop with their session (issue 19 item 3).
 *
 * Access tokens are verified statelessly and live up to their `exp` (10 minutes by default).
 * When a session ends (logout, remote logout, logout-all, refresh reuse, password reset,
 * suspension, erasure), its id is kept here until the last access token minted on it has
 * expired (`endedAt` + access-token lifetime + a margin for clock skew and in-flight mints),
 * and the authenticator refuses every token whose `sid` is listed: a map lookup, no database
 * read per request.
 *
 * Every instance learns of an end through the cache bus (in process on PGlite, Postgres
 * `LISTEN/NOTIFY` between instances sharing a server). A new instance subscribes first and
 * then preloads the sessions whose `revoked_at` (the stored end time) falls inside the window,
 * so an end that happened before it started is known too.
 *
 * The set is bounded twice: entries leave once expired, and at most `maxEntries` are kept. When
 * more sessions end inside one window than that, the oldest entries are dropped and the set
 * reports `unknown` for tokens issued before the latest dropped end (plus the margin), until that
 * end leaves the window: the caller then asks storage (degraded, never unsafe).
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { isUuid } from "../ids.ts";
import { type CacheBus, type CacheInvalidation, MAX_SESSION_IDS_PER_MESSAGE } from "../snapshots/bus.ts";

/** A session that ended, and when (clock milliseconds). */
export interface EndedSession {
  /** The session id (a UUID). */
  readonly id: string;
  /** When the session ended, in clock milliseconds. */
  readonly endedAt: number;
}

/**
 * Told of the sessions that ended through this instance (after commit), for example to send
 * OIDC back-channel logout tokens. Called once per end, on the instance that ended it.
 */
export type SessionEndListener = (ended: readonly EndedSession[]) => Promise<void> | void;

/** Announces ended sessions to every instance (after the transaction that ended them committed). */
export interface SessionEndAnnouncer {
  /** Makes every instance refuse the access tokens of these sessions. */
  announce(ended: readonly EndedSession[]): Promise<void>;
  /**
   * Registers a listener awaited on every {@link announce} of this instance (not for ends learnt
   * from other instances); its failures never reach the caller. Returns its removal.
   */
  listen?(listener: SessionEndListener): () => void;
}

/** Where recently ended sessions are read at start (the sessions table's `revoked_at`). */
export interface EndedSessionSource {
  /** Sessions ended at or after `since`, most recent first, at most `limit`. */
  listEndedSince(since: Date, limit: number): Promise<EndedSession[]>;
}

/** What {@link EndedSessions} is built from. */
export interface EndedSessionsOptions {
  readonly clock: Clock;
  /** How long an id is kept after its end: the access-token lifetime plus {@link ENDED_SESSION_MARGIN_MS}. */
  readonly retainMs: number;
  /** Ids kept at most (default {@link DEFAULT_ENDED_SESSIONS_MAX}). */
  readonly maxEntries?: number;
  /** The bus shared with the other instances; without one, ends are known to this instance only. */
  readonly bus?: CacheBus;
  /** Preloaded at start. */
  readonly source?: EndedSessionSource;
}

/** Kept beyond the access-token lifetime: clock skew between instances and a mint racing the end. */
export const ENDED_SESSION_MARGIN_MS = 60_000;
/** How long ended sessions are kept when access tokens live `accessTokenTtlSeconds`. */
export function endedSessionRetainMs(accessTokenTtlSeconds: number): number {
  return accessTokenTtlSeconds * 1000 + ENDED_SESSION_MARGIN_MS;
}

/** Default bound of the set (about 10 MB at most). */
export const DEFAULT_ENDED_SESSIONS_MAX = 100_000;

/** What the set knows about a session: ended, not ended, or unknown (the set overflowed). */
export type SessionEndStatus = "ended" | "live" | "unknown";

/**
 * The ended-session set of one instance.
 *
 * @example
 * ```ts
 * import {
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   EndedSessions,
 *   InProcessCacheBus,
 *   openDatabase,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const bus = new InProcessCacheBus(); // instances sharing a Postgres server: a NotificationCacheBus
 * const ended = new EndedSessions({ clock, retainMs: (600 + 60) * 1000, bus, source: storage.sessions });
 * await ended.start(); // subscribes, then preloads the recent ends from storage
 *
 * const sid = crypto.randomUUID(); // an access token's `sid`
 * const issuedAt = clock.now(); // its `iat`, in milliseconds
 * await ended.announce([{ id: sid, endedAt: clock.now() }]); // every instance refuses its tokens
 * ended.status(sid, issuedAt); // "ended"
 * await ended.stop();
 * await database.close();
 * ```
 */
export class EndedSessions implements SessionEndAnnouncer {
  readonly #o: EndedSessionsOptions;
  readonly #max: number;
  /** id → forget-at (ms), in insertion order (roughly by end time). */
  readonly #entries = new Map<string, number>();
  /** Tokens issued at or before `#overflowEndedAt` are unknown while `now < #overflowUntil`. */
  #overflowEndedAt = -Infinity;
  #overflowUntil = -Infinity;
  #unsubscribe: (() => Promise<void>) | null = null;
  readonly #listeners = new Set<SessionEndListener>();

  /** The set of this instance; call `start` to subscribe and preload. */
  constructor(options: EndedSessionsOptions) {
    this.#o = options;
    this.#max = Math.max(1, options.maxEntries ?? DEFAULT_ENDED_SESSIONS_MAX);
  }

  /** Ids currently kept (expired ones included until the next sweep). */
  get size(): number {
    return this.#entries.size;
  }

  /** Subscribes to the bus, then preloads the ends inside the window from the source. */
  async start(): Promise<void> {
    const { bus, source, clock, retainMs } = this.#o;
    if (bus !== undefined && this.#unsubscribe === null) {
      this.#unsubscribe = await bus.subscribe((message) => this.#receive(message));
    }
    if (source !== undefined) {
      const since = new Date(clock.now() - retainMs);
      const loaded = await source.listEndedSince(since, this.#max + 1);
      // Most recent first: the ones beyond the bound are the oldest, recorded as overflow.
      this.record(loaded.slice().reverse());
    }
  }

  /** Unsubscribes from the bus. */
  async stop(): Promise<void> {
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = null;
    if (unsubscribe !== null) await unsubscribe();
  }

  /** Records ends here, sends them to every other instance on the bus, then tells the listeners. */
  async announce(ended: readonly EndedSession[]): Promise<void> {
    if (ended.length === 0) return;
    this.record(ended);
    const bus = this.#o.bus;
    if (bus !== undefined) {
      const endedAt = Math.max(...ended.map((e) => e.endedAt));
      const ids = ended.map((e) => e.id);
      for (let i = 0; i < ids.length; i += MAX_SESSION_IDS_PER_MESSAGE) {
        await bus.publish({
          scope: "sessions",
          sessionIds: ids.slice(i, i + MAX_SESSION_IDS_PER_MESSAGE),
          endedAt,
        });
      }
    }
    for (const listener of [...this.#listeners]) {
      try {
        await listener(ended);
      } catch {
        // A listener reports its own failures; the sessions have ended either way.
      }
    }
  }

  /** Registers a listener of the ends announced through this instance; returns its removal. */
  listen(listener: SessionEndListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Records ends on this instance only. */
  record(ended: readonly EndedSession[]): void {
    const now = this.#o.clock.now();
    this.#sweep(now);
    for (const { id, endedAt } of ended) {
      if (!isUuid(id)) continue;
      const key = id.toLowerCase();
      const until = endedAt + this.#o.retainMs;
      if (until <= now) continue;
      const known = this.#entries.get(key);
      if (known !== undefined && known >= until) continue;
      this.#entries.delete(key);
      this.#entries.set(key, until);
    }
    while (this.#entries.size > this.#max) this.#dropOne();
  }

  /**
   * Whether the session of a token issued at `issuedAt` (milliseconds) ended: `ended`, `live`, or
   * `unknown` when the set overflowed and may have dropped it (ask storage).
   */
  status(sessionId: string, issuedAt: number): SessionEndStatus {
    const now = this.#o.clock.now();
    const until = this.#entries.get(sessionId.toLowerCase());
    if (until !== undefined) {
      if (until > now) return "ended";
      this.#entries.delete(sessionId.toLowerCase());
    }
    if (now < this.#overflowUntil && issuedAt <= this.#overflowEndedAt) return "unknown";
    return "live";
  }

  #receive(message: CacheInvalidation): void {
    if (message.scope !== "sessions") return;
    this.record(message.sessionIds.map((id) => ({ id, endedAt: message.endedAt })));
  }

  /** Removes expired entries from the oldest on (the map is in insertion order, close to end order). */
  #sweep(now: number): void {
    for (const [id, until] of this.#entries) {
      if (until > now) break;
      this.#entries.delete(id);
    }
  }

  /** Drops the oldest entry, remembering that tokens issued before its end are now unknown. */
  #dropOne(): void {
    const oldest = this.#entries.entries().next();
    if (oldest.done) return;
    const [id, until] = oldest.value;
    this.#entries.delete(id);
    this.#overflowEndedAt = Math.max(
      this.#overflowEndedAt,
      until - this.#o.retainMs + ENDED_SESSION_MARGIN_MS,
    );
    this.#overflowUntil = Math.max(this.#overflowUntil, until);
  }
}
