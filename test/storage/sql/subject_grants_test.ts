import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { nullEventSink } from "../../../core/events/sink.ts";
import { NotificationCacheBus } from "../../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../../core/snapshots/service.ts";
import { openDatabase } from "../../../storage/open.ts";
import { createSqlSubjectGrantSource } from "../../../storage/sql/subject-grants.ts";
import { drivers, freshPostgres, TEST_DATABASE_URL } from "../../support/db.ts";
import { seeder, uuid } from "../../support/seed.ts";

for (const driver of drivers) {
  Deno.test(`subject grants (${driver.name})`, async (t) => {
    const database = await driver.open();
    const seed = seeder(database.db);
    const source = createSqlSubjectGrantSource(database.db);
    try {
      const realm = await seed.realm();
      const otherRealm = await seed.realm();
      const alice = await seed.user(realm, { dept: "eng" });
      const bob = await seed.user(realm);
      const org = await seed.org(realm, [alice]);
      const otherOrg = await seed.org(realm, [alice]);
      const team = await seed.team(realm, org, [alice]);
      await seed.team(realm, otherOrg, [alice]);
      const writers = await seed.group(realm, "writers", [alice]);

      const viewer = await seed.role(realm, "viewer", [{ pattern: "docs:org:read" }]);
      const editor = await seed.role(realm, "editor", [{ pattern: "docs:team:edit" }, {
        pattern: "docs:org:delete",
        effect: "Deny",
      }]);
      const orgAdmin = await seed.role(realm, "org-admin", [{ pattern: "docs:org:*" }], org);
      const foreign = await seed.role(otherRealm, "foreign", [{ pattern: "*:*:*" }]);
      await seed.assign(realm, viewer, { kind: "User", id: alice });
      await seed.assign(realm, editor, { kind: "Group", id: writers }, org);
      await seed.assign(realm, orgAdmin, { kind: "User", id: alice });
      await seed.assign(otherRealm, foreign, { kind: "User", id: alice });
      await seed.policy(realm, "own-drafts", { kind: "User", id: alice }, [{
        pattern: "drafts:self:*",
        condition: { version: 1, condition: { op: "eq", attr: "subject.dept", value: "eng" } },
      }]);
      await seed.policy(realm, "bad", { kind: "Group", id: writers }, [{ pattern: "Bad.Pattern" }], org);

      await t.step(
        "an org context flattens direct, group, org-level roles and policies with attribution",
        async () => {
          const rows = await source.loadSubject(alice, org);
          assert.ok(rows);
          assert.equal(rows.realmId, realm);
          assert.equal(rows.isOrgMember, true);
          assert.deepEqual(rows.teamIds, [team]);
          assert.deepEqual(rows.attributes, { dept: "eng" });
          assert.deepEqual(
            rows.grants.map((g) => [g.source, g.pattern, g.effect, g.orgId]),
            [
              ["role:viewer", "docs:org:read", "Allow", null],
              ["role:editor@group:writers", "docs:team:edit", "Allow", org],
              ["role:editor@group:writers", "docs:org:delete", "Deny", org],
              ["role:org-admin", "docs:org:*", "Allow", org],
              ["policy:own-drafts", "drafts:self:*", "Allow", null],
              ["policy:bad@group:writers", "Bad.Pattern", "Allow", org],
            ],
          );
          assert.deepEqual(rows.grants[4].condition, {
            version: 1,
            condition: { op: "eq", attr: "subject.dept", value: "eng" },
          });
        },
      );

      await t.step("another org sees only realm-level grants and its own teams", async () => {
        const rows = await source.loadSubject(alice, otherOrg);
        assert.deepEqual(rows?.grants.map((g) => g.source), ["role:viewer", "policy:own-drafts"]);
        assert.equal(rows?.teamIds.length, 1);
        assert.notEqual(rows?.teamIds[0], team);
      });

      await t.step("without an org: realm-level grants only, no teams", async () => {
        const rows = await source.loadSubject(alice, null);
        assert.deepEqual(rows?.grants.map((g) => g.source), ["role:viewer", "policy:own-drafts"]);
        assert.deepEqual(rows?.teamIds, []);
        assert.equal(rows?.isOrgMember, false);
        // The organizations it may hold pinned grants in: memberships, a group's pinned role, an
        // org-level role, a group's pinned policy; none for a user with none of them.
        assert.deepEqual(rows?.orgContexts, [org, otherOrg].sort());
        assert.deepEqual((await source.loadSubject(bob, null))?.orgContexts, []);
        assert.equal((await source.loadSubject(alice, org))?.orgContexts, undefined);
      });

      await t.step("a non-member, an unknown user and a malformed id", async () => {
        const rows = await source.loadSubject(bob, org);
        assert.equal(rows?.isOrgMember, false);
        assert.deepEqual(rows?.grants, []);
        assert.equal(await source.loadSubject(uuid(), null), null);
        assert.equal(await source.loadSubject("not-a-uuid", null), null);
        await assert.rejects(() => source.loadSubject(alice, "nope"), { code: "invalid_request" });
      });
    } finally {
      await database.close();
    }
  });
}

Deno.test("snapshot cache bus over Postgres LISTEN/NOTIFY: a role change on one instance evicts on another", async () => {
  const first = await freshPostgres();
  // A second instance: its own connection pool on the same schema.
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(first.db)).rows[0].s;
  const second = await openDatabase({ kind: "postgres", url: TEST_DATABASE_URL, schema, maxConnections: 2 });
  const clock = new ManualClock(0);
  const make = (database: typeof first) =>
    new SubjectSnapshots({
      source: createSqlSubjectGrantSource(database.db),
      bus: new NotificationCacheBus(database.notifications),
      events: nullEventSink,
      clock,
      ttlMs: 3_600_000,
      maxEntries: 100,
    });
  const a = make(first), b = make(second);
  try {
    await a.start();
    await b.start();
    const seed = seeder(first.db);
    const realm = await seed.realm();
    const user = await seed.user(realm);
    const role = await seed.role(realm, "reader", [{ pattern: "docs:global:read" }]);
    await seed.assign(realm, role, { kind: "User", id: user });

    assert.equal((await a.get(user, null))?.subject.grants.length, 1);
    await seed.addGrants(role, [{ pattern: "docs:global:write" }]);
    assert.equal(
      (await a.get(user, null))?.subject.grants.length,
      1,
      "instance a still serves its cached snapshot",
    );

    await b.invalidateAll(); // the instance that changed the role tells everyone
    const deadline = Date.now() + 5_000;
    while (a.cachedCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(a.cachedCount, 0, "the notification reached instance a");
    assert.equal((await a.get(user, null))?.subject.grants.length, 2);
  } finally {
    await a.stop();
    await b.stop();
    await second.close();
    await first.close();
  }
});
