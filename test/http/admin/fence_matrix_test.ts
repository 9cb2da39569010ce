/**
 * The fence matrix of the admin API: for every `/svc-admin` route registered on the full app
 * (`svcRoutes` and the built-in plugins' routes; the realm administrator is also granted the
 * plugins' permissions, which `svc:*:*` does not cover), with a fresh target each time,
 *
 * - no token: 401; a user without permissions: 403;
 * - an administrator of another organization: 404 (the target is invisible) or 403 (a
 *   global-only route); an administrator of the target's organization: the success status, or 403
 *   for a global-only route; the realm administrator: the success status;
 * - a successful mutation appends exactly one audit chain entry, a refusal or a read none, and
 *   the chain verifies at the end.
 *
 * A route without a case fails the test, so a new route cannot skip its fence or its entry.
 */
import { strict as assert } from "node:assert";
import type { AdminCaller } from "../../support/admin.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { ADMIN_CASES } from "./cases.ts";
import { isEmbeddedAppRoute } from "../../../http/svc-routes.ts";

Deno.test("admin API fence matrix: every /svc-admin route, every caller, one audit entry per mutation", async (t) => {
  const plugins = builtinPlugins();
  const plugged = await pluginBed(plugins);
  const admin = plugged.admin;
  try {
    const seed = seeder(admin.bed.database.db);
    const pluginAdmin = await seed.role(
      admin.realmId,
      "plugin-admin",
      plugins.flatMap((plugin) =>
        (plugin.permissions ?? []).map((permission) => ({ pattern: permission.id }))
      ),
    );
    await seed.assign(admin.realmId, pluginAdmin, { kind: "User", id: admin.users.global });
    await admin.bed.snapshots.invalidateAll();
    const registered = [
      ...new Set(
        plugged.app.routes
          // The embedded page apps (the console at /svc-admin/ui) are static and public by design.
          .filter((r) =>
            r.method !== "ALL" && r.path.startsWith("/svc-admin/") &&
            !isEmbeddedAppRoute(admin.bed.config, r.path)
          )
          .map((r) => `${r.method} ${r.path}`),
      ),
    ].sort();
    const cases = new Map(ADMIN_CASES.map((c) => [c.route, c]));
    await t.step("every registered /svc-admin route has a case, and every case a route", () => {
      assert.equal(cases.size, ADMIN_CASES.length, "one case per route");
      assert.deepEqual(registered.filter((route) => !cases.has(route)), [], "routes without a case: add one");
      assert.deepEqual([...cases.keys()].filter((route) => !registered.includes(route)), [], "stale cases");
    });

    for (const route of registered) {
      const row = cases.get(route);
      if (row === undefined) continue;
      const method = route.slice(0, route.indexOf(" "));
      const expected: [AdminCaller | null, number][] = [
        [null, 401],
        ["plain", 403],
        ["orgB", row.otherOrg],
        ["orgA", row.orgAdmin ? row.status : 403],
        ["global", row.status],
      ];
      await t.step(`${route}`, async () => {
        for (const [as, status] of expected) {
          const request = await row.prepare(admin, as);
          const before = await admin.chainLength();
          const res = await plugged.request(method, request.path, {
            as,
            body: request.body,
            headers: request.headers,
          });
          const text = await res.text();
          assert.equal(res.status, status, `${as ?? "anonymous"}: ${text}`);
          const added = (await admin.chainLength()) - before;
          const mutation: boolean = row.mutates && status < 300;
          assert.equal(added, mutation ? 1 : 0, `${as ?? "anonymous"}: audit entries added`);
        }
      });
    }
    await t.step("the chain verifies", async () => {
      const report = await admin.bed.storage.adminAudit.verify(admin.realmId);
      assert.equal(report.valid, true, JSON.stringify(report.firstBad));
    });
  } finally {
    await plugged.close();
  }
});
