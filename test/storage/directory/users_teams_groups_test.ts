/**
 * Conformance of the user, team and group stores on both drivers.
 */
import assert from "node:assert/strict";
import { normalizeEmail } from "../../../core/storage/users.ts";
import { conformance, rejectsWith } from "./support.ts";

conformance({
  users: {
    "email is trimmed and lowercased, and realm-scoped": async ({ stores, realm, unique, clock }) => {
      const [r1, r2] = [await realm(), await realm()];
      const local = unique("Ada");
      const user = await stores.users.create({
        realmId: r1.id,
        email: `  ${local}@Example.COM `,
        displayName: "Ada",
        attributes: { department: "eng", level: 3 },
      });
      assert.equal(user.email, `${local.toLowerCase()}@example.com`);
      assert.equal(user.status, "Active");
      assert.equal(user.emailVerified, false);
      assert.equal(user.isBreakGlass, false);
      assert.equal(user.anonymizedAt, null);
      assert.deepEqual(user.attributes, { department: "eng", level: 3 });
      assert.equal(user.createdAt.getTime(), clock.now());
      assert.deepEqual(await stores.users.get(user.id), user);
      assert.deepEqual(await stores.users.findByEmail(r1.id, `${local.toUpperCase()}@EXAMPLE.com  `), user);
      assert.equal(await stores.users.findByEmail(r2.id, user.email), null);
      const other = await stores.users.create({ realmId: r2.id, email: user.email });
      assert.notEqual(other.id, user.id);
      await rejectsWith(
        stores.users.create({ realmId: r1.id, email: user.email.toUpperCase() }),
        "conflict",
        "user_email_taken",
      );
      assert.equal(normalizeEmail(" A@B.C "), "a@b.c");
    },
    "invalid input and unknown ids": async ({ stores, realm, uuid }) => {
      const r = await realm();
      await rejectsWith(stores.users.create({ realmId: r.id, email: "   " }), "invalid_request");
      await rejectsWith(stores.users.create({ realmId: uuid(), email: "x@example.com" }), "not_found");
      await rejectsWith(
        stores.users.create({
          realmId: r.id,
          email: "y@example.com",
          attributes: [] as unknown as Record<string, unknown>,
        }),
        "invalid_request",
      );
      assert.equal(await stores.users.get(uuid()), null);
      assert.equal(await stores.users.get("x"), null);
      assert.equal(await stores.users.findByEmail("x", "x@example.com"), null);
      await rejectsWith(stores.users.update(uuid(), { status: "Suspended" }), "not_found");
      await rejectsWith(stores.users.mergeAttributes(uuid(), { a: 1 }), "not_found");
    },
    "update changes status, attributes, display name, verification and bumps updatedAt": async (
      { stores, realm, user, clock },
    ) => {
      const r = await realm();
      const u = await user(r.id);
      clock.advance(60_000);
      const updated = await stores.users.update(u.id, {
        status: "Suspended",
        attributes: { tier: "gold", nested: { a: [1, 2] } },
        displayName: "Grace",
        emailVerified: true,
      });
      assert.deepEqual(updated, {
        ...u,
        status: "Suspended",
        attributes: { tier: "gold", nested: { a: [1, 2] } },
        displayName: "Grace",
        emailVerified: true,
        updatedAt: new Date(clock.now()),
        version: u.version + 1,
      });
      assert.deepEqual(await stores.users.get(u.id), updated);
      const cleared = await stores.users.update(u.id, { displayName: null, status: "Active" });
      assert.equal(cleared.displayName, null);
      assert.equal(cleared.status, "Active");
      assert.deepEqual(cleared.attributes, updated.attributes);
    },
    "mergeAttributes overwrites given keys only": async ({ stores, realm }) => {
      const r = await realm();
      const u = await stores.users.create({
        realmId: r.id,
        email: "merge@example.com",
        attributes: { a: 1, b: 2 },
      });
      const merged = await stores.users.mergeAttributes(u.id, { b: 3, c: "x" });
      assert.deepEqual(merged.attributes, { a: 1, b: 3, c: "x" });
    },
    "changing the email keeps the natural key unique": async ({ stores, realm, user }) => {
      const r = await realm();
      const [a, b] = [await user(r.id), await user(r.id)];
      await rejectsWith(
        stores.users.update(a.id, { email: ` ${b.email.toUpperCase()}` }),
        "conflict",
        "user_email_taken",
      );
      const moved = await stores.users.update(a.id, { email: " New.Address@Example.com " });
      assert.equal(moved.email, "new.address@example.com");
      assert.equal((await stores.users.findByEmail(r.id, "NEW.address@example.com"))?.id, a.id);
    },
    "listByRealm is in creation order, then id, paged": async ({ stores, realm, user, clock }) => {
      const r = await realm();
      const made = [];
      for (let i = 0; i < 5; i++) {
        if (i % 2 === 0) clock.advance(1);
        made.push(await user(r.id));
      }
      const expected = made.sort((a, b) =>
        a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)
      );
      assert.deepEqual(await stores.users.listByRealm(r.id), expected);
      assert.deepEqual(await stores.users.listByRealm(r.id, { offset: 1, limit: 2 }), expected.slice(1, 3));
      assert.deepEqual(await stores.users.listByRealm((await realm()).id), []);
    },
  },

  teams: {
    "create, read, list; names unique per organization": async ({ stores, org, unique, clock }) => {
      const o = await org();
      const name = unique("team");
      const team = await stores.teams.create({ orgId: o.id, name });
      assert.deepEqual(team, {
        id: team.id,
        realmId: o.realmId,
        orgId: o.id,
        name,
        createdAt: new Date(clock.now()),
      });
      assert.deepEqual(await stores.teams.get(team.id), team);
      await rejectsWith(stores.teams.create({ orgId: o.id, name }), "conflict", "team_name_taken");
      const elsewhere = await stores.teams.create({ orgId: (await org(o.realmId)).id, name });
      assert.equal(elsewhere.name, name);
      clock.advance(1);
      const second = await stores.teams.create({ orgId: o.id, name: unique("team") });
      assert.deepEqual((await stores.teams.listByOrg(o.id)).map((t) => t.id), [team.id, second.id]);
    },
    "members and the teams of a user in one organization": async (
      { stores, realm, org, user, uuid, clock },
    ) => {
      const r = await realm();
      const [o1, o2] = [await org(r.id), await org(r.id)];
      const u = await user(r.id);
      const [t1, t2, t3] = [
        await stores.teams.create({ orgId: o1.id, name: "a" }),
        await stores.teams.create({ orgId: o1.id, name: "b" }),
        await stores.teams.create({ orgId: o2.id, name: "a" }),
      ];
      for (const t of [t1, t2, t3]) await stores.teams.addMember(t.id, u.id);
      assert.deepEqual(await stores.teams.listTeamIdsOfUser(u.id, o1.id), [t1.id, t2.id].sort());
      assert.deepEqual(await stores.teams.listTeamIdsOfUser(u.id, o2.id), [t3.id]);
      assert.deepEqual(await stores.teams.listTeamIdsOfUser(u.id, uuid()), []);
      await rejectsWith(stores.teams.addMember(t1.id, u.id), "conflict", "team_member_exists");
      clock.advance(1);
      const v = await user(r.id);
      await stores.teams.addMember(t1.id, v.id);
      assert.deepEqual((await stores.teams.listMembers(t1.id)).map((m) => m.userId), [u.id, v.id]);
      assert.equal(await stores.teams.removeMember(t1.id, u.id), true);
      assert.equal(await stores.teams.removeMember(t1.id, u.id), false);
      assert.deepEqual(await stores.teams.listTeamIdsOfUser(u.id, o1.id), [t2.id]);
      assert.equal(await stores.teams.delete(t2.id), true);
      assert.equal(await stores.teams.delete(t2.id), false);
      assert.deepEqual(await stores.teams.listTeamIdsOfUser(u.id, o1.id), []);
      assert.equal(await stores.teams.get(t2.id), null);
    },
    "unknown ids and cross-realm users": async ({ stores, realm, org, user, uuid }) => {
      const o = await org();
      const t = await stores.teams.create({ orgId: o.id, name: "x" });
      await rejectsWith(stores.teams.create({ orgId: uuid(), name: "x" }), "not_found");
      await rejectsWith(stores.teams.addMember(uuid(), (await user(o.realmId)).id), "not_found");
      await rejectsWith(stores.teams.addMember(t.id, uuid()), "not_found");
      await rejectsWith(stores.teams.addMember(t.id, (await user((await realm()).id)).id), "invalid_request");
      assert.equal(await stores.teams.get(uuid()), null);
      assert.deepEqual(await stores.teams.listMembers(uuid()), []);
    },
  },

  groups: {
    "realm-level and org-level groups with per-level keys": async ({ stores, realm, org }) => {
      const r = await realm();
      const o = await org(r.id);
      const realmLevel = await stores.groups.create({ realmId: r.id, key: "admins", displayName: "Admins" });
      const orgLevel = await stores.groups.create({
        realmId: r.id,
        orgId: o.id,
        key: "admins",
        displayName: "Org admins",
      });
      assert.equal(realmLevel.orgId, null);
      assert.equal(orgLevel.orgId, o.id);
      await rejectsWith(
        stores.groups.create({ realmId: r.id, key: "admins", displayName: "x" }),
        "conflict",
        "group_key_taken",
      );
      await rejectsWith(
        stores.groups.create({ realmId: r.id, orgId: o.id, key: "admins", displayName: "x" }),
        "conflict",
        "group_key_taken",
      );
      assert.deepEqual(await stores.groups.getByKey(r.id, "admins"), realmLevel);
      assert.deepEqual(await stores.groups.getByKey(r.id, "admins", null), realmLevel);
      assert.deepEqual(await stores.groups.getByKey(r.id, "admins", o.id), orgLevel);
      assert.deepEqual(await stores.groups.get(orgLevel.id), orgLevel);
      assert.deepEqual(
        (await stores.groups.list(r.id)).map((g) => g.id).sort(),
        [realmLevel.id, orgLevel.id].sort(),
      );
      assert.deepEqual((await stores.groups.list(r.id, { orgId: null })).map((g) => g.id), [realmLevel.id]);
      assert.deepEqual((await stores.groups.list(r.id, { orgId: o.id })).map((g) => g.id), [orgLevel.id]);
    },
    "an organization of another realm is refused; unknown parents are not found": async (
      { stores, realm, org, uuid },
    ) => {
      const r = await realm();
      const foreign = await org();
      await rejectsWith(
        stores.groups.create({ realmId: r.id, orgId: foreign.id, key: "g", displayName: "g" }),
        "invalid_request",
      );
      await rejectsWith(
        stores.groups.create({ realmId: r.id, orgId: uuid(), key: "g", displayName: "g" }),
        "not_found",
      );
      await rejectsWith(stores.groups.create({ realmId: uuid(), key: "g", displayName: "g" }), "not_found");
      assert.equal(await stores.groups.get(uuid()), null);
    },
    "members, and the groups of a user by level": async ({ stores, realm, org, user, clock }) => {
      const r = await realm();
      const [o1, o2] = [await org(r.id), await org(r.id)];
      const u = await user(r.id);
      const gRealm = await stores.groups.create({ realmId: r.id, key: "all", displayName: "All" });
      clock.advance(1);
      const g1 = await stores.groups.create({ realmId: r.id, orgId: o1.id, key: "one", displayName: "One" });
      clock.advance(1);
      const g2 = await stores.groups.create({ realmId: r.id, orgId: o2.id, key: "two", displayName: "Two" });
      for (const g of [gRealm, g1, g2]) await stores.groups.addMember(g.id, u.id);
      await rejectsWith(stores.groups.addMember(g1.id, u.id), "conflict", "group_member_exists");
      await rejectsWith(
        stores.groups.addMember(g1.id, (await user((await realm()).id)).id),
        "invalid_request",
      );
      const ids = async (filter?: { orgId?: string | null }) =>
        (await stores.groups.listGroupsOfUser(u.id, filter)).map((g) => g.id);
      assert.deepEqual(await ids(), [gRealm.id, g1.id, g2.id]);
      assert.deepEqual(await ids({ orgId: null }), [gRealm.id]);
      assert.deepEqual(await ids({ orgId: o1.id }), [gRealm.id, g1.id]);
      assert.deepEqual((await stores.groups.listMembers(g1.id)).map((m) => m.userId), [u.id]);
      assert.equal(await stores.groups.removeMember(g1.id, u.id), true);
      assert.equal(await stores.groups.removeMember(g1.id, u.id), false);
      assert.deepEqual(await ids({ orgId: o1.id }), [gRealm.id]);
      assert.equal(await stores.groups.delete(gRealm.id), true);
      assert.equal(await stores.groups.delete(gRealm.id), false);
      assert.deepEqual(await ids(), [g2.id]);
    },
  },
});
