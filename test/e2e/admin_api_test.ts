/**
 * The admin API end to end through the real server (`svc start` on a fresh Postgres database),
 * over HTTP only, as an operator with nothing but the OpenAPI document in hand would use it:
 * read the document, create an organization and a user with a password in it, create a role with
 * a grant of a declared permission, assign it, sign in as the user and see the grant in
 * `GET /profile/permissions`; then suspend the user and see their access token refused at once.
 */
import { strict as assert } from "node:assert";
import { httpClient, startTestServer } from "../support/server.ts";

Deno.test("e2e: the directory over HTTP, from user to grant to suspension", async (t) => {
  const configFile = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(
    configFile,
    JSON.stringify({ authz: { permissions: [{ id: "docs:org:read", description: "Read documents" }] } }),
  );
  const server = await startTestServer({ SVC_CONFIG_FILE: configFile });
  const { call, signIn } = httpClient(server.url);
  try {
    const root = await signIn(server.adminEmail, server.adminPassword);

    await t.step("the OpenAPI document describes the admin API it serves", async () => {
      const doc = await call("GET", "/openapi.json");
      assert.equal(doc.status, 200);
      assert.equal(doc.json.openapi, "3.1.0");
      for (const path of ["/svc-admin/users", "/svc-admin/roles", "/svc-admin/role-assignments"]) {
        assert.ok(doc.json.paths[path]?.post, `POST ${path} is documented`);
      }
      assert.ok(doc.json.paths["/svc-admin/organizations/{orgId}/members"]?.get);
    });

    let orgId = "";
    let userId = "";
    let userToken = "";
    await t.step(
      "an organization, a user with a password in it, a role with a grant, an assignment",
      async () => {
        const org = await call("POST", "/svc-admin/organizations", root, {
          name: "acme",
          displayName: "Acme",
        });
        assert.equal(org.status, 201, JSON.stringify(org.json));
        orgId = org.json.id;
        const user = await call("POST", "/svc-admin/users", root, {
          email: "dana@example.test",
          displayName: "Dana",
          password: "dana's long password",
          emailVerified: true,
          orgId,
        });
        assert.equal(user.status, 201, JSON.stringify(user.json));
        assert.equal(user.json.email, "dana@example.test");
        userId = user.json.id;
        const role = await call("POST", "/svc-admin/roles", root, {
          key: "reader",
          displayName: "Reader",
          grants: [{ pattern: "docs:org:read", effect: "Allow" }],
        });
        assert.equal(role.status, 201, JSON.stringify(role.json));
        const assignment = await call("POST", "/svc-admin/role-assignments", root, {
          roleId: role.json.id,
          principalKind: "User",
          principalId: userId,
          orgId,
        });
        assert.equal(assignment.status, 201, JSON.stringify(assignment.json));
        const members = await call(
          "GET",
          `/svc-admin/organizations/${orgId}/members?offset=0&limit=10`,
          root,
        );
        assert.equal(members.status, 200);
        assert.deepEqual(members.json.items.map((m: { userId: string }) => m.userId), [userId]);
        assert.equal(members.json.total, 1);
      },
    );

    await t.step("the user signs in and holds the grant", async () => {
      userToken = await signIn("dana@example.test", "dana's long password", orgId);
      const perms = await call("GET", "/profile/permissions", userToken);
      assert.equal(perms.status, 200);
      assert.deepEqual(perms.json.permissions, ["docs:org:read"]);
    });

    await t.step(
      "suspended: the existing access token is refused at once, and so is signing in",
      async () => {
        const suspended = await call("POST", `/svc-admin/users/${userId}/suspend`, root, { reason: "left" });
        assert.equal(suspended.status, 200, JSON.stringify(suspended.json));
        const me = await call("GET", "/profile/me", userToken);
        assert.equal(me.status, 401);
        assert.equal(me.json.error.code, "invalid_token");
        const login = await call("POST", "/auth/login", undefined, {
          email: "dana@example.test",
          password: "dana's long password",
        });
        assert.equal(login.status, 401);
      },
    );

    await t.step("every change is in the chain, and it verifies", async () => {
      const entries = await call("GET", "/svc-admin/audit/entries?afterSeq=0&limit=1000", root);
      const mine = entries.json.entries
        .filter((e: { actorId: string; actorKind: string }) => e.actorKind === "User")
        .map((e: { action: string }) => e.action);
      assert.deepEqual(mine, [
        "organization.create",
        "user.create",
        "role.create",
        "role.assign",
        "user.suspend",
      ]);
      const verify = await call("GET", "/svc-admin/audit/verify", root);
      assert.equal(verify.json.valid, true);
    });
  } finally {
    await server.close();
    await Deno.remove(configFile);
  }
});
