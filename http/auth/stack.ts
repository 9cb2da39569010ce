/**
 * Everything token-based, assembled from the configuration: the key ring, the typed token
 * service (with the verified-token cache), sessions and the ended-session set (fed through the
 * cache bus), the authenticator, the route modules (auth, profile, JWKS) and the key-ring
 * readiness check. `svc start`, tests and benchmarks build it the same way.
 *
 * @module
 */
import type { Clock } from "../../core/clock.ts";
import type { SvcConfig } from "../../core/config/mod.ts";
import type { EventSink } from "../../core/events/sink.ts";
import type { JwsSigner } from "../../core/keys/jws.ts";
import { KeyRing, KeyRingError } from "../../core/keys/ring.ts";
import type { RandomSource } from "../../core/random.ts";
import { endedSessionRetainMs, EndedSessions } from "../../core/sessions/ended.ts";
import { SessionService } from "../../core/sessions/service.ts";
import type { CacheBus } from "../../core/snapshots/bus.ts";
import { VerifiedTokenCache } from "../../core/tokens/cache.ts";
import { TokenService } from "../../core/tokens/service.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { ReadinessCheck, RouteInstaller } from "../app.ts";
import { cookieSettings } from "./cookies.ts";
import type { Authenticator } from "./principal.ts";
import { tokenAuthenticator } from "./token-authenticator.ts";
import { authRoutes } from "../routes/auth.ts";
import { jwksRoutes } from "../routes/jwks.ts";
import { profileRoutes } from "../routes/profile.ts";
import { DpopVerifier } from "./dpop.ts";

/** What the auth stack is built from. */
export interface AuthStackOptions {
  /** The validated configuration. */
  config: SvcConfig;
  /** The stores. */
  storage: Storage;
  /** The source of the current time. */
  clock: Clock;
  /** The source of random bytes. */
  random: RandomSource;
  /** Where sign-in, refresh and logout events go. */
  events: EventSink;
  /** Entries of the verified-token cache (default 10 000; 0 disables it). */
  verifiedTokenCacheEntries?: number;
  /** A key ring built beforehand (for example to create keys before listening); default: a new one. */
  keys?: KeyRing;
  /** The new key ring's faster RS256 signer (the runtime adapter's), when `keys` is not given. */
  jwsSigner?: JwsSigner;
  /** The realm the readiness check covers; default: the default realm. */
  readinessRealmId?: () => Promise<string | null>;
  /** The cache bus shared with the other instances; without one, session ends stay on this instance. */
  bus?: CacheBus;
  /** Bound of the ended-session set (default 100 000). */
  endedSessionsMax?: number;
  /** An ended-session set built (and started) beforehand; default: a new one over `bus`. */
  endedSessions?: EndedSessions;
}

/** The assembled auth stack. */
export interface AuthStack {
  /** The per-realm signing keys. */
  readonly keys: KeyRing;
  /** Minting and verification of every svc JWT. */
  readonly tokens: TokenService;
  /** Sign-in, refresh rotation, organization switch and logout. */
  readonly sessions: SessionService;
  /** The verified-token cache, when enabled. */
  readonly cache: VerifiedTokenCache | undefined;
  /** Sessions ended within the last access-token lifetime, on every instance. */
  readonly endedSessions: EndedSessions;
  /** Resolves the caller of a request (bearer, API key, service account, cookies). */
  readonly authenticator: Authenticator;
  /** DPoP proofs of svc's own API (RFC 9449): used jtis in storage, nonces when required. */
  readonly dpop: DpopVerifier;
  /** Auth, profile and JWKS routes. */
  readonly routes: RouteInstaller[];
  /** `key_ring`: the default realm has a usable primary key. */
  readonly readinessCheck: ReadinessCheck;
  /** Creates a primary key for every realm that has none. */
  ensureKeys(): Promise<number>;
  /** Subscribes the ended-session set to the bus and preloads recent ends (before serving). */
  start(): Promise<void>;
  /** Unsubscribes from the bus. */
  stop(): Promise<void>;
}

