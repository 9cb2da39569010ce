/**
 * The authority rule on the routes that act on a subject's credentials (issue 24, the routes
 * wired after the first pass): service-account mutations, API keys minted for or revoked from an
 * owner, and the break-glass drill and rotation. A realm admin holding less than the subject is
 * refused with 403 `subject_beyond_authority`, an organization admin as the route's fence answers
 * elsewhere (403 for realm-only routes, 404 for another organization's key), and the realm's root
 * (holding more) passes.
 */
import assert from "node:assert/strict";
import { createBreakGlassAccount } from "../../../core/break-glass/account.ts";
import { adminBed } from "../../support/admin.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("acting on a subject's credentials needs authority over the subject", async (t) => {
  const admin = await adminBed();
  try {
    const { bed, realmId, orgA, orgB } = admin;
    const storage = bed.storage;
    const seed = seeder(bed.database.db);
    const svcAdminRole = (await storage.roles.getByKey(realmId, "svc-admin", null))!.id;
    // A realm admin of credentials only: it manages service accounts, API keys and break-glass.
    const lesser = await seed.user(realmId);
    const credentialsRole = await seed.role(realmId, "credentials-admin", [
      { pattern: "svc:global:service-accounts-manage" },
      { pattern: "svc:global:api-keys-manage" },
      { pattern: "svc:global:break-glass-manage" },
    ]);
    await seed.assign(realmId, credentialsRole, { kind: "User", id: lesser });
    await bed.snapshots.invalidateAll();
    const lesserToken =
      (await bed.auth.sessions.signIn({ realmId, userId: lesser, orgId: null, mfa: "MultiFactor" }))
        .tokens.accessToken;
    const call = async (method: string, path: string, token: string | "global" | "orgA", body?: unknown) => {
      const res = token === "global" || token === "orgA"
        ? await admin.request(method, path, { as: token, body })
        : await admin.app.request(path, {
          method,
          headers: {
            Authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const text = await res.text();
      return { status: res.status, body: text === "" ? null : JSON.parse(text) };
    };
    const refused = (
      res: { status: number; body: { error?: { code: string } } },
      status: number,
      code: string,
    ) => {
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(res.body?.error?.code, code, JSON.stringify(res.body));
    };
    const account = async (key: string) => {
      const res = await call("POST", "/svc-admin/service-accounts", "global", { key, displayName: key });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as string;
    };
    const privileged = await account("privileged");
    await storage.roles.assign({
      roleId: svcAdminRole,
      principalKind: "ServiceAccount",
      principalId: privileged,
      orgId: null,
    });
    const ordinary = await account("ordinary");
    await bed.snapshots.invalidateAll();

    await t.step("service accounts: no rotation, disabling or deletion of one reaching further", async () => {
      const before = await admin.chainLength();
      const secretBefore = (await storage.serviceAccounts.get(privileged))!;
      for (
        const [method, path] of [
          ["POST", `/svc-admin/service-accounts/${privileged}/rotate-secret`],
          ["POST", `/svc-admin/service-accounts/${privileged}/disable`],
          ["DELETE", `/svc-admin/service-accounts/${privileged}`],
        ] as const
      ) {
        const res = await call(method, path, lesserToken);
        refused(res, 403, "subject_beyond_authority");
        assert.ok((res.body.error.details.missing as string[]).includes("svc:global:roles-manage"));
        // An organization admin does not pass the realm-only fence at all.
        refused(await call(method, path, "orgA"), 403, "forbidden");
      }
      const after = (await storage.serviceAccounts.get(privileged))!;
      assert.deepEqual(after, secretBefore, "nothing changed");
      assert.equal(await admin.chainLength(), before, "nothing audited");
      // One within the caller's authority: rotated; the root rotates the privileged one.
      const rotated = await call(
        "POST",
        `/svc-admin/service-accounts/${ordinary}/rotate-secret`,
        lesserToken,
      );
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      assert.match(rotated.body.secret, /^sas_/);
      const disabled = await call("POST", `/svc-admin/service-accounts/${ordinary}/disable`, lesserToken);
      assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
      const byRoot = await call("POST", `/svc-admin/service-accounts/${privileged}/rotate-secret`, "global");
      assert.equal(byRoot.status, 200, JSON.stringify(byRoot.body));
      // Disabled, then enabled again by someone who may not: refused too.
      assert.equal(
        (await call("POST", `/svc-admin/service-accounts/${privileged}/disable`, "global")).status,
        200,
      );
      refused(
        await call("POST", `/svc-admin/service-accounts/${privileged}/enable`, lesserToken),
        403,
        "subject_beyond_authority",
      );
      assert.equal((await storage.serviceAccounts.get(privileged))!.disabled, true);
      assert.equal(
        (await call("POST", `/svc-admin/service-accounts/${privileged}/enable`, "global")).status,
        200,
      );
      // An unknown account is still 404.
      refused(
        await call("POST", `/svc-admin/service-accounts/${crypto.randomUUID()}/rotate-secret`, lesserToken),
        404,
        "not_found",
      );
    });

    await t.step("API keys: none minted for an owner reaching further than the caller", async () => {
      const before = await admin.chainLength();
      for (
        const owner of [
          { ownerKind: "ServiceAccount", ownerId: privileged },
          { ownerKind: "User", ownerId: admin.users.global },
        ]
      ) {
        refused(
          await call("POST", "/svc-admin/api-keys", lesserToken, { ...owner, name: "grab" }),
          403,
          "subject_beyond_authority",
        );
        refused(
          await call("POST", "/svc-admin/api-keys", "orgA", { ...owner, name: "grab" }),
          403,
          "forbidden",
        );
      }
      assert.equal(await admin.chainLength(), before, "nothing audited");
      assert.equal(
        (await storage.apiKeys.listPage(realmId, { ownerId: privileged }, { offset: 0, limit: 10 })).total,
        0,
      );
      for (
        const owner of [{ ownerKind: "ServiceAccount", ownerId: ordinary }, {
          ownerKind: "User",
          ownerId: lesser,
        }]
      ) {
        const ok = await call("POST", "/svc-admin/api-keys", lesserToken, { ...owner, name: "fine" });
        assert.equal(ok.status, 201, JSON.stringify(ok.body));
      }
      const byRoot = await call("POST", "/svc-admin/api-keys", "global", {
        ownerKind: "ServiceAccount",
        ownerId: privileged,
        name: "root's",
      });
      assert.equal(byRoot.status, 201, JSON.stringify(byRoot.body));
    });

    await t.step("API keys: an org admin revokes only keys of users it may manage", async () => {
      const keyOf = async (ownerId: string) => {
        const res = await call("POST", "/svc-admin/api-keys", "global", {
          ownerKind: "User",
          ownerId,
          name: "k",
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.id as string;
      };
      // A realm admin who is a member of A; a member of A and B; a plain member of A.
      const realmAdminInA = await seed.user(realmId);
      await storage.organizations.addMember(orgA, realmAdminInA);
      await seed.assign(realmId, svcAdminRole, { kind: "User", id: realmAdminInA });
      const inBoth = await seed.user(realmId);
      await storage.organizations.addMember(orgA, inBoth);
      await storage.organizations.addMember(orgB, inBoth);
      await bed.snapshots.invalidateAll();
      for (const ownerId of [realmAdminInA, inBoth]) {
        const key = await keyOf(ownerId);
        refused(await call("POST", `/svc-admin/api-keys/${key}/revoke`, "orgA"), 404, "not_found");
        assert.equal((await storage.apiKeys.get(key))!.revokedAt, null);
        // A realm-wide revocation only takes power away: always possible.
        assert.equal((await call("POST", `/svc-admin/api-keys/${key}/revoke`, lesserToken)).status, 204);
        assert.notEqual((await storage.apiKeys.get(key))!.revokedAt, null);
      }
      const plainKey = await keyOf(admin.users.plain);
      assert.equal((await call("POST", `/svc-admin/api-keys/${plainKey}/revoke`, "orgA")).status, 204);
      assert.notEqual((await storage.apiKeys.get(plainKey))!.revokedAt, null);
    });

    await t.step("removals lift a Deny only by a caller who may hand out what it denied", async () => {
      // A groups-and-roles admin that does not hold svc:global:users-read.
      const groupsAdmin = await seed.user(realmId);
      const role = await seed.role(realmId, "groups-roles-admin", [
        { pattern: "svc:global:groups-manage" },
        { pattern: "svc:global:roles-manage" },
      ]);
      await seed.assign(realmId, role, { kind: "User", id: groupsAdmin });
      const denyRead = await seed.role(realmId, "no-user-reading", [{
        pattern: "svc:global:users-read",
        effect: "Deny",
      }]);
      const allowRead = await seed.role(realmId, "user-reading", [{ pattern: "svc:global:users-read" }]);
      const member = await seed.user(realmId);
      const group = await seed.group(realmId, "readers-denied", [member]);
      await seed.assign(realmId, denyRead, { kind: "Group", id: group });
      await seed.assign(realmId, denyRead, { kind: "User", id: member });
      await seed.assign(realmId, allowRead, { kind: "User", id: member });
      await bed.snapshots.invalidateAll();
      const token =
        (await bed.auth.sessions.signIn({ realmId, userId: groupsAdmin, orgId: null, mfa: "MultiFactor" }))
          .tokens.accessToken;
      const assignments = await storage.roles.listAssignmentsForPrincipal("User", member);
      const denyAssignment = assignments.find((a) => a.roleId === denyRead)!.id;
      const allowAssignment = assignments.find((a) => a.roleId === allowRead)!.id;
      const before = await admin.chainLength();

      const leave = await call("DELETE", `/svc-admin/groups/${group}/members/${member}`, token);
      refused(leave, 403, "escalation_refused");
      assert.deepEqual(leave.body.error.details.missing, ["svc:global:users-read"]);
      refused(
        await call("DELETE", `/svc-admin/role-assignments/${denyAssignment}`, token),
        403,
        "escalation_refused",
      );
      assert.equal(await admin.chainLength(), before, "nothing audited");
      assert.equal((await storage.groups.listMembers(group)).length, 1);
      // Taking an Allow away hands out nothing: no authority needed.
      assert.equal(
        (await call("DELETE", `/svc-admin/role-assignments/${allowAssignment}`, token)).status,
        204,
      );
      // Nor a Deny grant taken out of the role itself.
      const denyGrant = (await storage.roles.listGrants(denyRead))[0].id;
      refused(
        await call("DELETE", `/svc-admin/roles/${denyRead}/grants/${denyGrant}`, token),
        403,
        "escalation_refused",
      );
      assert.equal((await storage.roles.listGrants(denyRead)).length, 1);
      assert.equal(await admin.chainLength(), before + 1, "only the Allow's removal audited");
      // Nor the whole role.
      refused(await call("DELETE", `/svc-admin/roles/${denyRead}`, token), 403, "escalation_refused");
      assert.notEqual(await storage.roles.get(denyRead), null);
      // Nor a policy denying it.
      const denyPolicy = await seed.policy(realmId, "no-user-reading", { kind: "User", id: member }, [
        { pattern: "svc:global:users-read", effect: "Deny" },
      ]);
      refused(await call("DELETE", `/svc-admin/policies/${denyPolicy}`, token), 403, "escalation_refused");
      assert.notEqual(await storage.policies.get(denyPolicy), null);
      assert.equal((await call("DELETE", `/svc-admin/policies/${denyPolicy}`, "global")).status, 204);
      // Nor the whole group.
      refused(await call("DELETE", `/svc-admin/groups/${group}`, token), 403, "escalation_refused");
      assert.notEqual(await storage.groups.get(group), null);
      // The root holds what the Deny denied.
      assert.equal(
        (await call("DELETE", `/svc-admin/groups/${group}/members/${member}`, "global")).status,
        204,
      );
      assert.equal(
        (await call("DELETE", `/svc-admin/role-assignments/${denyAssignment}`, "global")).status,
        204,
      );
    });

    await t.step("break-glass: drill and rotation only by a caller covering the account", async () => {
      const { password } = await createBreakGlassAccount({
        storage,
        passwords: bed.login.passwords,
        random: bed.random,
        clock: bed.clock,
      }, { realmId, actor: { id: "svc:cli", kind: "System" } });
      const before = await admin.chainLength();
      refused(
        await call("POST", "/svc-admin/break-glass/rotate", lesserToken),
        403,
        "subject_beyond_authority",
      );
      refused(
        await call("POST", "/svc-admin/break-glass/drill", lesserToken, { password }),
        403,
        "subject_beyond_authority",
      );
      refused(await call("POST", "/svc-admin/break-glass/rotate", "orgA"), 403, "forbidden");
      assert.equal(await admin.chainLength(), before, "nothing audited");
      assert.equal((await storage.breakGlass.get(realmId))?.lastDrillAt ?? null, null);
      const drilled = await call("POST", "/svc-admin/break-glass/drill", "global", { password });
      assert.equal(drilled.status, 200, JSON.stringify(drilled.body));
      const rotated = await call("POST", "/svc-admin/break-glass/rotate", "global");
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      assert.equal(typeof rotated.body.password, "string");
    });
  } finally {
    await admin.close();
  }
});
