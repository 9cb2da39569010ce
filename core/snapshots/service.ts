/**
 * Subject snapshots per (user, organization): built from storage, cached in a bounded
 * TTL + LRU cache, and evicted through the cache bus on every instance. Explanations
 * (`fresh`) always rebuild from storage and never touch the cache.
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import type { EventSink } from "../events/sink.ts";
import type { SubjectGrantSource } from "../storage/subject-grants.ts";
import { buildSnapshot, type BuiltSnapshot } from "./build.ts";
import type { CacheBus, CacheInvalidation } from "./bus.ts";
import { TtlLruCache } from "./cache.ts";

/** The event emitted when a snapshot build skips invalid grant rows. */
export const INVALID_GRANTS_EVENT = "authz.invalid_grants_skipped";

/** What {@link SubjectSnapshots} is built from. */
export interface SubjectSnapshotsOptions {
  /** Where a user's grants are read to build a snapshot. */
  source: SubjectGrantSource;
  /** Carries invalidations between instances. */
  bus: CacheBus;
  /** Receives {@link INVALID_GRANTS_EVENT}. */
  events: EventSink;
  /** Decides when cached snapshots expire. */
  clock: Clock;
  /** Lifetime of a cached snapshot in milliseconds (0 disables the cache). */
  ttlMs: number;
  /** Snapshots kept at most (0 disables the cache). */
  maxEntries: number;
}

/**
 * The snapshot provider of one svc instance.
 *
 * @example
 * ```ts
 * import {
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   InProcessCacheBus,
 *   nullEventSink as events,
 *   openDatabase,
 *   SubjectSnapshots,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const org = await storage.organizations.create({ realmId: realm.id, name: "acme", displayName: "Acme" });
 * const user = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 * await storage.organizations.addMember(org.id, user.id);
 *
 * const source = storage.subjectGrants;
 * const bus = new InProcessCacheBus(); // instances sharing a Postgres server: a NotificationCacheBus
 * const snapshots = new SubjectSnapshots({ source, bus, events, clock, ttlMs: 60_000, maxEntries: 10_000 });
 * await snapshots.start();
 * const built = await snapshots.get(user.id, org.id); // built from storage, then cached
 * built?.isOrgMember; // true
 * await snapshots.invalidateUser(user.id); // evicts on every instance sharing the bus
 * await snapshots.stop();
 * await database.close();
 * ```
 */
export class SubjectSnapshots {
  readonly #options: SubjectSnapshotsOptions;
  readonly #cache: TtlLruCache<string, BuiltSnapshot>;
  /** Bumped on every invalidation: a build that started before one is not cached. */
  #generation = 0;
  #hits = 0;
  #misses = 0;
  #unsubscribe: (() => Promise<void>) | null = null;

  /** The provider over `options`, with an empty cache; call `start` to follow the bus. */
  constructor(options: SubjectSnapshotsOptions) {
    this.#options = options;
    this.#cache = new TtlLruCache(options.clock, { ttlMs: options.ttlMs, maxEntries: options.maxEntries });
  }

  /** Subscribes to the cache bus. */
  async start(): Promise<void> {
    if (this.#unsubscribe !== null) return;
    this.#unsubscribe = await this.#options.bus.subscribe((message) => this.#apply(message));
  }

  /** Unsubscribes from the cache bus. */
  async stop(): Promise<void> {
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = null;
    if (unsubscribe !== null) await unsubscribe();
  }

  /** The number of cached snapshots. */
  get cachedCount(): number {
    return this.#cache.size;
  }

  /** Lookups answered from the cache (hits) and built from storage (misses) since start, for metrics. */
  get lookups(): { readonly hits: number; readonly misses: number } {
    return { hits: this.#hits, misses: this.#misses };
  }

  /** The snapshot of `userId` (a user or a service account) in `orgId`, cached while live; null for an unknown id. */
  async get(userId: string, orgId: string | null): Promise<BuiltSnapshot | null> {
    const key = cacheKey(userId, orgId);
    const cached = this.#cache.get(key);
    if (cached !== undefined) {
      this.#hits++;
      return cached;
    }
    this.#misses++;
    const generation = this.#generation;
    const built = await this.#build(userId, orgId);
    if (built !== null && generation === this.#generation) this.#cache.set(key, built);
    return built;
  }

  /** A snapshot freshly built from storage; the cache is neither read nor written. */
  fresh(userId: string, orgId: string | null): Promise<BuiltSnapshot | null> {
    return this.#build(userId, orgId);
  }

  /** Evicts one user's snapshots here and on every instance sharing the bus. */
  async invalidateUser(userId: string): Promise<void> {
    const message: CacheInvalidation = { scope: "user", userId };
    this.#apply(message);
    await this.#options.bus.publish(message);
  }

  /** Evicts every snapshot here and on every instance (after a role or group change). */
  async invalidateAll(): Promise<void> {
    const message: CacheInvalidation = { scope: "all" };
    this.#apply(message);
    await this.#options.bus.publish(message);
  }

  #apply(message: CacheInvalidation): void {
    // Ended sessions change no grant.
    if (message.scope === "sessions") return;
    this.#generation++;
    if (message.scope === "all") this.#cache.clear();
    else {
      const prefix = `${message.userId}|`;
      this.#cache.deleteWhere((key) => key.startsWith(prefix));
    }
  }

  async #build(userId: string, orgId: string | null): Promise<BuiltSnapshot | null> {
    const { source, clock, events } = this.#options;
    const rows = await source.loadSubject(userId, orgId);
    if (rows === null) return null;
    const built = buildSnapshot(rows, orgId, clock.now());
    if (built.skipped.length > 0) {
      events.emit({
        kind: INVALID_GRANTS_EVENT,
        occurredAt: built.builtAt,
        realmId: built.realmId,
        orgId,
        userId,
        data: { skipped: built.skipped },
      });
    }
    return built;
  }
}

function cacheKey(userId: string, orgId: string | null): string {
  return `${userId}|${orgId ?? ""}`;
}
