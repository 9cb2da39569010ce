/**
 * The roles area of the admin API over the full app: the wire contract, the engine's grammar and
 * condition validation, ETags, deletion, lookup by logical identity, snapshot eviction of the
 * affected subjects, service accounts as subjects, and the privilege escalation guard.
 * (Atomic creation and the ETag race on both drivers: `roles_atomic_test.ts`.)
 */
import { strict as assert } from "node:assert";
import { createServiceAccount } from "../../../core/credentials/service-accounts.ts";
import { toBase64, utf8 } from "../../../core/encoding.ts";
import { type AdminBed, adminBed } from "../../support/admin.ts";
import { seeder } from "../../support/seed.ts";

const json = async (res: Response) => ({ status: res.status, body: await res.json() });

/** Signs a user in (to `orgId`) and answers their bearer header. */
async function bearer(bed: AdminBed, userId: string, orgId: string | null) {
  const { tokens } = await bed.bed.auth.sessions.signIn({
    realmId: bed.realmId,
    userId,
    orgId,
    mfa: "Password",
  });
  return { Authorization: `Bearer ${tokens.accessToken}` };
}

/** The caller's allow patterns from `GET /profile/permissions`. */
async function permissionsOf(bed: AdminBed, headers: Record<string, string>) {
  const res = await bed.app.request("/profile/permissions", { headers });
  assert.equal(res.status, 200);
  return ((await res.json()).permissions as string[]).sort();
}

