/**
 * Shadow mode (issue 15): each comparison records one agreement or divergence and answers the
 * legacy decision unchanged; a divergence emits `authz.shadow_divergence` with both decisions and
 * the explain trace; the report is filterable by time window and permission and is ready for
 * cutover only with zero divergences over a non-empty sample. The Hono middleware wraps a legacy
 * check in one line and never changes what the host enforces.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { httpShadowRecorder, shadowAuthz } from "../../../http/shadow-middleware.ts";
import type { ShadowOutcome } from "../../../core/imports/shadow.ts";
import { adminBed } from "../../support/admin.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("shadow mode: agreements, divergences with the trace, the report, the middleware", async (t) => {
  const bed = await adminBed();
  const seed = seeder(bed.bed.database.db);
  const reader = await seed.user(bed.realmId);
  const role = await seed.role(bed.realmId, "docs-reader", [{ pattern: "docs:global:read" }]);
  await seed.assign(bed.realmId, role, { kind: "User", id: reader });
  await bed.bed.snapshots.invalidateAll();
  const compare = async (body: Record<string, unknown>) => {
    const res = await bed.request("POST", "/svc-admin/authz/shadow", { body });
    assert.equal(res.status, 200, await res.clone().text());
    return await res.json();
  };
  const report = async (query = "") => {
    const res = await bed.request("GET", `/svc-admin/authz/shadow/report${query}`);
    assert.equal(res.status, 200);
    return await res.json();
  };
  try {
    await t.step("an empty sample is not ready for cutover", async () => {
      assert.deepEqual(await report(), { agreements: 0, divergences: 0, total: 0, readyForCutover: false });
    });

    await t.step("agreements answer the legacy decision and emit nothing", async () => {
      const before = bed.bed.events.length;
      assert.deepEqual(
        await compare({ userId: reader, permission: "docs:global:read", legacyDecision: true }),
        {
          legacyDecision: true,
          svcDecision: "Allowed",
          agreed: true,
        },
      );
      assert.deepEqual(
        await compare({ userId: reader, permission: "docs:global:write", legacyDecision: false }),
        { legacyDecision: false, svcDecision: "DeniedByDefault", agreed: true },
      );
      assert.equal(bed.bed.events.filter((e) => e.kind === "authz.shadow_divergence").length, 0);
      assert.equal(bed.bed.events.length, before);
      assert.deepEqual(await report(), { agreements: 2, divergences: 0, total: 2, readyForCutover: true });
    });

    await t.step(
      "a divergence answers the legacy decision unchanged and emits the event with the trace",
      async () => {
        bed.bed.clock.advance(300_000);
        const outcome = await compare({
          userId: reader,
          permission: "docs:global:write",
          resource: { ownerId: reader },
          legacyDecision: true,
        });
        assert.deepEqual(outcome, { legacyDecision: true, svcDecision: "DeniedByDefault", agreed: false });
        const events = bed.bed.events.filter((e) => e.kind === "authz.shadow_divergence");
        assert.equal(events.length, 1);
        const event = events[0];
        assert.equal(event.userId, reader);
        assert.equal(event.realmId, bed.realmId);
        assert.equal(event.data.legacyDecision, "Allowed");
        assert.equal(event.data.svcDecision, "DeniedByDefault");
        assert.deepEqual(event.data.trace, [
          {
            pattern: "docs:global:read",
            effect: "Allow",
            source: "role:docs-reader",
            outcome: "PatternMismatch",
          },
        ]);
        assert.deepEqual(await report(), { agreements: 2, divergences: 1, total: 3, readyForCutover: false });
      },
    );

    await t.step("the report filters by permission and time window", async () => {
      assert.deepEqual(await report("?permission=docs:global:read"), {
        agreements: 1,
        divergences: 0,
        total: 1,
        readyForCutover: true,
      });
      const cut = new Date(bed.bed.clock.now() - 150_000).toISOString();
      assert.deepEqual(await report(`?from=${cut}`), {
        agreements: 0,
        divergences: 1,
        total: 1,
        readyForCutover: false,
      });
      assert.deepEqual(await report(`?to=${cut}`), {
        agreements: 2,
        divergences: 0,
        total: 2,
        readyForCutover: true,
      });
      const res = await bed.request("GET", "/svc-admin/authz/shadow/report?from=yesterday");
      assert.equal(res.status, 400);
    });

    await t.step("refusals: unknown user 404, bad permission 400, bad body 400, org admin 403", async () => {
      let res = await bed.request("POST", "/svc-admin/authz/shadow", {
        body: { userId: crypto.randomUUID(), permission: "docs:global:read", legacyDecision: true },
      });
      assert.equal(res.status, 404);
      res = await bed.request("POST", "/svc-admin/authz/shadow", {
        body: { userId: reader, permission: "docs:*:read", legacyDecision: true },
      });
      assert.equal(res.status, 400);
      res = await bed.request("POST", "/svc-admin/authz/shadow", {
        body: { userId: reader, permission: "docs:global:read", legacyDecision: "yes" },
      });
      assert.equal(res.status, 400);
      res = await bed.request("POST", "/svc-admin/authz/shadow", {
        as: "orgA",
        body: { userId: reader, permission: "docs:global:read", legacyDecision: true },
      });
      assert.equal(res.status, 403);
    });

    await t.step(
      "the middleware enforces the legacy decision and records through svc's HTTP API",
      async () => {
        const outcomes: (ShadowOutcome | null)[] = [];
        const errors: unknown[] = [];
        let settle: () => void = () => {};
        const recorder = httpShadowRecorder({
          baseUrl: "http://svc.test",
          token: bed.tokens.global,
          fetch: ((url: URL, init: RequestInit) =>
            Promise.resolve(bed.app.request(url.pathname + url.search, init))) as unknown as typeof fetch,
        });
        let legacyAllows = false;
        const host = new Hono();
        host.use(
          "/docs/*",
          shadowAuthz({
            legacy: () => legacyAllows,
            permission: (c) => c.req.method === "GET" ? "docs:global:read" : "docs:global:write",
            subject: (c) => ({ userId: c.req.header("X-User") ?? "" }),
            recorder,
            onOutcome: (outcome) => {
              outcomes.push(outcome);
              settle();
            },
            onError: (error) => {
              errors.push(error);
              settle();
            },
          }),
        );
        host.get("/docs/1", (c) => c.text("the doc"));
        const call = async (allow: boolean) => {
          legacyAllows = allow;
          const done = new Promise<void>((resolve) => settle = resolve);
          const res = await host.request("/docs/1", { headers: { "X-User": reader } });
          await done;
          return res;
        };
        // The legacy check refuses where svc would allow: refused (legacy wins), divergence recorded.
        let res = await call(false);
        assert.equal(res.status, 403);
        assert.deepEqual(outcomes.at(-1), { legacyDecision: false, svcDecision: "Allowed", agreed: false });
        res = await call(true);
        assert.equal(res.status, 200);
        assert.equal(await res.text(), "the doc");
        assert.deepEqual(outcomes.at(-1), { legacyDecision: true, svcDecision: "Allowed", agreed: true });
        assert.deepEqual(errors, []);
        assert.equal((await report()).total, 5);
      },
    );
  } finally {
    await bed.close();
  }
});
