/**
 * The admin audit chain over the real route list (`svcRoutes`, what `svc start` serves):
 *
 * - every mutating `/svc-admin` route registered on the app appends exactly one entry and the
 *   chain verifies afterwards; a route missing from the table below fails the test, so a new
 *   route cannot forget its entry;
 * - the actor of an entry is the true caller (spec 2.7): an API key, a service account, and an
 *   administrator impersonating a user each produce their own actor kind and ids.
 */
import { strict as assert } from "node:assert";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import { createServiceAccount } from "../../../core/credentials/service-accounts.ts";
import { WEBHOOKS_MANAGE_GLOBAL } from "../../../core/definitions/svc-permissions.ts";
import { toBase64, utf8 } from "../../../core/encoding.ts";
import { InProcessCacheBus } from "../../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../../core/snapshots/service.ts";
import { createSqlSubjectGrantSource } from "../../../storage/sql/subject-grants.ts";
import { ADMIN_ENV, fullApp } from "../../support/admin.ts";
import { loginBed } from "../../support/login.ts";
import { ADMIN_CASES } from "../admin/cases.ts";

/** A request of the walk: path parameters filled in, the JSON body, the status it must get. */
interface WalkRequest {
  readonly path: string;
  readonly body?: unknown;
  readonly status: number;
}

/** One row of the walk: how to call the route (after preparing what it needs) and whether it mutates. */
interface WalkCase {
  /** Why a non-GET route changes nothing (then it must append nothing); absent for mutations. */
  readonly readOnly?: string;
  request(): Promise<WalkRequest>;
}