Deno.test("roles: wire contract, validation, ETag, lookup, delete", async (t) => {
  const bed = await adminBed();
  try {
    let roleId = "";
    await t.step("POST /svc-admin/roles creates the role with its grants: 201 {id, ...}", async () => {
      const res = await json(
        await bed.request("POST", "/svc-admin/roles", {
          body: {
            key: "editor",
            displayName: "Editor",
            grants: [
              { pattern: "docs:org:*", effect: "Allow" },
              {
                pattern: "docs:org:delete",
                effect: "Deny",
                condition: { version: 1, condition: { op: "exists", attr: "subject.contractor" } },
              },
            ],
          },
        }),
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.match(res.body.id, /^[0-9a-f-]{36}$/);
      assert.equal(res.body.key, "editor");
      assert.equal(res.body.orgId, null);
      assert.equal(res.body.version, 1);
      assert.deepEqual(res.body.grants.map((g: { pattern: string }) => g.pattern), [
        "docs:org:*",
        "docs:org:delete",
      ]);
      roleId = res.body.id;
    });

    await t.step("a duplicate key is 409 role_key_taken", async () => {
      const res = await json(
        await bed.request("POST", "/svc-admin/roles", {
          body: { key: "editor", displayName: "x", grants: [] },
        }),
      );
      assert.equal(res.status, 409);
      assert.equal(res.body.error.code, "role_key_taken");
    });

    await t.step("a bad pattern is 400 with the engine's reason and the field", async () => {
      const res = await json(
        await bed.request("POST", "/svc-admin/roles", {
          body: {
            key: "bad",
            displayName: "Bad",
            grants: [{ pattern: "docs:org:read", effect: "Allow" }, {
              pattern: "docs:o*:read",
              effect: "Allow",
            }],
          },
        }),
      );
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, "invalid_request");
      assert.equal(res.body.error.details.reason, "partial_scope_wildcard");
      assert.equal(res.body.error.details.field, "grants.1.pattern");
      assert.deepEqual(res.body.error.details.issues.map((i: { path: string }) => i.path), [
        "grants.1.pattern",
      ]);
      assert.match(res.body.error.message, /scope segment/);
    });

    await t.step("a bad condition is 400 with the path inside the document", async () => {
      const res = await json(
        await bed.request("POST", `/svc-admin/roles/${roleId}/grants`, {
          body: {
            pattern: "docs:org:read",
            effect: "Allow",
            condition: {
              version: 1,
              condition: { allOf: [{ op: "eq", attr: "subject.x", value: 1 }, { op: "nope" }] },
            },
          },
        }),
      );
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, "invalid_request");
      assert.equal(res.body.error.details.engineCode, "condition_format");
      assert.equal(res.body.error.details.field, "condition");
      assert.equal(res.body.error.details.path, "condition.allOf[1].op");
    });

    await t.step("read: grants and ETag; PATCH with If-Match; a stale If-Match is 412", async () => {
      const read = await bed.request("GET", `/svc-admin/roles/${roleId}`);
      assert.equal(read.headers.get("ETag"), '"1"');
      assert.equal((await read.json()).grants.length, 2);
      const patched = await bed.request("PATCH", `/svc-admin/roles/${roleId}`, {
        body: { displayName: "Editors" },
        headers: { "If-Match": '"1"' },
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.headers.get("ETag"), '"2"');
      assert.equal((await patched.json()).displayName, "Editors");
      const stale = await json(
        await bed.request("PATCH", `/svc-admin/roles/${roleId}`, {
          body: { displayName: "Lost" },
          headers: { "If-Match": '"1"' },
        }),
      );
      assert.equal(stale.status, 412);
      assert.equal(stale.body.error.code, "precondition_failed");
      assert.equal((await bed.bed.storage.roles.get(roleId))!.displayName, "Editors");
    });

    await t.step("adding or removing a grant moves the version", async () => {
      const added = await bed.request("POST", `/svc-admin/roles/${roleId}/grants`, {
        body: { pattern: "wiki:org:read", effect: "Allow" },
      });
      assert.equal(added.status, 201);
      assert.equal(added.headers.get("ETag"), '"3"');
      const grant = await added.json();
      const again = await json(
        await bed.request("POST", `/svc-admin/roles/${roleId}/grants`, {
          body: { pattern: "wiki:org:read", effect: "Allow" },
        }),
      );
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, "grant_exists");
      const removed = await bed.request("DELETE", `/svc-admin/roles/${roleId}/grants/${grant.id}`);
      assert.equal(removed.status, 204);
      assert.equal(removed.headers.get("ETag"), '"4"');
      assert.equal(
        (await bed.request("DELETE", `/svc-admin/roles/${roleId}/grants/${grant.id}`)).status,
        404,
      );
    });

    await t.step("lookup by logical identity: conditions compare as JSON values", async () => {
      const found = await json(
        await bed.request("POST", `/svc-admin/roles/${roleId}/grants/lookup`, {
          body: {
            pattern: "docs:org:delete",
            effect: "Deny",
            condition: { condition: { attr: "subject.contractor", op: "exists" }, version: 1 },
          },
        }),
      );
      assert.equal(found.status, 200);
      assert.equal(found.body.pattern, "docs:org:delete");
      const missing = await bed.request("POST", `/svc-admin/roles/${roleId}/grants/lookup`, {
        body: { pattern: "docs:org:delete", effect: "Deny" },
      });
      assert.equal(missing.status, 404);
    });

    await t.step("list: by level, search by key, paged", async () => {
      await bed.request("POST", "/svc-admin/roles", {
        body: { key: "org-editor", displayName: "Org editor", orgId: bed.orgA, grants: [] },
      });
      const realm = (await json(await bed.request("GET", "/svc-admin/roles?level=realm&search=EDIT"))).body;
      assert.deepEqual(realm.items.map((r: { key: string }) => r.key), ["editor"]);
      const org =
        (await json(await bed.request("GET", "/svc-admin/roles?level=organization&search=edit"))).body;
      assert.deepEqual(org.items.map((r: { key: string }) => r.key), ["org-editor"]);
      const page = (await json(await bed.request("GET", "/svc-admin/roles?limit=1&offset=1"))).body;
      assert.equal(page.items.length, 1);
      assert.equal(page.limit, 1);
      assert.ok(page.total >= 4, JSON.stringify(page));
      const asOrgA = (await json(await bed.request("GET", "/svc-admin/roles", { as: "orgA" }))).body;
      assert.ok(asOrgA.items.every((r: { orgId: string }) => r.orgId === bed.orgA), JSON.stringify(asOrgA));
      assert.ok(asOrgA.items.some((r: { key: string }) => r.key === "org-editor"));
    });

    await t.step("delete removes the role, its grants and every assignment", async () => {
      const user = await seeder(bed.bed.database.db).user(bed.realmId);
      const assigned = await bed.request("POST", "/svc-admin/role-assignments", {
        body: { roleId, principalKind: "User", principalId: user },
      });
      assert.equal(assigned.status, 201);
      assert.equal((await bed.request("DELETE", `/svc-admin/roles/${roleId}`)).status, 204);
      assert.equal(await bed.bed.storage.roles.get(roleId), null);
      assert.deepEqual(await bed.bed.storage.roles.listGrants(roleId), []);
      assert.deepEqual(await bed.bed.storage.roles.listAssignmentsForPrincipal("User", user), []);
      assert.equal((await bed.request("GET", `/svc-admin/roles/${roleId}`)).status, 404);
    });
  } finally {
    await bed.close();
  }
});

