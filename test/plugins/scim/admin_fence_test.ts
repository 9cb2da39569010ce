/**
 * The SCIM plugin's admin routes: for every `/svc-admin/scim` route, no token is 401; a user
 * without the plugin's permissions (even svc's own administrator) 403; an administrator of
 * another organization 404 (an empty list); organization A's administrator and the realm
 * administrator succeed; each successful mutation appends exactly one audit entry (a no-op
 * none). The token is answered once with `Cache-Control: no-store`, stored only as its hash,
 * rotated with a bounded overlap, and a token of organization A's connection never reaches
 * another connection. The OpenAPI document lists every route.
 */
import { strict as assert } from "node:assert";
import { type PluginFenceCase, pluginFenceMatrix } from "../../support/plugin-fence.ts";
import { Validator } from "@seriousme/openapi-schema-validator";
import { otherRealm } from "../../support/other-realm.ts";
import { scimBed } from "./bed.ts";

Deno.test("scim admin routes: fence matrix, one audit entry per change, tokens", async (t) => {
  const b = await scimBed();
  try {
    const app = b.plugged.app;
    const BASE = "/svc-admin/scim/connections";
    const newConnection = async () => (await b.connection(b.orgA)).id;
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
        prepare: () => Promise.resolve({ path: BASE, body: { orgId: b.orgA, displayName: "Entra ID" } }),
      },
      {
        route: `GET ${BASE}/:connectionId`,
        status: 200,
        mutation: false,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}` }),
      },
      {
        route: `PATCH ${BASE}/:connectionId`,
        status: 200,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}`, body: { deleteMode: "erase" } }),
      },
      {
        route: `POST ${BASE}/:connectionId/rotate`,
        status: 200,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({
          path: `${BASE}/${await newConnection()}/rotate`,
          body: { overlapSeconds: 60 },
        }),
      },
      {
        route: `DELETE ${BASE}/:connectionId`,
        status: 204,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}` }),
      },
      {
        route: `GET ${BASE}/:connectionId/log`,
        status: 200,
        mutation: false,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}/log` }),
      },
    ];

    await pluginFenceMatrix(t, {
      routes: app.routes,
      prefix: "/svc-admin/scim",
      listPath: BASE,
      cases,
      request: (method, path, as, body) => b.admin(method, path, as, body),
      chainLength: () => b.chainLength(),
      check: (row, _as, status, res, text) => {
        if (status < 300 && (row.route.endsWith("rotate") || row.route === `POST ${BASE}`)) {
          assert.equal(res.headers.get("Cache-Control"), "no-store");
          assert.match(JSON.parse(text).token, /^svc_scim_[A-Za-z0-9_-]{43}$/);
        }
        if (status < 300 && row.route.startsWith("GET ")) {
          assert.ok(!text.includes("svc_scim_"), "a token is never read back");
        }
      },
    });

    await t.step("the administrator of another realm sees nothing and changes nothing (404)", async () => {
      const other = await otherRealm(b.plugged.admin, { extraPatterns: ["scim:*:*"], app });
      const id = await newConnection();
      const before = await b.chainLength();
      const listed = await other.request("GET", BASE);
      assert.equal(listed.status, 200);
      assert.equal((await listed.json()).total, 0);
      for (
        const [method, path, body] of [
          ["GET", `${BASE}/${id}`, undefined],
          ["GET", `${BASE}/${id}/log`, undefined],
          ["PATCH", `${BASE}/${id}`, { displayName: "x" }],
          ["POST", `${BASE}/${id}/rotate`, {}],
          ["DELETE", `${BASE}/${id}`, undefined],
          ["POST", BASE, { orgId: b.orgA, displayName: "x" }],
        ] as const
      ) {
        const res = await other.request(method, path, { body });
        assert.equal(res.status, 404, `${method} ${path}: ${await res.text()}`);
      }
      assert.equal(await b.chainLength(), before);
    });

    await t.step("an impersonating administrator changes nothing (403)", async () => {
      const bed = b.plugged.admin.bed;
      const record = await bed.storage.impersonations.create({
        id: crypto.randomUUID(),
        realmId: b.realmId,
        actorId: b.users.global,
        targetId: b.users.orgA,
        orgId: b.orgA,
        reason: "fence test",
        consentRequired: false,
        expiresAt: new Date(bed.clock.now() + 30 * 60_000),
      });
      const token = (await bed.auth.sessions.signIn({
        realmId: b.realmId,
        userId: b.users.orgA,
        orgId: b.orgA,
        mfa: "MultiFactor",
        impersonation: { actorId: b.users.global, impersonationId: record.id, expiresAt: record.expiresAt },
      })).tokens.accessToken;
      const id = await newConnection();
      const before = await b.chainLength();
      for (
        const [method, path, body] of [
          ["POST", BASE, { orgId: b.orgA, displayName: "x" }],
          ["PATCH", `${BASE}/${id}`, { displayName: "y" }],
          ["POST", `${BASE}/${id}/rotate`, {}],
          ["DELETE", `${BASE}/${id}`, undefined],
        ] as const
      ) {
        const res = await app.request(path, {
          method,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        assert.equal(res.status, 403, `${method} ${path}: ${await res.text()}`);
      }
      assert.equal(await b.chainLength(), before);
    });

    await t.step("20 concurrent identical PATCHes write one entry", async () => {
      const id = await newConnection();
      const before = await b.chainLength();
      const answers = await Promise.all(
        Array.from(
          { length: 20 },
          () => b.admin("PATCH", `${BASE}/${id}`, "global", { displayName: "Concurrent" }),
        ),
      );
      assert.deepEqual(answers.map((r) => r.status), Array(20).fill(200));
      assert.equal(await b.chainLength() - before, 1);
    });

    await t.step("a PATCH that changes nothing writes no entry", async () => {
      const id = await newConnection();
      const before = await b.chainLength();
      const res = await b.admin("PATCH", `${BASE}/${id}`, "global", { displayName: "Okta" });
      assert.equal(res.status, 200);
      assert.equal(await b.chainLength(), before);
    });

    await t.step("invalid bodies are 400 (U+0000, unknown fields, bad orgId)", async () => {
      for (
        const body of [
          { orgId: b.orgA, displayName: "a\u0000b" },
          { orgId: b.orgA, displayName: "x", extra: 1 },
          { orgId: "nope", displayName: "x" },
          { orgId: b.orgA, displayName: "x", groupRoles: { eng: ["not-a-uuid"] } },
        ]
      ) {
        const res = await b.admin("POST", BASE, "global", body);
        assert.equal(res.status, 400, JSON.stringify(body));
      }
    });

    await t.step("the token is stored hashed; rotation keeps the old one for the overlap only", async () => {
      const conn = await b.connection(b.orgA);
      const rows = await b.plugged.admin.bed.storage.pluginSql.query<Record<string, unknown>>(
        "SELECT * FROM scim_connections WHERE id = $1",
        [conn.id],
      );
      assert.ok(!JSON.stringify(rows).includes(conn.token), "the plaintext token is not stored");
      assert.equal((await b.scim(conn, "GET", "/ServiceProviderConfig")).status, 200);
      const rotated =
        await (await b.admin("POST", `${BASE}/${conn.id}/rotate`, "global", { overlapSeconds: 30 })).json();
      const fresh = { id: conn.id, token: rotated.token as string };
      assert.equal((await b.scim(fresh, "GET", "/Users")).status, 200);
      assert.equal((await b.scim(conn, "GET", "/Users")).status, 200, "the old token within the overlap");
      const clock = b.plugged.admin.bed.clock as unknown as { advance(ms: number): void };
      clock.advance(31_000);
      const late = await b.scim(conn, "GET", "/Users");
      assert.equal(late.status, 401);
      assert.equal((await late.json()).schemas[0], "urn:ietf:params:scim:api:messages:2.0:Error");
      assert.equal((await b.scim(fresh, "GET", "/Users")).status, 200);
      // Rotating with no overlap ends the old token at once.
      const again =
        await (await b.admin("POST", `${BASE}/${conn.id}/rotate`, "global", { overlapSeconds: 0 })).json();
      assert.equal((await b.scim(fresh, "GET", "/Users")).status, 401);
      assert.equal((await b.scim({ id: conn.id, token: again.token }, "GET", "/Users")).status, 200);
      // Deleting the connection stops its token.
      await b.admin("DELETE", `${BASE}/${conn.id}`, "global");
      assert.equal((await b.scim({ id: conn.id, token: again.token }, "GET", "/Users")).status, 401);
    });

    await t.step("a token of organization A's connection reaches no other connection", async () => {
      const a = await b.connection(b.orgA);
      const other = await b.connection(b.orgB);
      const created = await b.scim(other, "POST", "/Users", { userName: "bob@b.test" });
      assert.equal(created.status, 201);
      const bob = (await created.json()).id;
      assert.equal((await b.scim({ id: other.id, token: a.token }, "GET", "/Users")).status, 401);
      assert.equal((await b.scim(a, "GET", `/Users/${bob}`)).status, 404);
      const listed =
        await (await b.scim(a, "GET", `/Users?filter=${encodeURIComponent('userName eq "bob@b.test"')}`))
          .json();
      assert.equal(listed.totalResults, 0);
      const patched = await b.scim(a, "PATCH", `/Users/${bob}`, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "active", value: false }],
      });
      assert.equal(patched.status, 404);
      assert.equal((await b.scim(a, "DELETE", `/Users/${bob}`)).status, 404);
      assert.equal((await b.plugged.admin.bed.storage.users.get(bob))?.status, "Active");
      // Organization A's connection cannot take over B's member by its email either.
      const stolen = await b.scim(a, "POST", "/Users", {
        userName: "someone",
        emails: [{ value: "bob@b.test" }],
      });
      assert.equal(stolen.status, 409);
      assert.equal((await stolen.json()).scimType, "uniqueness");
      assert.deepEqual(
        (await b.plugged.admin.bed.storage.organizations.listOrgsOfUser(bob)).map((o) => o.id),
        [b.orgB],
      );
    });

    await t.step("the chain verifies; the OpenAPI document lists the routes with their fences", async () => {
      const report = await b.plugged.admin.bed.storage.adminAudit.verify(b.realmId);
      assert.equal(report.valid, true, JSON.stringify(report));
      const doc = await (await app.request("/openapi.json")).json();
      for (
        const path of [
          BASE,
          `${BASE}/{connectionId}`,
          `${BASE}/{connectionId}/rotate`,
          `${BASE}/{connectionId}/log`,
        ]
      ) {
        assert.ok(doc.paths[path], `${path} documented`);
      }
      assert.ok(doc.paths[BASE].post["x-svc-permissions"].includes("scim:global:connections-manage"));
      for (
        const path of [
          "/ServiceProviderConfig",
          "/Users",
          "/Users/{id}",
          "/Groups",
          "/Groups/{id}",
          "/Schemas",
        ]
      ) {
        assert.ok(doc.paths[`/scim/v2/{connectionId}${path}`], `SCIM ${path} documented`);
      }
      assert.ok(doc.paths["/scim/v2/{connectionId}/Users/{id}"].patch);
      const result = await new Validator().validate(structuredClone(doc));
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    });
  } finally {
    await b.close();
  }
});