/**
 * Builds the auth stack.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   createApp,
 *   createAuthStack,
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   InProcessCacheBus,
 *   loadConfig,
 *   nullEventSink as events,
 *   openDatabase,
 *   systemClock as clock,
 * } from "@svc/svc";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite, in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 *
 * const { config } = loadConfig({ env: {} });
 * const auth = createAuthStack({ config, storage, clock, random, events, bus: new InProcessCacheBus() });
 * assert.equal(await auth.ensureKeys(), 1); // the default realm's first signing key
 * await auth.start();
 * const app = createApp({
 *   config,
 *   readinessChecks: [auth.readinessCheck],
 *   clock,
 *   random,
 *   authenticator: auth.authenticator,
 *   routes: auth.routes,
 * });
 *
 * assert.equal((await app.request("/readyz")).status, 200);
 * const jwks = await (await app.request("/.well-known/jwks.json")).json();
 * assert.equal(jwks.keys.length, 1);
 *
 * await auth.stop();
 * await database.close();
 * ```
 */
export function createAuthStack(options: AuthStackOptions): AuthStack {
  const { config, storage, clock, random, events } = options;
  const issuer = config.server.baseUrl;
  const keys = options.keys ?? new KeyRing({
    store: storage.signingKeys,
    clock,
    random,
    overlapMs: config.tokens.signingKeyOverlapSeconds * 1000,
    signer: options.jwsSigner,
  });
  const cacheEntries = options.verifiedTokenCacheEntries ?? 10_000;
  const cache = cacheEntries > 0 ? new VerifiedTokenCache(clock, { maxEntries: cacheEntries }) : undefined;
  const tokens = new TokenService({
    keys,
    clock,
    random,
    issuer,
    consumed: storage.consumedTokens,
    cache,
    ttlSeconds: {
      "at+svc": config.tokens.accessTokenTtlSeconds,
      "mfa+svc": config.tokens.mfaTokenTtlSeconds,
    },
  });
  const endedSessions = options.endedSessions ?? new EndedSessions({
    clock,
    retainMs: endedSessionRetainMs(config.tokens.accessTokenTtlSeconds),
    maxEntries: options.endedSessionsMax,
    bus: options.bus,
    source: storage.sessions,
  });
  const sessions = new SessionService({
    storage,
    tokens,
    events,
    clock,
    random,
    idleTimeoutMs: config.sessions.idleTimeoutSeconds * 1000,
    absoluteTimeoutMs: config.sessions.absoluteTimeoutSeconds * 1000,
    refreshTokenTtlMs: config.tokens.refreshTokenTtlSeconds * 1000,
    refreshGraceSeconds: config.tokens.refreshGraceSeconds,
    ended: endedSessions,
  });
  const cookies = cookieSettings(config);
  const dpop = new DpopVerifier({
    store: storage.dpop,
    secrets: storage.serverSecrets,
    clock,
    random,
    nonceRequired: config.dpop.nonceRequired,
    proofMaxAgeSeconds: config.dpop.proofMaxAgeSeconds,
  });
  const dpopEdge = { verifier: dpop, baseUrl: config.server.baseUrl };
  const readinessRealm = options.readinessRealmId ??
    (async () => (await storage.realms.getDefault())?.id ?? null);
  return {
    keys,
    tokens,
    sessions,
    cache,
    endedSessions,
    dpop,
    authenticator: tokenAuthenticator({ tokens, storage, clock, endedSessions, dpop: dpopEdge }),
    routes: [
      authRoutes({
        sessions,
        cookies,
        random,
        refreshTokenTtlSeconds: config.tokens.refreshTokenTtlSeconds,
        dpop: dpopEdge,
      }),
      profileRoutes({ sessions, storage, cookies }),
      jwksRoutes({ keys, storage }),
    ],
    readinessCheck: {
      name: "key_ring",
      async check() {
        const realmId = await readinessRealm();
        if (realmId === null) throw new KeyRingError("no default realm");
        await keys.check(realmId);
      },
    },
    async ensureKeys() {
      let created = 0;
      for (const realm of await storage.realms.list()) {
        if (await storage.signingKeys.getPrimary(realm.id) !== null) continue;
        await keys.ensurePrimary(realm.id);
        created++;
      }
      return created;
    },
    start: () => endedSessions.start(),
    stop: () => endedSessions.stop(),
  };
}