Deno.test("role assignments and policies evict the affected snapshots (warm caches)", async (t) => {
  const bed = await adminBed();
  try {
    const seed = seeder(bed.bed.database.db);
    const member = await seed.user(bed.realmId);
    const other = await seed.user(bed.realmId);
    await bed.bed.database.db.insertInto("org_memberships")
      .values({ org_id: bed.orgA, user_id: member, created_at: new Date() }).execute();
    const memberHeaders = await bearer(bed, member, bed.orgA);
    const otherHeaders = await bearer(bed, other, null);
    const created = await bed.request("POST", "/svc-admin/roles", {
      body: {
        key: "reader",
        displayName: "Reader",
        orgId: bed.orgA,
        grants: [{ pattern: "docs:org:read", effect: "Allow" }],
      },
    });
    const role = await created.json();

    await t.step("assigning a role to a user: their next request sees it", async () => {
      assert.deepEqual(await permissionsOf(bed, memberHeaders), []); // warm
      const res = await json(
        await bed.request("POST", "/svc-admin/role-assignments", {
          as: "orgA",
          body: { roleId: role.id, principalKind: "User", principalId: member },
        }),
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(
        { roleId: res.body.roleId, principalKind: res.body.principalKind, orgId: res.body.orgId },
        { roleId: role.id, principalKind: "User", orgId: bed.orgA },
      );
      assert.deepEqual(await permissionsOf(bed, memberHeaders), ["docs:org:read"]);
      assert.ok(bed.bed.events.some((e) => e.kind === "user.role_assigned" && e.userId === member));
    });

    await t.step("a grant added to the role reaches its holders", async () => {
      await bed.request("POST", `/svc-admin/roles/${role.id}/grants`, {
        body: { pattern: "docs:org:write", effect: "Allow" },
      });
      assert.deepEqual(await permissionsOf(bed, memberHeaders), ["docs:org:read", "docs:org:write"]);
    });

    await t.step("listing by role and by principal", async () => {
      const byRole =
        (await json(await bed.request("GET", `/svc-admin/role-assignments?roleId=${role.id}`))).body;
      assert.equal(byRole.total, 1);
      const byPrincipal = (await json(
        await bed.request("GET", `/svc-admin/role-assignments?principalKind=User&principalId=${member}`, {
          as: "orgA",
        }),
      )).body;
      assert.deepEqual(byPrincipal.items.map((a: { roleId: string }) => a.roleId), [role.id]);
      const bad = await bed.request("GET", "/svc-admin/role-assignments");
      assert.equal(bad.status, 400);
    });

    await t.step("removing the assignment takes the grants away at once", async () => {
      const [assignment] = await bed.bed.storage.roles.listAssignmentsForPrincipal("User", member);
      assert.equal((await bed.request("DELETE", `/svc-admin/role-assignments/${assignment.id}`)).status, 204);
      assert.deepEqual(await permissionsOf(bed, memberHeaders), []);
    });

    await t.step("a realm-level role assigned to a group reaches its members", async () => {
      const group = await seed.group(bed.realmId, "staff", [other]);
      const realmRole = await (await bed.request("POST", "/svc-admin/roles", {
        body: {
          key: "staff",
          displayName: "Staff",
          grants: [{ pattern: "wiki:global:read", effect: "Allow" }],
        },
      })).json();
      assert.deepEqual(await permissionsOf(bed, otherHeaders), []); // warm
      const res = await bed.request("POST", "/svc-admin/role-assignments", {
        body: { roleId: realmRole.id, principalKind: "Group", principalId: group },
      });
      assert.equal(res.status, 201);
      assert.deepEqual(await permissionsOf(bed, otherHeaders), ["wiki:global:read"]);
      assert.equal((await bed.request("DELETE", `/svc-admin/roles/${realmRole.id}`)).status, 204);
      assert.deepEqual(await permissionsOf(bed, otherHeaders), []);
    });

    await t.step(
      "a policy: created, its grant added and removed, deleted; each change seen at once",
      async () => {
        const created = await json(
          await bed.request("POST", "/svc-admin/policies", {
            body: {
              name: "direct",
              principalKind: "User",
              principalId: other,
              grants: [{ pattern: "tickets:global:read", effect: "Allow" }],
            },
          }),
        );
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.deepEqual(await permissionsOf(bed, otherHeaders), ["tickets:global:read"]);
        const grant = await (await bed.request("POST", `/svc-admin/policies/${created.body.id}/grants`, {
          body: { pattern: "tickets:global:write", effect: "Allow" },
        })).json();
        assert.deepEqual(await permissionsOf(bed, otherHeaders), [
          "tickets:global:read",
          "tickets:global:write",
        ]);
        await bed.request("DELETE", `/svc-admin/policies/${created.body.id}/grants/${grant.id}`);
        assert.deepEqual(await permissionsOf(bed, otherHeaders), ["tickets:global:read"]);
        const read = (await json(await bed.request("GET", `/svc-admin/policies/${created.body.id}`))).body;
        assert.equal(read.grants.length, 1);
        assert.equal((await bed.request("DELETE", `/svc-admin/policies/${created.body.id}`)).status, 204);
        assert.deepEqual(await permissionsOf(bed, otherHeaders), []);
      },
    );
  } finally {
    await bed.close();
  }
});

Deno.test("a service account with an assigned role passes a fence over HTTP with Basic credentials", async () => {
  const bed = await adminBed();
  try {
    const { secret, account } = await createServiceAccount(bed.bed.storage.serviceAccounts, bed.bed.random, {
      realmId: bed.realmId,
      key: "reporter",
      displayName: "Reporter",
    });
    const basic = { Authorization: `Basic ${toBase64(utf8(`reporter:${secret}`))}` };
    const list = () => bed.app.request("/svc-admin/roles", { headers: basic });
    assert.equal((await list()).status, 403); // its snapshot (no grants) is now cached
    const role = await (await bed.request("POST", "/svc-admin/roles", {
      body: {
        key: "role-reader",
        displayName: "Role reader",
        grants: [{ pattern: "svc:global:roles-read", effect: "Allow" }],
      },
    })).json();
    const assigned = await bed.request("POST", "/svc-admin/role-assignments", {
      body: { roleId: role.id, principalKind: "ServiceAccount", principalId: account.id },
    });
    assert.equal(assigned.status, 201);
    const res = await list();
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.json()).items.some((r: { id: string }) => r.id === role.id));
    // It holds only what it was given.
    const write = await bed.app.request("/svc-admin/roles", {
      method: "POST",
      headers: { ...basic, "Content-Type": "application/json" },
      body: JSON.stringify({ key: "nope", displayName: "Nope", grants: [] }),
    });
    assert.equal(write.status, 403);
    // An organization administrator cannot reach service accounts (realm-level principals).
    const orgRole = await (await bed.request("POST", "/svc-admin/roles", {
      body: { key: "org-r", displayName: "R", orgId: bed.orgA, grants: [] },
    })).json();
    const byOrgAdmin = await bed.request("POST", "/svc-admin/role-assignments", {
      as: "orgA",
      body: { roleId: orgRole.id, principalKind: "ServiceAccount", principalId: account.id },
    });
    assert.equal(byOrgAdmin.status, 404);
  } finally {
    await bed.close();
  }
});

