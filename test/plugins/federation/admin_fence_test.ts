/**
 * The fence matrix of the federation plugin's admin routes, on the Hono app of a plugin bed (svc's
 * routes plus the plugin mounted with its context, as `svc start` builds it), like svc's own
 * matrix (which covers these routes for realm-wide callers only): for every
 * `/svc-admin/federation` route the plugin registers, with a fresh target each time,
 *
 * - no token: 401; a user without the plugin's permissions (even the `svc:*:*` administrator of
 *   svc's own API): 403;
 * - an administrator of another organization (`federation:org:*` there): 404 for organization A's
 *   provider (a list shows nothing of it);
 * - an administrator of organization A (`federation:org:*` in A): the success status;
 * - a realm administrator (`federation:global:*`): the success status;
 * - a successful mutation appends exactly one audit chain entry, a refusal none; the chain
 *   verifies at the end; and the served OpenAPI document lists every route with its fence.
 */
import { strict as assert } from "node:assert";
import { type PluginFenceCase, pluginFenceMatrix } from "../../support/plugin-fence.ts";
import { Validator } from "@seriousme/openapi-schema-validator";
import { federationPlugin } from "../../../plugins/federation/mod.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";

type Caller = "none" | "svcAdmin" | "plain" | "orgB" | "orgA" | "global";

Deno.test("federation admin routes: fence matrix and one audit entry per mutation", async (t) => {
  const plugged = await pluginBed([federationPlugin()], { SVC_FEDERATION_ALLOW_HTTP_ISSUERS: "true" });
  try {
    const bed = plugged.admin.bed;
    const app = plugged.app;
    const realmId = bed.realmId;
    const seed = seeder(bed.database.db);
    const svcAdmin = plugged.admin.users.global;
    const [globalUser, orgAUser, orgBUser, plainUser] = [
      await seed.user(realmId),
      await seed.user(realmId),
      await seed.user(realmId),
      await seed.user(realmId),
    ];
    const orgA = await seed.org(realmId, [orgAUser, plainUser]);
    const orgB = await seed.org(realmId, [orgBUser]);
    const globalRole = await seed.role(realmId, "federation-admin", [{ pattern: "federation:global:*" }]);
    await seed.assign(realmId, globalRole, { kind: "User", id: globalUser });
    for (const [orgId, userId] of [[orgA, orgAUser], [orgB, orgBUser]]) {
      const role = await seed.role(realmId, `federation-${orgId.slice(0, 8)}`, [{
        pattern: "federation:org:*",
      }], orgId);
      await seed.assign(realmId, role, { kind: "User", id: userId }, orgId);
    }
    await bed.snapshots.invalidateAll();
    const sign = async (userId: string, orgId: string | null) =>
      (await bed.auth.sessions.signIn({ realmId, userId, orgId, mfa: "MultiFactor" })).tokens.accessToken;
    const tokens: Record<Exclude<Caller, "none">, string> = {
      svcAdmin: await sign(svcAdmin, null),
      plain: await sign(plainUser, orgA),
      orgB: await sign(orgBUser, orgB),
      orgA: await sign(orgAUser, orgA),
      global: await sign(globalUser, null),
    };
    const request = (method: string, path: string, as: Caller, body?: unknown) =>
      app.request(path, {
        method,
        headers: {
          ...(as === "none" ? {} : { Authorization: `Bearer ${tokens[as]}` }),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const chainLength = async () => (await bed.storage.adminAudit.list(realmId)).length;

    const BASE = "/svc-admin/federation/providers";
    const providerBody = {
      orgId: orgA,
      issuer: "https://idp.acme.example",
      clientId: "svc",
      clientSecret: "fence matrix secret",
    };
    const newProvider = async () => {
      const res = await request("POST", BASE, "global", providerBody);
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()).id as string;
    };

    const cases: PluginFenceCase[] = [
      {
        route: `GET ${BASE}`,
        status: 200,
        mutation: false,
        otherOrg: 200,
        prepare: () => Promise.resolve({ path: BASE }),
      },
      {
        route: `POST ${BASE}`,
        status: 201,
        mutation: true,
        otherOrg: 404,
        prepare: () => Promise.resolve({ path: BASE, body: providerBody }),
      },
      {
        route: `GET ${BASE}/:providerId`,
        status: 200,
        mutation: false,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newProvider()}` }),
      },
      {
        route: `PATCH ${BASE}/:providerId`,
        status: 200,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newProvider()}`, body: { enabled: false } }),
      },
      {
        route: `DELETE ${BASE}/:providerId`,
        status: 204,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newProvider()}` }),
      },
    ];

    await pluginFenceMatrix(t, {
      routes: app.routes,
      prefix: "/svc-admin/federation",
      listPath: BASE,
      cases,
      request,
      chainLength,
      check: (_row, _as, _status, _res, text) =>
        assert.ok(!text.includes(providerBody.clientSecret), "the secret is never answered"),
    });

    await t.step("the chain verifies; the OpenAPI document lists the routes with their fences", async () => {
      const report = await bed.storage.adminAudit.verify(realmId);
      assert.equal(report.valid, true, JSON.stringify(report));
      const doc = await (await app.request("/openapi.json")).json();
      for (const path of [BASE, `${BASE}/{providerId}`, "/federation/start", "/federation/callback"]) {
        assert.ok(doc.paths[path], `${path} documented`);
      }
      assert.ok(doc.paths[BASE].post["x-svc-permissions"].includes("federation:global:providers-manage"));
      assert.ok(doc.paths["/auth/sign-in/discover"].post);
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    });
  } finally {
    await plugged.close();
  }
});
