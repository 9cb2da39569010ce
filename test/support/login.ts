/**
 * A login test bed: one embedded database, the auth stack, the login stack (argon2id at its
 * cheapest allowed cost, hashing in-thread), an EventPublisher writing the security ledger, the
 * Hono app with the auth, authz, login, account and factor routes over a ManualClock, and
 * helpers to create users, call the endpoints from an IP and read the mail outbox.
 */
import { checkedSink } from "./events.ts";
import type { CaptchaProvider } from "../../core/abuse/captcha.ts";
import { ManualClock } from "../../core/clock.ts";
import { loadConfig, type SvcConfig } from "../../core/config/mod.ts";
import { EventPublisher } from "../../core/events/publisher.ts";
import type { SvcEvent } from "../../core/events/sink.ts";
import { type RandomSource, seededRandom } from "../../core/random.ts";
import type { PasswordHasher } from "../../core/passwords/hasher.ts";
import type { IpReputation } from "../../core/risk/providers.ts";
import { InProcessCacheBus } from "../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../core/snapshots/service.ts";
import { decodeBase32 } from "../../core/totp/base32.ts";
import { totpCode } from "../../core/totp/totp.ts";
import { createApp, type SvcApp } from "../../http/app.ts";
import { createLoginStack, type LoginStack } from "../../http/auth/login-stack.ts";
import { type AuthStack, createAuthStack } from "../../http/auth/stack.ts";
import type { JwsSigner } from "../../core/keys/jws.ts";
import { authzRoutes } from "../../http/routes/authz.ts";
import type { OutboxMessage } from "../../core/storage/mail-outbox.ts";
import type { SvcDatabase } from "../../storage/open.ts";
import { createSqlCounterStore } from "../../storage/sql/abuse-counters.ts";
import { createSqlStorage, type Storage } from "../../storage/storage.ts";
import { createSqlSubjectGrantSource } from "../../storage/sql/subject-grants.ts";
import { T0 } from "./auth.ts";
import { freshEmbedded, freshPostgres } from "./db.ts";

/** Cheapest argon2id the configuration allows, in-thread: fast tests where the cost does not matter. */
export const FAST_PASSWORD_ENV: Record<string, string> = {
  SVC_ARGON2_MEMORY_KIB: "8192",
  SVC_ARGON2_ITERATIONS: "1",
  SVC_PASSWORD_HASH_WORKERS: "0",
};