Deno.test("privilege escalation: nobody grants or assigns svc: permissions they do not hold", async (t) => {
  const bed = await adminBed();
  try {
    const refused = async (res: Response, missing?: string) => {
      const body = await res.json();
      assert.equal(res.status, 403, JSON.stringify(body));
      assert.equal(body.error.code, "escalation_refused");
      if (missing !== undefined) {
        assert.ok(body.error.details.missing.includes(missing), JSON.stringify(body));
      }
    };
    const orgRole = (grants: unknown[], as: "orgA" | "global" = "orgA") =>
      bed.request("POST", "/svc-admin/roles", {
        as,
        body: { key: `r-${crypto.randomUUID().slice(0, 8)}`, displayName: "R", orgId: bed.orgA, grants },
      });

    await t.step("an org admin cannot give itself svc:global:* through an org-level role", async () => {
      const chain = await bed.chainLength();
      await refused(await orgRole([{ pattern: "svc:global:*", effect: "Allow" }]), "svc:global:roles-manage");
      await refused(await orgRole([{ pattern: "svc:*:*", effect: "Allow" }]), "svc:global:users-erase");
      await refused(await orgRole([{ pattern: "*:*:*", effect: "Allow" }]));
      await refused(await orgRole([{ pattern: "s*:global:*", effect: "Allow" }]));
      assert.equal(await bed.chainLength(), chain, "nothing written");
    });

    await t.step("nor by adding the grant to an existing role, or through a policy", async () => {
      const role = await (await orgRole([{ pattern: "docs:org:read", effect: "Allow" }])).json();
      await refused(
        await bed.request("POST", `/svc-admin/roles/${role.id}/grants`, {
          as: "orgA",
          body: { pattern: "svc:global:users-erase", effect: "Allow" },
        }),
        "svc:global:users-erase",
      );
      await refused(
        await bed.request("POST", "/svc-admin/policies", {
          as: "orgA",
          body: {
            name: "sneaky",
            principalKind: "User",
            principalId: bed.users.orgA,
            orgId: bed.orgA,
            grants: [{ pattern: "svc:global:audit-read", effect: "Allow" }],
          },
        }),
      );
      assert.deepEqual((await bed.bed.storage.roles.listGrants(role.id)).map((g) => g.pattern), [
        "docs:org:read",
      ]);
    });

    await t.step("nor by assigning itself a role a realm admin put svc:global: grants in", async () => {
      const role = await (await orgRole([{ pattern: "svc:global:users-erase", effect: "Allow" }], "global"))
        .json();
      await refused(
        await bed.request("POST", "/svc-admin/role-assignments", {
          as: "orgA",
          body: { roleId: role.id, principalKind: "User", principalId: bed.users.orgA },
        }),
        "svc:global:users-erase",
      );
      assert.deepEqual(await bed.bed.storage.roles.listAssignmentsOfRole(role.id), []);
    });

    await t.step("what an org admin holds in its organization, it may grant there", async () => {
      const ok = await orgRole([{ pattern: "svc:org:roles-read", effect: "Allow" }, {
        pattern: "docs:*:*",
        effect: "Allow",
      }]);
      assert.equal(ok.status, 201, await ok.clone().text());
      const role = await ok.json();
      const assigned = await bed.request("POST", "/svc-admin/role-assignments", {
        as: "orgA",
        body: { roleId: role.id, principalKind: "User", principalId: bed.users.plain },
      });
      assert.equal(assigned.status, 201);
    });

    await t.step("an org admin creates no realm-level role", async () => {
      const res = await bed.request("POST", "/svc-admin/roles", {
        as: "orgA",
        body: { key: "realmwide", displayName: "R", grants: [] },
      });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error.code, "forbidden");
    });

    await t.step("a realm admin holding only roles-manage cannot grant other svc: permissions", async () => {
      const seed = seeder(bed.bed.database.db);
      const manager = await seed.user(bed.realmId);
      const managerRole = await seed.role(bed.realmId, "role-manager", [{
        pattern: "svc:global:roles-manage",
      }]);
      await seed.assign(bed.realmId, managerRole, { kind: "User", id: manager });
      const headers = { ...(await bearer(bed, manager, null)), "Content-Type": "application/json" };
      const create = (grants: unknown[]) =>
        bed.app.request("/svc-admin/roles", {
          method: "POST",
          headers,
          body: JSON.stringify({ key: `m-${crypto.randomUUID().slice(0, 8)}`, displayName: "M", grants }),
        });
      await refused(await create([{ pattern: "svc:global:*", effect: "Allow" }]), "svc:global:users-erase");
      // A realm-wide role reaches every organization: it needs svc:org: holders everywhere too.
      await refused(
        await create([{ pattern: "svc:org:roles-manage", effect: "Allow" }]),
        "svc:org:roles-manage",
      );
      assert.equal((await create([{ pattern: "svc:global:roles-manage", effect: "Allow" }])).status, 201);
      assert.equal((await create([{ pattern: "billing:global:*", effect: "Allow" }])).status, 201);
    });

    await t.step("the bootstrap administrator may grant any svc: permission", async () => {
      const res = await bed.request("POST", "/svc-admin/roles", {
        body: { key: "all", displayName: "All", grants: [{ pattern: "svc:*:*", effect: "Allow" }] },
      });
      assert.equal(res.status, 201);
    });
  } finally {
    await bed.close();
  }
});
