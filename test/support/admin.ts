/**
 * An admin test bed: the full app (`svcRoutes`, what `svc start` serves) over a login bed, a
 * realm with two organizations and four callers:
 *
 * - `global`: the bootstrap administrator (`svc-admin`, every `svc:` permission);
 * - `orgA` / `orgB`: administrators of organization A / B (an org-level role granting `svc:org:*`
 *   in their organization, signed in to it);
 * - `plain`: a member of organization A without any permission.
 *
 * `request()` calls the app with a caller's bearer token; `chainLength()` counts the realm's
 * admin audit entries.
 */
import { checkedSink } from "./events.ts";
import { EventPublisher } from "../../core/events/publisher.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import { createApp, type SvcApp } from "../../http/app.ts";
import { createPasskeyRoutes } from "../../http/routes/passkeys.ts";
import { svcRoutes } from "../../http/svc-routes.ts";
import { type LoginBed, loginBed, type LoginBedOptions } from "./login.ts";
import { seeder } from "./seed.ts";

/** The bootstrap administrator of admin beds. */
export const ADMIN_ENV: Record<string, string> = {
  SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test",
  SVC_BOOTSTRAP_ADMIN_PASSWORD: "bootstrap secret",
};

/** The full app over a bed's stacks, as `svc start` assembles it. */
export function fullApp(bed: LoginBed, snapshots: SubjectSnapshots = bed.snapshots): SvcApp {
  const publisher = new EventPublisher({
    storage: bed.storage,
    sink: checkedSink((event) => void bed.events.push(event)),
    random: bed.random,
  });
  bed.settleOnClose(publisher);
  const passkeys = createPasskeyRoutes({
    config: bed.config,
    storage: bed.storage,
    clock: bed.clock,
    random: bed.random,
    events: publisher,
    auth: bed.auth,
  });
  return createApp({
    config: bed.config,
    readinessChecks: [],
    clock: bed.clock,
    random: bed.random,
    authenticator: bed.auth.authenticator,
    routes: svcRoutes({
      storage: bed.storage,
      snapshots,
      publisher,
      auth: bed.auth,
      login: bed.login,
      passkeys,
    }),
  });
}

/** The callers of an admin bed. */
export type AdminCaller = "global" | "orgA" | "orgB" | "plain";

/** The bed. */
export interface AdminBed {
  readonly bed: LoginBed;
  readonly app: SvcApp;
  readonly realmId: string;
  readonly orgA: string;
  readonly orgB: string;
  /** User ids of the callers. */
  readonly users: Readonly<Record<AdminCaller, string>>;
  /** Access tokens of the callers. */
  readonly tokens: Readonly<Record<AdminCaller, string>>;
  /**
   * Calls the app as `as` (no token when null); a body is sent as JSON. Headers are added to the
   * defaults (`Content-Type`, `Authorization`).
   */
  request(
    method: string,
    path: string,
    options?: { as?: AdminCaller | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  /** How many admin audit entries the realm's chain holds. */
  chainLength(): Promise<number>;
  close(): Promise<void>;
}

/** Builds an admin bed on a fresh PGlite (or Postgres with `options.postgres`). */
export async function adminBed(
  env: Record<string, string> = {},
  options: LoginBedOptions = {},
): Promise<AdminBed> {
  const bed = await loginBed({ ...ADMIN_ENV, ...env }, options);
  try {
    const app = fullApp(bed);
    const seed = seeder(bed.database.db);
    const realmId = bed.realmId;
    const global = (await bed.login.bootstrap(realmId))!.userId;
    const orgAAdmin = await seed.user(realmId);
    const orgBAdmin = await seed.user(realmId);
    const plain = await seed.user(realmId);
    const orgA = await seed.org(realmId, [orgAAdmin, plain]);
    const orgB = await seed.org(realmId, [orgBAdmin]);
    for (const [orgId, userId] of [[orgA, orgAAdmin], [orgB, orgBAdmin]]) {
      const role = await seed.role(
        realmId,
        `org-admin-${orgId.slice(0, 8)}`,
        [{ pattern: "svc:org:*" }],
        orgId,
      );
      await seed.assign(realmId, role, { kind: "User", id: userId }, orgId);
    }
    await bed.snapshots.invalidateAll();
    const sign = async (userId: string, orgId: string | null) =>
      (await bed.auth.sessions.signIn({ realmId, userId, orgId, mfa: "MultiFactor" })).tokens.accessToken;
    const users = { global, orgA: orgAAdmin, orgB: orgBAdmin, plain };
    const tokens = {
      global: await sign(global, null),
      orgA: await sign(orgAAdmin, orgA),
      orgB: await sign(orgBAdmin, orgB),
      plain: await sign(plain, orgA),
    };
    return {
      bed,
      app,
      realmId,
      orgA,
      orgB,
      users,
      tokens,
      request(method, path, options = {}) {
        const headers: Record<string, string> = { ...options.headers };
        const as = options.as === undefined ? "global" : options.as;
        if (as !== null) headers.Authorization = `Bearer ${tokens[as]}`;
        let body: string | undefined;
        if (options.body !== undefined) {
          headers["Content-Type"] ??= "application/json";
          body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
        }
        return Promise.resolve(app.request(path, { method, headers, body }));
      },
      async chainLength() {
        const row = await bed.database.db.selectFrom("admin_audit_entries")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("realm_id", "=", realmId)
          .executeTakeFirstOrThrow();
        return Number(row.n);
      },
      close: () => bed.close(),
    };
  } catch (err) {
    await bed.close();
    throw err;
  }
}