/** The test bed. */
export interface LoginBed {
  readonly database: SvcDatabase;
  readonly storage: Storage;
  readonly config: SvcConfig;
  readonly clock: ManualClock;
  readonly random: RandomSource;
  readonly events: SvcEvent[];
  readonly auth: AuthStack;
  readonly login: LoginStack;
  readonly snapshots: SubjectSnapshots;
  readonly app: SvcApp;
  readonly realmId: string;
  /** Creates an active user of the default realm with a password (argon2id), or with the given stored hash. */
  user(email: string, password: string | { algorithm: string; hash: string }): Promise<string>;
  /** POSTs JSON from `ip` (default 203.0.113.10). */
  post(
    path: string,
    body: unknown,
    options?: { ip?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  /** Requests with a bearer token. */
  get(path: string, token: string): Promise<Response>;
  /** The newest mail of a kind to an address, after background work settles. */
  mail(to: string, kind: string): Promise<OutboxMessage | null>;
  /** The `token` query parameter of the newest link mail of a kind. */
  mailedToken(to: string, kind: string): Promise<string>;
  /** The 6-digit code of the newest email OTP mail. */
  mailedCode(to: string): Promise<string>;
  /** The TOTP code of a base32 secret now. */
  totp(secret: string): string;
  /** Has {@link close} (and {@link settled}) wait for a publisher's fire-and-forget events. */
  settleOnClose(publisher: EventPublisher): void;
  /** Resolves once every fire-and-forget event of the bed's publishers so far is recorded and announced. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link loginBed}. */
export interface LoginBedOptions {
  reputation?: IpReputation;
  captcha?: CaptchaProvider | null;
  /** On a fresh Postgres schema with the SQL abuse counters (races), instead of PGlite and counters in memory. */
  postgres?: boolean;
  /** On this database (closed by `close()` too) instead of a fresh one. */
  database?: SvcDatabase;
  /** Use the SQL abuse counters of the database (default: in memory; always with `postgres`). */
  sqlCounters?: boolean;
  /** Where argon2id runs (default: in-thread, from `SVC_PASSWORD_HASH_WORKERS=0`). */
  hasher?: PasswordHasher;
  /** The key ring's faster RS256 signer (default: none, jose signs). */
  jwsSigner?: JwsSigner;
}

/** Builds the bed on a fresh PGlite (or a fresh Postgres schema, or `options.database`). */
export async function loginBed(
  env: Record<string, string> = {},
  options: LoginBedOptions = {},
): Promise<LoginBed> {
  const database = options.database ??
    (options.postgres ? await freshPostgres({ maxConnections: 20 }) : await freshEmbedded());
  const clock = new ManualClock(T0);
  const random = seededRandom(5);
  const storage = createSqlStorage(database, { clock, random });
  const events: SvcEvent[] = [];
  const sink = checkedSink((event) => void events.push(event));
  const publisher = new EventPublisher({ storage, sink, random });
  const publishers = [publisher];
  const config = loadConfig({ env: { ...FAST_PASSWORD_ENV, ...env } }).config;
  const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
  const auth = createAuthStack({
    config,
    storage,
    clock,
    random,
    events: publisher,
    jwsSigner: options.jwsSigner,
  });
  await auth.ensureKeys();
  const snapshots = new SubjectSnapshots({
    source: createSqlSubjectGrantSource(database.db),
    bus: new InProcessCacheBus(),
    events: sink,
    clock,
    ttlMs: 60_000,
    maxEntries: 1000,
  });
  const login = createLoginStack({
    config,
    storage,
    clock,
    random,
    auth,
    events: publisher,
    snapshots,
    reputation: options.reputation ?? null,
    captcha: options.captcha ?? null,
    hasher: options.hasher,
    counters: options.postgres || options.sqlCounters
      ? createSqlCounterStore(database.db, { clock })
      : undefined,
  });
  const app = createApp({
    config,
    readinessChecks: [],
    clock,
    random,
    authenticator: auth.authenticator,
    routes: [...auth.routes, authzRoutes(snapshots), ...login.routes],
    logError: (line) => console.error(line),
  });
  const mail = async (to: string, kind: string) => {
    await login.idle();
    return await storage.mailOutbox.latest({ to, kind });
  };
  return {
    database,
    storage,
    config,
    clock,
    random,
    events,
    auth,
    login,
    snapshots,
    app,
    realmId: realm.id,
    async user(email, password) {
      const user = await storage.users.create({ realmId: realm.id, email, emailVerified: true });
      const hash = typeof password === "string" ? await login.passwords.hash(password) : password;
      await storage.passwordCredentials.replace(user.id, hash);
      return user.id;
    },
    post(path, body, opts = {}) {
      return Promise.resolve(app.request(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...opts.headers },
        body: JSON.stringify(body),
      }, { clientAddress: opts.ip ?? "203.0.113.10" }));
    },
    get(path, token) {
      return Promise.resolve(app.request(path, { headers: { Authorization: `Bearer ${token}` } }));
    },
    mail,
    async mailedToken(to, kind) {
      const message = await mail(to, kind);
      if (message === null) throw new Error(`no ${kind} mail to ${to}`);
      const match = /[?&]token=([^\s"&<]+)/.exec(message.text);
      if (!match) throw new Error(`no token link in the ${kind} mail`);
      return decodeURIComponent(match[1]);
    },
    async mailedCode(to) {
      const message = await mail(to, "email_otp");
      const match = message && /^\s*(\d{6})\s*$/m.exec(message.text);
      if (!match) throw new Error(`no email OTP mail to ${to}`);
      return match[1];
    },
    totp: (secret) => totpCode(decodeBase32(secret), clock.now()),
    settleOnClose: (other) => void publishers.push(other),
    async settled() {
      await Promise.all(publishers.map((p) => p.settled()));
    },
    async close() {
      await login.close();
      await snapshots.stop();
      // An event emitted without await (an abuse block, say) must not meet a dropped schema.
      await Promise.all(publishers.map((p) => p.settled()));
      await database.close();
    },
  };
}
