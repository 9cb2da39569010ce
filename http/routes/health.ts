/**
 * Health endpoints: `GET /healthz` (liveness: the process answers) and `GET /readyz`
 * (readiness: every critical dependency check passes within its time limit). A check declared
 * non-critical (`critical: false`, such as an overdue break-glass drill unless configured
 * otherwise) is run and reported in the body like the others, marked `"critical": false`, but
 * its failure leaves the status 200.
 *
 * `/readyz` is unauthenticated, so by default it answers the overall status and the names of
 * its checks only; each check's result (and a failure's reason, such as an overdue break-glass
 * drill) is for callers {@link HealthOptions.canReadDetails} admits (the metrics token or an
 * administrator's token, as the app assembles it).
 *
 * @module
 */
import type { Context, Hono } from "hono";
import * as v from "valibot";
import { SvcError } from "../../core/errors.ts";
import type { OperationDoc } from "../openapi/operation.ts";
import type { SvcEnv } from "../request-id.ts";
import type { ReadinessCheck } from "../app-deps.ts";

export type { ReadinessCheck } from "../app-deps.ts";

/** Result of one check in the `/readyz` answer (`critical: false` marks a check that never fails readiness). */
export type CheckResult =
  & ({ status: "ok" } | { status: "fail"; error: string })
  & { critical?: false };

/** Options of the health routes. */
export interface HealthOptions {
  /** Time limit of each readiness check in milliseconds (default 2000). */
  timeoutMs?: number;
  /** Where failed checks are reported with their full error (the answer only carries a short message). */
  logError?: (line: string) => void;
  /**
   * Whether the caller may read each check's result; absent or false: the answer holds the
   * status and the check names only.
   */
  canReadDetails?: (c: Context<SvcEnv>) => Promise<boolean>;
}

const MAX_ERROR_LENGTH = 200;

/**
 * Runs every check concurrently, each within `timeoutMs`. The error of a failed check is
 * public (readiness is unauthenticated), so it is the message of a `SvcError` (svc's own,
 * non-secret by convention) or a generic text; the full error goes to `logError`.
 */
export async function runReadinessChecks(
  checks: readonly ReadinessCheck[],
  options: HealthOptions = {},
): Promise<{ ready: boolean; checks: Record<string, CheckResult> }> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const results = await Promise.all(checks.map(async (c): Promise<[string, CheckResult]> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new SvcError("timeout", `timed out after ${timeoutMs} ms`, 503)),
        timeoutMs,
      );
    });
    const marker = c.critical === false ? { critical: false as const } : {};
    try {
      await Promise.race([Promise.resolve().then(() => c.check()), timeout]);
      return [c.name, { status: "ok", ...marker }];
    } catch (err) {
      options.logError?.(`readiness check ${c.name} failed: ${describe(err)}`);
      const message = err instanceof SvcError ? err.message : "check failed";
      return [c.name, { status: "fail", error: message.slice(0, MAX_ERROR_LENGTH), ...marker }];
    } finally {
      clearTimeout(timer);
    }
  }));
  return {
    ready: results.every(([, r]) => r.status === "ok" || r.critical === false),
    checks: Object.fromEntries(results),
  };
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause === undefined ? err.message : `${err.message} (${describe(err.cause)})`;
}

const CheckResultSchema = v.union([
  v.object({ status: v.literal("ok") }),
  v.object({
    status: v.literal("fail"),
    error: v.pipe(v.string(), v.description("A short, non-secret reason.")),
  }),
]);

/** The answer of `GET /readyz` to a caller allowed the details: each check's result. */
export const ReadinessSchema = v.pipe(
  v.object({
    status: v.picklist(["ready", "not_ready"]),
    checks: v.pipe(v.record(v.string(), CheckResultSchema), v.description("Each dependency check by name.")),
  }),
  v.title("Readiness"),
);

/** The answer of `GET /readyz` to anyone else: the status and the names of the checks. */
export const PublicReadinessSchema = v.pipe(
  v.object({
    status: v.picklist(["ready", "not_ready"]),
    checks: v.pipe(v.array(v.string()), v.description("The names of the checks run.")),
  }),
  v.title("PublicReadiness"),
);

const ReadinessAnswerSchema = v.union([ReadinessSchema, PublicReadinessSchema]);

/** The operations of the health routes. */
export const HEALTH_OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/healthz",
    summary: "Liveness: the process answers",
    tags: ["Health"],
    auth: "public",
    responses: { 200: { description: "Alive", body: v.object({ status: v.literal("ok") }) } },
  },
  {
    method: "GET",
    path: "/readyz",
    summary:
      "Readiness: every dependency check passes within its time limit; each check's result only with the metrics token or an administrator's token",
    tags: ["Health"],
    auth: "public",
    responses: {
      200: { description: "Ready", body: ReadinessAnswerSchema },
      503: {
        description: "Not ready (with the details, the failing checks say why)",
        body: ReadinessAnswerSchema,
      },
    },
  },
];

/** Installs `GET /healthz` and `GET /readyz` ({@link HEALTH_OPERATIONS}). Check names must be unique. */
export function healthRoutes(
  checks: readonly ReadinessCheck[],
  options: HealthOptions = {},
): (app: Hono<SvcEnv>) => void {
  const names = checks.map((c) => c.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate !== undefined) throw new Error(`two readiness checks are named ${duplicate}`);
  return (app) => {
    app.get("/healthz", (c) => {
      c.header("Cache-Control", "no-store");
      return c.json({ status: "ok" });
    });
    app.get("/readyz", async (c) => {
      const result = await runReadinessChecks(checks, options);
      const details = await options.canReadDetails?.(c) ?? false;
      c.header("Cache-Control", "no-store");
      const status = result.ready ? "ready" : "not_ready";
      return c.json({ status, checks: details ? result.checks : names }, result.ready ? 200 : 503);
    });
  };
}
