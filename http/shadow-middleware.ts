/**
 * Shadow mode in one line for a Hono host (issue 15): {@link shadowAuthz} wraps the host's legacy
 * authorization check. The legacy decision is enforced unchanged (a refusal answers 403 as
 * before); on the side, svc is asked the same question and records an agreement or divergence
 * (`POST /svc-admin/authz/shadow`), without delaying the request and without ever changing its
 * outcome: a failure to record goes to `onError`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Context, Hono } from "hono";
 * import { httpShadowRecorder, shadowAuthz, type ShadowComparison, type ShadowOutcome } from "@svc/svc";
 *
 * // The host's own check, unchanged: here only the billing role reads invoices.
 * const legacyCanReadInvoices = (c: Context) => Promise.resolve(c.req.header("X-Role") === "billing");
 * // Stands in for svc's `POST /svc-admin/authz/shadow` (leave out `fetch` to reach the real one),
 * // answering as svc does when its policy grants the permission.
 * const svc = async (_url: string | URL | Request, init?: RequestInit) => {
 *   const comparison: ShadowComparison = JSON.parse(String(init?.body));
 *   const legacyDecision = comparison.legacyDecision;
 *   return Response.json({ legacyDecision, svcDecision: "Allowed", agreed: legacyDecision });
 * };
 *
 * const recorded = Promise.withResolvers<ShadowOutcome | null>();
 * const app = new Hono();
 * app.use(
 *   "/api/invoices/*",
 *   shadowAuthz({
 *     legacy: (c) => legacyCanReadInvoices(c),
 *     permission: "billing:global:read",
 *     subject: (c) => ({ userId: c.req.header("X-User-Id") ?? "" }),
 *     recorder: httpShadowRecorder({ baseUrl: "https://id.example.com", token: "shadow-token", fetch: svc }),
 *     onOutcome: recorded.resolve,
 *   }),
 * );
 * app.get("/api/invoices/:id", (c) => c.json({ id: c.req.param("id") }));
 *
 * const res = await app.request("/api/invoices/42", { headers: { "X-User-Id": "a-user-id" } });
 * assert.equal(res.status, 403); // the legacy refusal stands…
 * assert.deepEqual(await recorded.promise, { legacyDecision: false, svcDecision: "Allowed", agreed: false });
 * // …and svc recorded the divergence.
 * ```
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { ShadowOutcome, ShadowResource } from "../core/imports/shadow.ts";

/** One comparison as a host sends it. */
export interface ShadowComparison {
  /** The svc user the check is about. */
  readonly userId: string;
  /** The organization context of the check, or null/absent for the realm. */
  readonly orgId?: string | null;
  /** The svc permission id the legacy check corresponds to (`service:scope:action`). */
  readonly permission: string;
  /** The resource the check concerns, or null/absent for none. */
  readonly resource?: ShadowResource | null;
  /** Context attributes for conditions, or null/absent for none. */
  readonly context?: Record<string, unknown> | null;
  /** What the legacy check decided: true allowed, false refused. */
  readonly legacyDecision: boolean;
}

/** Where comparisons go: svc over HTTP ({@link httpShadowRecorder}) or anything with the same shape. */
export interface ShadowSink {
  /** Records one comparison; resolves to its outcome, or null when svc does not know the user. */
  compare(comparison: ShadowComparison): Promise<ShadowOutcome | null>;
}

/** Sends comparisons to svc's `POST /svc-admin/authz/shadow` with a bearer token (`svc:global:shadow-record`). */
export function httpShadowRecorder(options: {
  readonly baseUrl: string;
  readonly token: string;
  readonly fetch?: typeof fetch;
}): ShadowSink {
  const doFetch = options.fetch ?? fetch;
  const url = new URL("svc-admin/authz/shadow", options.baseUrl.replace(/\/?$/, "/"));
  return {
    async compare(comparison) {
      const res = await doFetch(url, {
        method: "POST",
        headers: { Authorization: `Bearer ${options.token}`, "Content-Type": "application/json" },
        body: JSON.stringify(comparison),
      });
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      if (!res.ok) throw new Error(`svc answered ${res.status} to a shadow comparison`);
      return await res.json() as ShadowOutcome;
    },
  };
}

/** Options of {@link shadowAuthz}. */
export interface ShadowAuthzOptions<C extends Context = Context> {
  /** The host's legacy check: true allows. Its decision is the one enforced. */
  legacy(c: C): boolean | Promise<boolean>;
  /** The svc permission the legacy check corresponds to. */
  readonly permission: string | ((c: C) => string);
  /** Who is asking, as an svc user (null: nothing to compare, e.g. anonymous). */
  subject(c: C): { userId: string; orgId?: string | null } | null;
  /** The resource of the request, for svc's check. */
  resource?(c: C): ShadowResource | null;
  /** Where the comparisons go (for example {@link httpShadowRecorder}). */
  readonly recorder: ShadowSink;
  /** What a refused request answers (default 403 `{"error":"forbidden"}`). */
  refuse?(c: C): Response | Promise<Response>;
  /** Told of each outcome (tests, metrics). */
  onOutcome?(outcome: ShadowOutcome | null): void;
  /** Told when a comparison could not be recorded (the request is not affected). */
  onError?(error: unknown): void;
}

/** The middleware: enforces the legacy decision, compares with svc on the side. */
export function shadowAuthz<C extends Context = Context>(options: ShadowAuthzOptions<C>): MiddlewareHandler {
  return async (c, next) => {
    const ctx = c as C;
    const allowed = await options.legacy(ctx);
    const subject = options.subject(ctx);
    if (subject !== null) {
      const permission = typeof options.permission === "string"
        ? options.permission
        : options.permission(ctx);
      const comparison: ShadowComparison = {
        userId: subject.userId,
        orgId: subject.orgId ?? null,
        permission,
        resource: options.resource?.(ctx) ?? null,
        legacyDecision: allowed,
      };
      const pending = options.recorder.compare(comparison).then(
        (outcome) => options.onOutcome?.(outcome),
        (error) => options.onError?.(error),
      );
      // Never delay the request; keep the comparison alive on runtimes that end work after the answer.
      try {
        c.executionCtx.waitUntil(pending);
      } catch {
        // No execution context (Deno, Node, Bun): the promise runs on its own.
      }
    }
    if (!allowed) return options.refuse ? await options.refuse(ctx) : c.json({ error: "forbidden" }, 403);
    await next();
  };
}