Deno.test("every mutating /svc-admin route appends exactly one audit entry", async (t) => {
  const bed = await loginBed(ADMIN_ENV);
  try {
    const app = fullApp(bed);
    const admin = (await bed.login.bootstrap(bed.realmId))!.userId;
    const token = (await bed.auth.sessions.signIn({ realmId: bed.realmId, userId: admin, mfa: "Password" }))
      .tokens.accessToken;
    const endpoint = () =>
      bed.storage.webhooks.createEndpoint({
        realmId: bed.realmId,
        orgId: null,
        url: "https://hooks.example.com/svc",
        description: null,
        secret: `whsec_${crypto.randomUUID()}`,
        eventPatterns: ["user.*"],
      });
    const mount = bed.config.webhooks.mountPath;

    const table: Record<string, WalkCase> = {
      "POST /svc-admin/authz/inspect": {
        readOnly: "explains an authorization decision",
        request: () =>
          Promise.resolve({
            path: "/svc-admin/authz/inspect",
            body: { userId: admin, check: { permission: "docs:global:read" } },
            status: 200,
          }),
      },
      "POST /svc-admin/users/invite": {
        request: () =>
          Promise.resolve({
            path: "/svc-admin/users/invite",
            body: { email: "walk@example.test" },
            status: 201,
          }),
      },
      "POST /svc-admin/audit/retention": {
        // One security event older than the cutoff: a run that finds nothing old enough changes
        // nothing and appends nothing.
        request: async () => {
          await bed.database.db.insertInto("security_events").values({
            id: crypto.randomUUID(),
            realm_id: bed.realmId,
            user_id: admin,
            kind: "login.succeeded",
            occurred_at: new Date(bed.clock.now() - 3651 * 86_400_000),
            data_json: null,
            ip_address: null,
            device_description: null,
          }).execute();
          return {
            path: "/svc-admin/audit/retention",
            body: { securityEventsOlderThanDays: 3650 },
            status: 200,
          };
        },
      },
      [`POST ${mount}`]: {
        request: () =>
          Promise.resolve({
            path: mount,
            body: { url: "https://hooks.example.com/new", eventPatterns: ["login.*"] },
            status: 201,
          }),
      },
      [`PATCH ${mount}/:endpointId`]: {
        request: async () => ({
          path: `${mount}/${(await endpoint()).id}`,
          body: { description: "changed" },
          status: 200,
        }),
      },
      [`DELETE ${mount}/:endpointId`]: {
        request: async () => ({ path: `${mount}/${(await endpoint()).id}`, status: 204 }),
      },
      [`POST ${mount}/:endpointId/rotate-secret`]: {
        request: async () => ({
          path: `${mount}/${(await endpoint()).id}/rotate-secret`,
          body: { overlapSeconds: 60 },
          status: 200,
        }),
      },
      [`POST ${mount}/:endpointId/test`]: {
        request: async () => ({ path: `${mount}/${(await endpoint()).id}/test`, status: 202 }),
      },
      [`POST ${mount}/:endpointId/deliveries/:deliveryId/replay`]: {
        request: async () => {
          const target = await endpoint();
          const delivery = await bed.storage.webhooks.enqueue(target.id, "user.invited", "{}");
          await bed.database.db.updateTable("webhook_deliveries").set({ status: "dead_letter" })
            .where("id", "=", delivery.id).execute();
          return { path: `${mount}/${target.id}/deliveries/${delivery.id}/replay`, status: 202 };
        },
      },
    };

    const registered = [
      ...new Set(
        app.routes
          .filter((r) => r.method !== "GET" && r.method !== "ALL" && r.path.startsWith("/svc-admin/"))
          .map((r) => `${r.method} ${r.path}`),
      ),
    ];
    // Every route here is also a case of the admin fence matrix (test/http/admin), which checks its
    // entry count with every kind of caller; this walk keeps its own table for the routes that predate
    // the matrix. A route in neither fails.
    const inMatrix = new Set(ADMIN_CASES.map((c) => c.route));
    await t.step("every non-GET /svc-admin route has a case here or in the matrix; no stale cases", () => {
      assert.ok(registered.length >= 10, `found ${registered.join(", ")}`);
      const missing = registered.filter((route) => !(route in table) && !inMatrix.has(route));
      assert.deepEqual(missing, [], "mutating routes without a case: add one to the admin fence matrix");
      const stale = Object.keys(table).filter((route) => !registered.includes(route));
      assert.deepEqual(stale, [], "cases for routes that no longer exist");
    });

    for (const route of registered) {
      const row = table[route];
      if (row === undefined) continue;
      await t.step(`${route}: ${row.readOnly ? "no entry" : "one entry"}, the chain verifies`, async () => {
        const { path, body, status } = await row.request();
        const before = (await bed.storage.adminAudit.head(bed.realmId))?.seq ?? 0;
        const res = await app.request(path, {
          method: route.slice(0, route.indexOf(" ")),
          headers: {
            Authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        assert.equal(res.status, status, await res.text());
        const added = await bed.storage.adminAudit.list(bed.realmId, { afterSeq: before });
        assert.equal(added.length, row.readOnly ? 0 : 1, added.map((e) => e.action).join(", "));
        for (const entry of added) {
          assert.deepEqual({
            actorId: entry.actorId,
            actorKind: entry.actorKind,
            onBehalfOf: entry.onBehalfOf,
          }, {
            actorId: admin,
            actorKind: "User",
            onBehalfOf: null,
          });
        }
        const report = await bed.storage.adminAudit.verify(bed.realmId);
        assert.equal(report.valid, true, JSON.stringify(report.firstBad));
      });
    }
  } finally {
    await bed.close();
  }
});

Deno.test("audit entries record the true actor: API key, service account, impersonation", async (t) => {
  const bed = await loginBed(ADMIN_ENV);
  // Service accounts hold no svc: grants through the directory yet: this source grants the one
  // under test webhook management, so that its call reaches the route.
  let grantedServiceAccount = "";
  const sql = createSqlSubjectGrantSource(bed.database.db);
  const snapshots = new SubjectSnapshots({
    source: {
      loadSubject: (userId, orgId) =>
        userId === grantedServiceAccount
          ? Promise.resolve({
            userId,
            realmId: bed.realmId,
            status: "Active",
            attributes: {},
            isOrgMember: false,
            teamIds: [],
            grants: [{
              pattern: WEBHOOKS_MANAGE_GLOBAL,
              effect: "Allow",
              orgId: null,
              teamIds: [],
              condition: null,
              source: "test",
            }],
          })
          : sql.loadSubject(userId, orgId),
    },
    bus: new InProcessCacheBus(),
    events: { emit: () => {} },
    clock: bed.clock,
    ttlMs: 0,
    maxEntries: 0,
  });
  try {
    const app = fullApp(bed, snapshots);
    const admin = (await bed.login.bootstrap(bed.realmId))!.userId;
    const createWebhook = async (headers: Record<string, string>) => {
      const res = await app.request(bed.config.webhooks.mountPath, {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify({ url: "https://hooks.example.com/actor", eventPatterns: ["user.*"] }),
      });
      assert.equal(res.status, 201, await res.text());
      const entry = (await bed.storage.adminAudit.head(bed.realmId))!;
      assert.equal(entry.action, "webhook.endpoint.create");
      assert.equal((await bed.storage.adminAudit.verify(bed.realmId)).valid, true);
      return { actorId: entry.actorId, actorKind: entry.actorKind, onBehalfOf: entry.onBehalfOf };
    };

    await t.step("an API key: kind ApiKey, the key as actor, on behalf of its owner", async () => {
      const { token, key } = await createApiKey(bed.storage.apiKeys, bed.random, {
        realmId: bed.realmId,
        ownerKind: "User",
        ownerId: admin,
        name: "ci",
      });
      assert.deepEqual(await createWebhook({ Authorization: `Bearer ${token}` }), {
        actorId: key.id,
        actorKind: "ApiKey",
        onBehalfOf: admin,
      });
    });

    await t.step("a service account: kind ServiceAccount, the account as actor", async () => {
      const { secret, account } = await createServiceAccount(bed.storage.serviceAccounts, bed.random, {
        realmId: bed.realmId,
        key: "deployer",
        displayName: "Deployer",
      });
      grantedServiceAccount = account.id;
      const basic = toBase64(utf8(`deployer:${secret}`));
      assert.deepEqual(await createWebhook({ Authorization: `Basic ${basic}` }), {
        actorId: account.id,
        actorKind: "ServiceAccount",
        onBehalfOf: null,
      });
    });

    await t.step(
      "impersonation: admin mutations are refused (403 impersonation_forbidden), nothing appended",
      async () => {
        const support = await bed.user("support@example.test", "support's password");
        const { tokens } = await bed.auth.sessions.signIn({
          realmId: bed.realmId,
          userId: admin,
          mfa: "Password",
          impersonation: {
            actorId: support,
            impersonationId: crypto.randomUUID(),
            expiresAt: new Date(bed.clock.now() + 600_000),
          },
        });
        const before = (await bed.storage.adminAudit.head(bed.realmId))?.seq;
        const res = await app.request(bed.config.webhooks.mountPath, {
          method: "POST",
          headers: { Authorization: `Bearer ${tokens.accessToken}`, "Content-Type": "application/json" },
          body: JSON.stringify({ url: "https://hooks.example.com/actor", eventPatterns: ["user.*"] }),
        });
        assert.equal(res.status, 403);
        assert.equal((await res.json()).error.code, "impersonation_forbidden");
        assert.equal((await bed.storage.adminAudit.head(bed.realmId))?.seq, before);
      },
    );

    await t.step("erasing the impersonated user redacts the entries made on their behalf", async () => {
      const entries = await bed.storage.adminAudit.list(bed.realmId, { limit: 1000 });
      const onBehalf = entries.filter((e) => e.onBehalfOf === admin && e.actorId !== admin);
      assert.ok(onBehalf.length >= 1 && onBehalf.every((e) => e.after !== null));
      assert.equal(await bed.storage.adminAudit.redactForSubject(admin) >= onBehalf.length, true);
      const after = await bed.storage.adminAudit.list(bed.realmId, { limit: 1000 });
      assert.ok(
        after.filter((e) => e.onBehalfOf === admin).every((e) => e.after === null && e.before === null),
      );
      assert.equal((await bed.storage.adminAudit.verify(bed.realmId)).valid, true);
    });
  } finally {
    await snapshots.stop();
    await bed.close();
  }
});
