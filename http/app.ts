/**
 * The svc Hono app: request ids, the one JSON error shape, security headers, CORS, the request
 * body limit, the U+0000 guard of URLs, health endpoints, and the route modules other parts of
 * svc install. Runtime-agnostic: serve `app.fetch` anywhere.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { getPath as honoPath } from "hono/utils/url";
import { impersonationGuard } from "./auth/impersonation-guard.ts";
import { authenticate } from "./auth/principal.ts";
import { defaultBodyLimit } from "./body-limit.ts";
import { cors } from "./cors.ts";
import { errorHandler, notFoundHandler } from "./errors.ts";
import { requestId, type SvcEnv } from "./request-id.ts";
import { HEALTH_OPERATIONS, healthRoutes } from "./routes/health.ts";
import { operationsOf } from "./openapi/operation.ts";
import { installOpenApiRoutes, OPENAPI_OPERATIONS } from "./openapi/routes.ts";
import { SVC_VERSION } from "../core/version.ts";
import { securityHeaders } from "./security-headers.ts";
import { jsonLimits, rejectNulInUrl } from "./validate.ts";
import { metricsRoutes, presentsBearer, requestMetrics } from "./metrics.ts";
import { requestLog } from "./request-log.ts";
import { requestTracing } from "./tracing.ts";

export type { SvcEnv } from "./request-id.ts";
export type { AppDeps, ReadinessCheck, RouteInstaller, SvcApp } from "./app-deps.ts";
import type { AppDeps, SvcApp } from "./app-deps.ts";
import { publicRoot } from "../core/net/public-url.ts";

/**
 * Builds the app. Every route, the health endpoints included, lives under
 * `config.server.pathBase`; anything else answers 404 `not_found`. The OpenAPI document of every
 * documented operation (health, the route modules of `deps.routes`, and its own) is served at
 * `/openapi.json`, with the browsable reference at `/openapi`. Every answer carries the
 * security headers (and CORS headers for a listed origin); a body over `config.server.maxBodyBytes`
 * answers 413 unless its route declares its own `bodyLimit`; `%00` in the URL answers 400; a JSON
 * body nested deeper than `config.server.maxJsonDepth` or with an object or array wider than
 * `config.server.maxJsonMembers` answers 400 `invalid_request` (`parseBody`).
 *
 * @example
 * ```ts
 * import { createApp, cryptoRandom, loadConfig, systemClock } from "@svc/svc";
 *
 * const { config } = loadConfig({ env: {} });
 * const app = createApp({ config, readinessChecks: [], clock: systemClock, random: cryptoRandom });
 * await app.request("/healthz"); // 200 {"status":"ok"}
 * ```
 */
export function createApp(deps: AppDeps): SvcApp {
  const app = new Hono<SvcEnv>({ getPath: routedPath(deps.config.server.pathBase) });
  if (deps.metrics) app.use(requestMetrics(deps.metrics.recorder, deps.metrics.now));
  app.use(requestId(deps.random));
  if (deps.logRequest) app.use(requestLog(deps.logRequest, () => performance.now()));
  app.use(requestTracing(deps.tracer));
  app.onError(errorHandler(deps.logError));
  app.notFound(notFoundHandler);
  app.use(securityHeaders({ baseUrl: deps.config.server.baseUrl }));
  app.use(cors(deps.config.server.corsOrigins));
  app.use(defaultBodyLimit(deps.config.server.maxBodyBytes));
  app.use(rejectNulInUrl());
  app.use(jsonLimits({
    maxDepth: deps.config.server.maxJsonDepth,
    maxMembers: deps.config.server.maxJsonMembers,
  }));
  app.use(authenticate(deps.authenticator));
  // Under impersonation: no admin mutation, no change of the target's credentials or email.
  app.use(impersonationGuard({
    pathBase: deps.config.server.pathBase,
    adminMounts: [deps.config.webhooks.mountPath],
  }));

  const pathBase = deps.config.server.pathBase;
  const mounted = pathBase === "" ? app : app.basePath(pathBase);
  healthRoutes(deps.readinessChecks, {
    timeoutMs: deps.readinessTimeoutMs,
    logError: deps.logError,
    canReadDetails: readinessReaders(deps.config.metrics.token, deps.readinessDetails),
  })(mounted);
  const routes = [
    ...(deps.metrics ? [metricsRoutes(deps.metrics.recorder, deps.config.metrics.token)] : []),
    ...(deps.routes ?? []),
  ];
  installOpenApiRoutes(
    mounted,
    {
      title: "svc",
      version: SVC_VERSION,
      description: "Identity and authorization server.",
      serverUrl: publicRoot(deps.config.server),
    },
    () => [
      ...HEALTH_OPERATIONS,
      ...OPENAPI_OPERATIONS,
      ...routes.flatMap((install) => operationsOf(install, deps)),
    ],
  );
  for (const install of routes) install(mounted, deps);
  return app;
}

/**
 * The path a request is routed by. Under a path base, `/.well-known/{name}{pathBase}` is routed as
 * `{pathBase}/.well-known/{name}`: the location RFC 8414 (3.1) and RFC 9728 (3.1) give the
 * metadata of an issuer or resource whose URL has a path (the name inserted between the host and
 * the path), beside the OIDC Discovery form (`{issuer}/.well-known/openid-configuration`). Only
 * documents svc serves under the base answer; anything else stays 404. A proxy must forward those
 * root paths for them to be reached.
 */
function routedPath(pathBase: string): (request: Request) => string {
  const base = pathBase.replace(/\/+$/, "");
  // Without a path base, Hono's own routing path as it is.
  if (base === "") return honoPath;
  const inserted = new RegExp(
    `^/\\.well-known/([a-z0-9._-]+)${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
  );
  return (request) => {
    const path = honoPath(request);
    const match = inserted.exec(path);
    return match === null ? path : `${base}/.well-known/${match[1]}`;
  };
}

/** Who reads the readiness details: the bearer of the metrics token, or whom `others` admits. */
function readinessReaders(
  metricsToken: string | undefined,
  others: AppDeps["readinessDetails"],
): (c: Context<SvcEnv>) => Promise<boolean> {
  return async (c) => {
    if (metricsToken !== undefined && presentsBearer(c, metricsToken)) return true;
    return others === undefined ? false : await others(c);
  };
}
