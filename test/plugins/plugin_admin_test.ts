/**
 * The plugin API's service-actor helpers (`PluginContext.admin`), as a third-party plugin uses
 * them: `mutateAsService` audits as actor kind `System` with the plugin's name as prefix (no entry
 * for a no-op); `suspendUser` / `reactivateUser` go through svc's paths (a repeat changes nothing);
 * `requireConfinedToOrganization` passes a user whose grants all lie within the organization and
 * refuses one holding anything realm-wide or in another organization.
 */
import { strict as assert } from "node:assert";
import { definePlugin } from "../../plugins/plugin.ts";
import { SvcError } from "../../core/errors.ts";
import { pluginBed } from "../support/plugins.ts";
import { seeder } from "../support/seed.ts";

Deno.test("plugin admin: service actor, suspension and the organization confinement", async (t) => {
  const plugged = await pluginBed([definePlugin({ name: "directory-sync" })]);
  try {
    const bed = plugged.admin.bed;
    const ctx = plugged.contexts[0];
    const realmId = bed.realmId;
    const seed = seeder(bed.database.db);
    const chain = async () => await bed.storage.adminAudit.list(realmId);

    await t.step("mutateAsService: actor kind System, id <plugin>:<actor>; none for a no-op", async () => {
      const before = (await chain()).length;
      await ctx.admin.mutateAsService(
        realmId,
        "job:1",
        () => Promise.resolve({ value: null, audit: { action: "directory_sync.run", target: null } }),
      );
      const entries = await chain();
      assert.equal(entries.length, before + 1);
      assert.equal(entries.at(-1)!.actorKind, "System");
      assert.equal(entries.at(-1)!.actorId, "directory-sync:job:1");
      await ctx.admin.mutateAsService(realmId, "job:1", () => Promise.resolve({ value: null, audit: null }));
      assert.equal((await chain()).length, before + 1);
    });

    await t.step("suspendUser and reactivateUser go through svc's paths", async () => {
      const user = await seed.user(realmId);
      const session =
        (await bed.auth.sessions.signIn({ realmId, userId: user, orgId: null, mfa: "Password" })).session;
      assert.deepEqual(await ctx.admin.suspendUser(realmId, user, "job:2"), { changed: true });
      assert.equal((await bed.storage.users.get(user))?.status, "Suspended");
      assert.equal(await bed.storage.sessions.getActive(session.id), null);
      const before = (await chain()).length;
      assert.deepEqual(await ctx.admin.suspendUser(realmId, user, "job:2"), { changed: false });
      assert.equal((await chain()).length, before);
      assert.equal((await chain()).at(-1)!.actorId, "directory-sync:job:2");
      assert.deepEqual(await ctx.admin.reactivateUser(realmId, user, "job:2"), { changed: true });
      assert.deepEqual(await ctx.admin.reactivateUser(realmId, user, "job:2"), { changed: false });
      assert.equal((await bed.storage.users.get(user))?.status, "Active");
    });

    await t.step("requireConfinedToOrganization", async () => {
      const [orgA, orgB] = [await seed.org(realmId), await seed.org(realmId)];
      const refused = (e: unknown) =>
        e instanceof SvcError && e.code === "subject_beyond_authority" && e.status === 403;
      const inside = await seed.user(realmId);
      const orgRole = await seed.role(realmId, "a-admin", [{ pattern: "svc:org:*" }], orgA);
      await seed.assign(realmId, orgRole, { kind: "User", id: inside }, orgA);
      const realmWide = await seed.user(realmId);
      const realmRole = await seed.role(realmId, "reader", [{ pattern: "svc:global:users-read" }]);
      await seed.assign(realmId, realmRole, { kind: "User", id: realmWide });
      const elsewhere = await seed.user(realmId);
      const bRole = await seed.role(realmId, "b-reader", [{ pattern: "svc:org:users-read" }], orgB);
      await seed.assign(realmId, bRole, { kind: "User", id: elsewhere }, orgB);
      await bed.snapshots.invalidateAll();
      await ctx.admin.requireConfinedToOrganization(realmId, orgA, { kind: "User", id: inside });
      await ctx.admin.requireConfinedToOrganization(realmId, orgA, {
        kind: "User",
        id: await seed.user(realmId),
      });
      await assert.rejects(
        () => ctx.admin.requireConfinedToOrganization(realmId, orgA, { kind: "User", id: realmWide }),
        refused,
      );
      await assert.rejects(
        () => ctx.admin.requireConfinedToOrganization(realmId, orgA, { kind: "User", id: elsewhere }),
        refused,
      );
      await ctx.admin.requireConfinedToOrganization(realmId, orgB, { kind: "User", id: elsewhere });
      // Through a transaction too.
      await bed.storage.transaction((tx) =>
        assert.rejects(
          () => ctx.admin.requireConfinedToOrganization(realmId, orgA, { kind: "User", id: realmWide }, tx),
          refused,
        )
      );
    });
  } finally {
    await plugged.close();
  }
});
