/**
 * Issue 24 over HTTP, on the Hono app with real storage and the federation and workload plugins
 * mounted: every finding of the attack run, replayed through the real routes, is refused by the
 * one authority rule (`core/authority`, asked through `http/admin/authority.ts`).
 *
 * 2. An organization admin cannot hand itself plugin permissions; one holding them through an
 *    org role (granted before the fix) gets no realm-wide plugin power; a workload admin cannot
 *    map its key to a service account holding `svc-admin`.
 * 3. An organization admin cannot change a member holding `svc-admin` pinned to the organization.
 * 4. An organization admin cannot impersonate a member with org-pinned `svc-admin`, nor one with
 *    realm-wide plugin permissions.
 * 5. A holder of only `svc:global:import` cannot set a password on, suspend, or write attributes
 *    of realm admins; a suspension by import ends the user's sessions and access tokens at once.
 */
import assert from "node:assert/strict";
import { federationPlugin } from "../../../plugins/federation/mod.ts";
import { workloadFederationPlugin } from "../../../plugins/workload-federation/mod.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";

Deno.test("authority over HTTP (issue 24): escalation, takeover, impersonation and import findings are refused", async (t) => {
  const plugged = await pluginBed([federationPlugin(), workloadFederationPlugin()]);
  try {
    const { admin } = plugged;
    const { bed, realmId, orgA, orgB } = admin;
    const storage = bed.storage;
    const seed = seeder(bed.database.db);
    const sign = async (userId: string, orgId: string | null) =>
      (await bed.auth.sessions.signIn({ realmId, userId, orgId, mfa: "MultiFactor" })).tokens.accessToken;
    const call = async (
      method: string,
      path: string,
      token: string,
      body?: unknown,
      type = "application/json",
    ) => {
      const res = await plugged.app.request(path, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "Content-Type": type }),
        },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
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
      assert.equal(res.body.error?.code, code, JSON.stringify(res.body));
    };
    const svcAdminRole = (await storage.roles.getByKey(realmId, "svc-admin", null))!.id;
    const memberOfA = async () => {
      const id = await seed.user(realmId);
      await storage.organizations.addMember(orgA, id);
      return id;
    };
    const root = admin.tokens.global;
    const orgAdminA = admin.tokens.orgA;

    await t.step("2: an org admin cannot hand itself plugin permissions through an org role", async () => {
      const created = await call("POST", "/svc-admin/roles", orgAdminA, {
        key: "plugins-everything",
        displayName: "Everything",
        orgId: orgA,
        grants: [{ pattern: "workload:*:*", effect: "Allow" }, {
          pattern: "federation:*:*",
          effect: "Allow",
        }],
      });
      refused(created, 403, "escalation_refused");
      const missing = created.body.error.details.missing as string[];
      assert.ok(missing.includes("workload:global:policies-manage"), missing.join());
      assert.ok(missing.includes("federation:global:providers-manage"), missing.join());
      // Not even the plugin's org permissions it does not hold, nor a global one alone.
      for (const pattern of ["federation:org:providers-manage", "federation:global:providers-read"]) {
        refused(
          await call("POST", "/svc-admin/roles", orgAdminA, {
            key: `one-${pattern.replaceAll(":", "-")}`,
            displayName: "One",
            orgId: orgA,
            grants: [{ pattern, effect: "Allow" }],
          }),
          403,
          "escalation_refused",
        );
      }
      assert.equal(
        (await storage.roles.list(realmId, { orgId: orgA })).some((r) => r.key.startsWith("one-")),
        false,
      );
      // The realm's root (every svc: permission) is the authority over plugin permissions.
      const realmRole = await call("POST", "/svc-admin/roles", root, {
        key: "workload-admin",
        displayName: "Workload admin",
        grants: [{ pattern: "workload:global:*", effect: "Allow" }],
      });
      assert.equal(realmRole.status, 201, JSON.stringify(realmRole.body));
    });

    await t.step(
      "2: plugin permissions held through an org role give no realm-wide plugin power",
      async () => {
        // As an org role granted before the fix would: everything of both plugins, pinned to A.
        const legacy = await seed.role(realmId, "legacy-plugins", [
          { pattern: "workload:*:*" },
          { pattern: "federation:*:*" },
        ], orgA);
        const holder = await memberOfA();
        await seed.assign(realmId, legacy, { kind: "User", id: holder }, orgA);
        await bed.snapshots.invalidateAll();
        const token = await sign(holder, orgA);
        refused(await call("GET", "/svc-admin/workload/policies", token), 403, "forbidden");
        const providers = await call("POST", "/svc-admin/federation/providers", token, {
          orgId: orgB,
          issuer: "https://idp.example.test",
          clientId: "svc",
          clientSecret: "s3cret-s3cret",
          makeDefault: true,
        });
        assert.equal(providers.status, 404, JSON.stringify(providers.body));
        assert.equal((await storage.organizations.get(orgB))!.defaultIdentityProviderId, null);
      },
    );

    await t.step(
      "2: a workload admin cannot map its key to a service account holding svc-admin",
      async () => {
        const workloadAdmin = await seed.user(realmId);
        const role = await seed.role(realmId, "workload-only", [{ pattern: "workload:global:*" }]);
        await seed.assign(realmId, role, { kind: "User", id: workloadAdmin });
        await bed.snapshots.invalidateAll();
        const token = await sign(workloadAdmin, null);
        const accountOf = async (key: string) => {
          const res = await call("POST", "/svc-admin/service-accounts", root, { key, displayName: key });
          assert.equal(res.status, 201, JSON.stringify(res.body));
          return res.body.id as string;
        };
        const powerful = await accountOf("powerful-bot");
        const assigned = await call("POST", "/svc-admin/role-assignments", root, {
          roleId: svcAdminRole,
          principalKind: "ServiceAccount",
          principalId: powerful,
        });
        assert.equal(assigned.status, 201, JSON.stringify(assigned.body));
        const harmless = await accountOf("harmless-bot");
        const key = await crypto.subtle.generateKey(
          {
            name: "RSASSA-PKCS1-v1_5",
            modulusLength: 2048,
            publicExponent: new Uint8Array([1, 0, 1]),
            hash: "SHA-256",
          },
          true,
          ["sign", "verify"],
        );
        const jwk = {
          ...(await crypto.subtle.exportKey("jwk", key.publicKey)),
          kid: "mine",
          alg: "RS256",
          use: "sig",
        };
        delete (jwk as { key_ops?: unknown }).key_ops;
        delete (jwk as { ext?: unknown }).ext;
        const policy = (name: string, serviceAccountId: string) => ({
          name,
          issuer: "https://ci.example.test",
          jwks: { keys: [jwk] },
          audience: "https://svc.example.test",
          requiredClaims: { repository: "me/mine" },
          serviceAccountId,
        });
        refused(
          await call("POST", "/svc-admin/workload/policies", token, policy("takeover", powerful)),
          403,
          "subject_beyond_authority",
        );
        const fine = await call("POST", "/svc-admin/workload/policies", token, policy("fine", harmless));
        assert.equal(fine.status, 201, JSON.stringify(fine.body));
        // Nor by moving an existing policy onto the powerful account.
        refused(
          await call("PATCH", `/svc-admin/workload/policies/${fine.body.id}`, token, {
            serviceAccountId: powerful,
          }),
          403,
          "subject_beyond_authority",
        );
      },
    );

    // A member of A holding svc-admin pinned to A: realm-wide power once signed in to A.
    const pinnedAdmin = await memberOfA();
    await seed.assign(realmId, svcAdminRole, { kind: "User", id: pinnedAdmin }, orgA);
    // A member of A holding the plugins' permissions realm-wide.
    const pluginAdmin = await memberOfA();
    const pluginsRole = await seed.role(realmId, "plugins-admin", [{ pattern: "federation:*:*" }, {
      pattern: "workload:*:*",
    }]);
    await seed.assign(realmId, pluginsRole, { kind: "User", id: pluginAdmin });
    await bed.snapshots.invalidateAll();

    await t.step(
      "3: an org admin cannot take over a member whose svc-admin is pinned to the org",
      async () => {
        const before = (await storage.users.get(pinnedAdmin))!;
        refused(
          await call("PATCH", `/svc-admin/users/${pinnedAdmin}`, orgAdminA, { email: "mine@evil.test" }),
          403,
          "user_outside_organization",
        );
        refused(
          await call("POST", `/svc-admin/users/${pinnedAdmin}/factors/reset`, orgAdminA, {
            reason: "takeover",
          }),
          403,
          "user_outside_organization",
        );
        assert.equal((await storage.users.get(pinnedAdmin))!.email, before.email);
        // A realm admin short of svc-admin cannot either.
        const usersAdmin = await seed.user(realmId);
        const role = await seed.role(realmId, "users-admin", [{ pattern: "svc:global:users-*" }]);
        await seed.assign(realmId, role, { kind: "User", id: usersAdmin });
        await bed.snapshots.invalidateAll();
        refused(
          await call("PATCH", `/svc-admin/users/${pinnedAdmin}`, await sign(usersAdmin, null), {
            email: "mine@evil.test",
          }),
          403,
          "subject_beyond_authority",
        );
        // The root can.
        const changed = await call("PATCH", `/svc-admin/users/${pinnedAdmin}`, root, {
          displayName: "Pinned",
        });
        assert.equal(changed.status, 200, JSON.stringify(changed.body));
      },
    );

    await t.step("2: an org admin cannot hand out a group's roles by adding members to it", async () => {
      const powerful = await seed.group(realmId, "pinned-admins", [], orgA);
      await seed.assign(realmId, svcAdminRole, { kind: "Group", id: powerful }, orgA);
      const harmless = await seed.group(realmId, "readers", [], orgA);
      await bed.snapshots.invalidateAll();
      refused(
        await call("POST", `/svc-admin/groups/${powerful}/members`, orgAdminA, { userId: admin.users.plain }),
        403,
        "escalation_refused",
      );
      assert.deepEqual(await storage.groups.listMembers(powerful), []);
      const joined = await call("POST", `/svc-admin/groups/${harmless}/members`, orgAdminA, {
        userId: admin.users.plain,
      });
      assert.equal(joined.status, 201, JSON.stringify(joined.body));
    });

    await t.step("4: an org admin cannot impersonate more privileged members", async () => {
      for (const target of [pinnedAdmin, pluginAdmin]) {
        const res = await call("POST", "/svc-admin/impersonation", orgAdminA, {
          targetUserId: target,
          reason: "support ticket 42",
        });
        refused(res, 403, "impersonation_not_allowed");
      }
      assert.equal((await storage.impersonations.list(realmId)).total, 0);
      const plain = await call("POST", "/svc-admin/impersonation", orgAdminA, {
        targetUserId: admin.users.plain,
        reason: "support ticket 43",
      });
      assert.equal(plain.status, 201, JSON.stringify(plain.body));
    });

    await t.step(
      "8b: an org admin reads a shared member's activity in its own organization only",
      async () => {
        const shared = await memberOfA();
        await storage.organizations.addMember(orgB, shared);
        const inA = await bed.auth.sessions.signIn({ realmId, userId: shared, orgId: orgA, mfa: "Password" });
        const inB = await bed.auth.sessions.signIn({ realmId, userId: shared, orgId: orgB, mfa: "Password" });
        const outside = await bed.auth.sessions.signIn({
          realmId,
          userId: shared,
          orgId: null,
          mfa: "Password",
        });
        for (
          const [orgId, ipAddress] of [[orgA, "198.51.100.1"], [orgB, "203.0.113.9"], [null, "192.0.2.7"]]
        ) {
          await storage.securityEvents.append({
            realmId,
            userId: shared,
            orgId,
            kind: "login.succeeded",
            ipAddress,
          });
        }
        const sessions = await call("GET", `/svc-admin/users/${shared}/sessions`, orgAdminA);
        assert.equal(sessions.status, 200, JSON.stringify(sessions.body));
        assert.deepEqual(sessions.body.items.map((x: { id: string }) => x.id), [inA.session.id]);
        const events = await call("GET", `/svc-admin/users/${shared}/security-events`, orgAdminA);
        assert.equal(events.status, 200, JSON.stringify(events.body));
        assert.deepEqual(events.body.events.map((e: { ipAddress: string }) => e.ipAddress), ["198.51.100.1"]);
        // The realm administrator reads everything.
        const all = await call("GET", `/svc-admin/users/${shared}/sessions`, root);
        assert.deepEqual(
          all.body.items.map((x: { id: string }) => x.id).sort(),
          [inA.session.id, inB.session.id, outside.session.id].sort(),
        );
        const allEvents = await call("GET", `/svc-admin/users/${shared}/security-events`, root);
        assert.equal(allEvents.body.events.length, 3);
        // A member of A only: its activity outside any organization is A's admin's too.
        const own = await memberOfA();
        const ownSession = await bed.auth.sessions.signIn({
          realmId,
          userId: own,
          orgId: null,
          mfa: "Password",
        });
        const ownSessions = await call("GET", `/svc-admin/users/${own}/sessions`, orgAdminA);
        assert.deepEqual(ownSessions.body.items.map((x: { id: string }) => x.id), [ownSession.session.id]);
      },
    );

    await t.step(
      "5: an import operator does not touch realm admins; an import suspension ends access",
      async () => {
        const importer = await seed.user(realmId);
        const role = await seed.role(realmId, "importer", [{ pattern: "svc:global:import" }]);
        await seed.assign(realmId, role, { kind: "User", id: importer });
        const [passwordless, other, plainUser] = [
          await seed.user(realmId),
          await seed.user(realmId),
          await memberOfA(),
        ];
        for (const id of [passwordless, other]) {
          await seed.assign(realmId, svcAdminRole, { kind: "User", id });
        }
        await bed.snapshots.invalidateAll();
        const plainToken = await sign(plainUser, null);
        assert.equal((await call("GET", "/profile/permissions", plainToken)).status, 200);
        const email = async (id: string) => (await storage.users.get(id))!.email;
        const lines = [
          {
            email: await email(passwordless),
            custom_password_hash: {
              algorithm: "bcrypt",
              hash: { value: "$2b$04$.umPE/6kJRO5OijOTz3jZ.2i.MFCC9fOp99JjWjYp9calWRLIJAvm" },
            },
          },
          { email: await email(other), blocked: true, app_metadata: { orgId: orgB, clearance: "top" } },
          { email: await email(plainUser), blocked: true },
        ].map((line) => JSON.stringify(line)).join("\n");
        const res = await call(
          "POST",
          "/svc-admin/imports/auth0",
          await sign(importer, null),
          lines,
          "application/x-ndjson",
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const errors = (res.body.issues as { severity: string; key: string }[]).filter((i) =>
          i.severity === "Error"
        );
        assert.deepEqual(
          errors.map((i) => i.key).sort(),
          [await email(passwordless), await email(other)].sort(),
        );
        assert.deepEqual(await storage.passwordCredentials.list(passwordless), []);
        const untouched = (await storage.users.get(other))!;
        assert.equal(untouched.status, "Active");
        assert.deepEqual(untouched.attributes, {});
        // The plain user is suspended as the suspend route does: sessions and tokens end at once.
        assert.equal((await storage.users.get(plainUser))!.status, "Suspended");
        assert.deepEqual(await storage.sessions.listActiveForUser(plainUser), []);
        assert.equal((await call("GET", "/profile/permissions", plainToken)).status, 401);
      },
    );
  } finally {
    await plugged.close();
  }
});
