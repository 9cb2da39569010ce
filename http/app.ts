/**
 * The svc Hono app: request ids, the one JSON error shape, health endpoints, and the route
 * modules other parts of svc install. Runtime-agnostic: serve `app.fetch` anywhere.
 *
 * @module
 */
import { Hono } from "hono";
import type { Clock } from "../core/clock.ts";
import type { SvcConfig } from "../core/config/mod.ts";
import type { RandomSource } from "../core/random.ts";
import { authenticate, type Authenticator } from "./auth/principal.ts";
import { errorHandler, notFoundHandler } from "./errors.ts";
import { requestId, type SvcEnv } from "./request-id.ts";
import { healthRoutes, type ReadinessCheck } from "./routes/health.ts";

export type { SvcEnv } from "./request-id.ts";
export type { ReadinessCheck } from "./routes/health.ts";

/** The app type routes are installed on. */
export type SvcApp = Hono<SvcEnv>;

/**
 * A route module: installs its routes on `app`, which is already mounted under
 * `config.server.pathBase` (so routes use paths such as `/auth/logout-all`).
 */
export type RouteInstaller = (app: SvcApp, deps: AppDeps) => void;

/** What the app is built from. */
export interface AppDeps {
  config: SvcConfig;
  /** Checks behind `GET /readyz`, each with a unique name (database, key ring…). */
  readinessChecks: ReadinessCheck[];
  clock: Clock;
  random: RandomSource;
  /** Resolves the caller of each request (bearer or cookie tokens); without one, every caller is anonymous. */
  authenticator?: Authenticator;
  /** Route modules, installed in order after the health routes. */
  routes?: RouteInstaller[];
  /** Where unexpected errors and failed readiness checks are reported (the server log). */
  logError?: (line: string) => void;
  /** Time limit of each readiness check in milliseconds (default 2000). */
  readinessTimeoutMs?: number;
}

/**
 * Builds the app. Every route, the health endpoints included, lives under
 * `config.server.pathBase`; anything else answers 404 `not_found`.
 *
 * @example
 * ```ts
 * const app = createApp({ config, readinessChecks: [], clock: systemClock, random: cryptoRandom });
 * await app.request("/healthz"); // 200 {"status":"ok"}
 * ```
 */
export function createApp(deps: AppDeps): SvcApp {
  const app = new Hono<SvcEnv>();
  app.use(requestId(deps.random));
  app.onError(errorHandler(deps.logError));
  app.notFound(notFoundHandler);
  app.use(authenticate(deps.authenticator));

  const pathBase = deps.config.server.pathBase;
  const mounted = pathBase === "" ? app : app.basePath(pathBase);
  healthRoutes(deps.readinessChecks, { timeoutMs: deps.readinessTimeoutMs, logError: deps.logError })(
    mounted,
  );
  for (const install of deps.routes ?? []) install(mounted, deps);
  return app;
}
