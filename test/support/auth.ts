/**
 * An auth test bed: one embedded database, the storage, the auth stack and the Hono app
 * (auth, profile, JWKS and authz routes) over a ManualClock, plus helpers to sign users in
 * (until the login endpoints exist) and to forge tokens with the realm's real key.
 */
import { checkedSink } from "./events.ts";
import { SignJWT } from "jose";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig, type SvcConfig } from "../../core/config/mod.ts";
import { toBase64Url, utf8 } from "../../core/encoding.ts";
import type { SvcEvent } from "../../core/events/sink.ts";
import { type RandomSource, seededRandom } from "../../core/random.ts";
import type { IssuedTokens, SignInInput } from "../../core/sessions/service.ts";
import { InProcessCacheBus } from "../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../core/snapshots/service.ts";
import { createApp, type SvcApp } from "../../http/app.ts";
import { type AuthStack, createAuthStack } from "../../http/auth/stack.ts";
import { authzRoutes } from "../../http/routes/authz.ts";
import type { SvcDatabase } from "../../storage/open.ts";
import { createSqlStorage, type Storage } from "../../storage/storage.ts";
import { createSqlSubjectGrantSource } from "../../storage/sql/subject-grants.ts";
import { freshEmbedded } from "./db.ts";
import { seeder } from "./seed.ts";

/** The start of every test clock. */
export const T0 = Date.UTC(2026, 0, 1);

/** One app over shared storage. */
export interface AuthApp {
  readonly config: SvcConfig;
  readonly auth: AuthStack;
  readonly app: SvcApp;
  readonly snapshots: SubjectSnapshots;
}

/** The test bed. */
export interface AuthBed extends AuthApp {
  readonly database: SvcDatabase;
  readonly storage: Storage;
  readonly clock: ManualClock;
  readonly random: RandomSource;
  readonly events: SvcEvent[];
  readonly seed: ReturnType<typeof seeder>;
  /** Another app (another config) over the same storage, clock and events. */
  appWith(env: Record<string, string>, options?: { cacheEntries?: number }): AuthApp;
  /** Signs a user in (test stand-in for the login endpoints). */
  signIn(input: Partial<SignInInput> & { realmId: string; userId: string }): Promise<IssuedTokens>;
  /** A realm with a user, default-flagged when asked. */
  realmWithUser(options?: { isDefault?: boolean }): Promise<{ realmId: string; userId: string }>;
  close(): Promise<void>;
}

/** Builds the test bed on a fresh PGlite. */
export async function authBed(env: Record<string, string> = {}): Promise<AuthBed> {
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const random = seededRandom(42);
  const storage = createSqlStorage(database, { clock, random });
  const events: SvcEvent[] = [];
  const sink = checkedSink((event) => void events.push(event));
  const started: SubjectSnapshots[] = [];

  const appWith = (appEnv: Record<string, string>, options: { cacheEntries?: number } = {}): AuthApp => {
    const config = loadConfig({ env: appEnv }).config;
    const auth = createAuthStack({
      config,
      storage,
      clock,
      random,
      events: sink,
      verifiedTokenCacheEntries: options.cacheEntries,
    });
    const snapshots = new SubjectSnapshots({
      source: createSqlSubjectGrantSource(database.db),
      bus: new InProcessCacheBus(),
      events: sink,
      clock,
      ttlMs: 60_000,
      maxEntries: 1000,
    });
    started.push(snapshots);
    const app = createApp({
      config,
      readinessChecks: [auth.readinessCheck],
      clock,
      random,
      authenticator: auth.authenticator,
      routes: [...auth.routes, authzRoutes(snapshots)],
    });
    return { config, auth, app, snapshots };
  };
  const main = appWith(env);
  const seed = seeder(database.db);
  return {
    ...main,
    database,
    storage,
    clock,
    random,
    events,
    seed,
    appWith,
    signIn: (input) => main.auth.sessions.signIn({ mfa: "Password", ...input }),
    async realmWithUser(options = {}) {
      const realmId = options.isDefault
        ? (await storage.realms.create({ name: "default", displayName: "Default", isDefault: true })).id
        : await seed.realm();
      return { realmId, userId: await seed.user(realmId) };
    },
    async close() {
      for (const s of started) await s.stop();
      await database.close();
    },
  };
}

/** Headers presenting a bearer token. */
export function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

/** Base64url of a JSON value. */
export function segment(value: unknown): string {
  return toBase64Url(utf8(JSON.stringify(value)));
}

/** Signs any header and payload with the realm's current primary key (a forger holding the key). */
export async function signWithRealmKey(
  auth: AuthStack,
  realmId: string,
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const key = await auth.keys.signingKey(realmId);
  return await new SignJWT(payload)
    .setProtectedHeader({ alg: "RS256", typ: "at+svc", kid: key.kid, ...header } as { alg: string })
    .sign(key.privateKey);
}
