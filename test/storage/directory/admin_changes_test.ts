/**
 * Conformance of the directory store methods the admin API writes through (both drivers):
 * realm updates and the one-default switch, organization search, versioned updates and the
 * deletion cascade, domain proof tokens, team and group updates. Then the races on Postgres:
 * concurrent default switches keep exactly one default, and of two writers holding the same
 * organization version exactly one wins.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { ManualClock } from "../../../core/clock.ts";
import { cryptoRandom, randomUuid } from "../../../core/random.ts";
import { EMAIL_DOMAIN } from "../../../core/storage/organizations.ts";
import { freshPostgres } from "../../support/db.ts";
import { conformance, rejectsWith, storesOver } from "./support.ts";

conformance({
  "realm updates": {
    "display name, then switching the default in one change; the default cannot be unset": async (
      { stores, unique, db },
    ) => {
      // Whatever default exists in this database, a fresh one takes over and hands over again.
      const a = await stores.realms.create({ name: unique("a"), displayName: "A" });
      const b = await stores.realms.create({ name: unique("b"), displayName: "B" });
      const renamed = await stores.realms.update(a.id, { displayName: "Alpha" });
      assert.deepEqual(renamed, { ...a, displayName: "Alpha" });
      const madeDefault = await stores.realms.update(a.id, { isDefault: true });
      assert.equal(madeDefault.isDefault, true);
      assert.equal((await stores.realms.getDefault())?.id, a.id);
      await rejectsWith(
        stores.realms.update(a.id, { isDefault: false }),
        "conflict",
        "default_realm_required",
      );
      assert.equal((await stores.realms.get(a.id))?.isDefault, true);
      assert.deepEqual(
        await stores.realms.update(b.id, { isDefault: false }),
        b,
        "not the default: no change",
      );
      await stores.realms.update(b.id, { isDefault: true });
      assert.equal((await stores.realms.get(a.id))?.isDefault, false);
      assert.equal((await stores.realms.getDefault())?.id, b.id);
      const defaults = await db.selectFrom("realms").select("id").where("is_default", "=", true).execute();
      assert.deepEqual(defaults.map((r) => r.id), [b.id]);
      assert.deepEqual(await stores.realms.update(b.id, { isDefault: true }), await stores.realms.get(b.id));
    },
    "unknown realm": async ({ stores, uuid }) => {
      await rejectsWith(stores.realms.update(uuid(), { displayName: "x" }), "not_found");
      await rejectsWith(stores.realms.update("nope", { displayName: "x" }), "not_found");
    },
  },

  "organization admin changes": {
    "search by name or display name, case-insensitive, paged, with the total": async (
      { stores, realm, clock },
    ) => {
      const r = await realm();
      const make = async (name: string, displayName: string) => {
        clock.advance(1);
        return await stores.organizations.create({ realmId: r.id, name, displayName });
      };
      const acme = await make("acme", "Acme Corp");
      const widgets = await make("widgets", "ACME Widgets");
      const other = await make("other", "Other 100%_off");
      assert.deepEqual(await stores.organizations.search(r.id), {
        items: [acme, widgets, other],
        total: 3,
      });
      const page = await stores.organizations.search(r.id, { search: "acme", offset: 1, limit: 5 });
      assert.deepEqual(page, { items: [widgets], total: 2 });
      assert.deepEqual(await stores.organizations.search(r.id, { search: "%_" }), {
        items: [other],
        total: 1,
      });
      assert.deepEqual(await stores.organizations.search(r.id, { search: "_" }), {
        items: [other],
        total: 1,
      });
      assert.deepEqual(await stores.organizations.search(r.id, { limit: 0 }), { items: [], total: 3 });
      assert.deepEqual(await stores.organizations.search("nope"), { items: [], total: 0 });
    },
    "an update with the expected version bumps it; a stale one changes nothing": async ({ stores, org }) => {
      const o = await org();
      const v2 = await stores.organizations.update(o.id, { displayName: "Two" }, { expectedVersion: 1 });
      assert.equal(v2.version, 2);
      await rejectsWith(
        stores.organizations.update(o.id, { displayName: "Stale" }, { expectedVersion: 1 }),
        "conflict",
        "organization_version_mismatch",
      );
      await rejectsWith(
        stores.organizations.update(o.id, {}, { expectedVersion: 1 }),
        "conflict",
        "organization_version_mismatch",
      );
      assert.deepEqual(await stores.organizations.get(o.id), v2);
      assert.deepEqual(await stores.organizations.update(o.id, {}, { expectedVersion: 2 }), v2);
      await rejectsWith(
        stores.organizations.update(randomUuid(cryptoRandom), { status: "x" }, { expectedVersion: 1 }),
        "not_found",
      );
    },
    "delete removes everything scoped to the organization, and keeps the users": async (
      { stores, realm, org, user, db },
    ) => {
      const r = await realm();
      const o = await org(r.id);
      const keep = await org(r.id);
      const u = await user(r.id);
      await stores.organizations.addMember(o.id, u.id);
      await stores.organizations.addMember(keep.id, u.id);
      await stores.organizations.addDomain({
        orgId: o.id,
        kind: EMAIL_DOMAIN,
        value: "gone.example",
        verified: true,
      });
      const team = await stores.teams.create({ orgId: o.id, name: "t" });
      await stores.teams.addMember(team.id, u.id);
      const group = await stores.groups.create({ realmId: r.id, orgId: o.id, key: "g", displayName: "G" });
      await stores.groups.addMember(group.id, u.id);
      const orgRole = await stores.roles.createWithGrants(
        { realmId: r.id, orgId: o.id, key: "r", displayName: "R" },
        [{ pattern: "app:org:read", effect: "Allow" }],
      );
      const realmRole = await stores.roles.createWithGrants({
        realmId: r.id,
        key: "realm-r",
        displayName: "RR",
      }, [
        { pattern: "app:global:read", effect: "Allow" },
        { pattern: "app:org:write", effect: "Allow", orgId: o.id },
      ]);
      await stores.roles.assign({
        roleId: realmRole.role.id,
        principalKind: "User",
        principalId: u.id,
        orgId: o.id,
      });
      await stores.roles.assign({
        roleId: realmRole.role.id,
        principalKind: "User",
        principalId: u.id,
        orgId: keep.id,
      });
      const at = new Date();
      await db.insertInto("webhook_endpoints").values({
        id: randomUuid(cryptoRandom),
        realm_id: r.id,
        org_id: o.id,
        url: "https://hooks.example/x",
        secret: "whsec_x",
        event_patterns: sql<string[]>`'{}'::text[]`,
        enabled: true,
        consecutive_failures: 0,
        created_at: at,
        updated_at: at,
      }).execute();

      assert.equal(await stores.organizations.delete(o.id), true);
      assert.equal(await stores.organizations.get(o.id), null);
      assert.equal(await stores.organizations.findVerifiedDomain(EMAIL_DOMAIN, "gone.example"), null);
      assert.equal(await stores.teams.get(team.id), null);
      assert.equal(await stores.groups.get(group.id), null);
      assert.equal(await stores.roles.get(orgRole.role.id), null);
      assert.deepEqual((await stores.roles.listGrants(realmRole.role.id)).map((g) => g.pattern), [
        "app:global:read",
      ]);
      assert.deepEqual(
        (await stores.roles.listAssignmentsOfRole(realmRole.role.id)).map((a) => a.orgId),
        [keep.id],
      );
      const count = async (table: string) =>
        (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE org_id = ${o.id}`
          .execute(db)).rows[0].n;
      for (
        const table of ["org_memberships", "organization_domains", "teams", "groups", "webhook_endpoints"]
      ) {
        assert.equal(await count(table), 0, table);
      }
      assert.notEqual(await stores.users.get(u.id), null);
      assert.equal(await stores.organizations.isMember(keep.id, u.id), true);
      assert.equal(await stores.organizations.delete(o.id), false);
      assert.equal(await stores.organizations.delete("nope"), false);
    },
    "a domain keeps its proof token; getDomain reads one row": async ({ stores, org, unique, uuid }) => {
      const o = await org();
      const value = `${unique("d")}.example`;
      const added = await stores.organizations.addDomain({
        orgId: o.id,
        kind: EMAIL_DOMAIN,
        value,
        verificationToken: "tok-123",
      });
      assert.equal(added.verificationToken, "tok-123");
      assert.equal(added.verified, false);
      assert.deepEqual(await stores.organizations.getDomain(added.id), added);
      const plain = await stores.organizations.addDomain({ orgId: o.id, kind: "Other", value });
      assert.equal(plain.verificationToken, null);
      assert.equal(await stores.organizations.getDomain(uuid()), null);
      assert.equal(await stores.organizations.getDomain("nope"), null);
    },
  },

  "team and group updates": {
    "rename a team (names stay unique per organization); change a group's display name": async (
      { stores, org, uuid },
    ) => {
      const o = await org();
      const t1 = await stores.teams.create({ orgId: o.id, name: "one" });
      await stores.teams.create({ orgId: o.id, name: "two" });
      assert.deepEqual(await stores.teams.update(t1.id, { name: "uno" }), { ...t1, name: "uno" });
      assert.deepEqual(await stores.teams.update(t1.id, {}), { ...t1, name: "uno" });
      await rejectsWith(stores.teams.update(t1.id, { name: "two" }), "conflict", "team_name_taken");
      await rejectsWith(stores.teams.update(uuid(), { name: "x" }), "not_found");
      const g = await stores.groups.create({ realmId: o.realmId, key: "k", displayName: "K" });
      assert.deepEqual(await stores.groups.update(g.id, { displayName: "Kay" }), {
        ...g,
        displayName: "Kay",
      });
      assert.deepEqual(await stores.groups.update(g.id, {}), { ...g, displayName: "Kay" });
      await rejectsWith(stores.groups.update(uuid(), { displayName: "x" }), "not_found");
      await rejectsWith(stores.groups.update("nope", { displayName: "x" }), "not_found");
    },
  },
});

Deno.test("postgres: concurrent directory writes", async (t) => {
  const database = await freshPostgres({ maxConnections: 12 });
  try {
    const stores = storesOver(database.db, new ManualClock(Date.UTC(2026, 0, 1)));
    const name = () => `race-${randomUuid(cryptoRandom)}`;

    await t.step(
      "10 concurrent default switches: exactly one default at every step and at the end",
      async () => {
        const realms = await Promise.all(
          Array.from({ length: 10 }, () => stores.realms.create({ name: name(), displayName: "R" })),
        );
        await stores.realms.update(realms[0].id, { isDefault: true });
        let watching = true;
        const seen = new Set<number>();
        const watcher = (async () => {
          while (watching) {
            const rows = await database.db.selectFrom("realms").select("id").where("is_default", "=", true)
              .execute();
            seen.add(rows.length);
          }
        })();
        const results = await Promise.allSettled(
          realms.map((r) => stores.realms.update(r.id, { isDefault: true })),
        );
        watching = false;
        await watcher;
        assert.deepEqual(results.filter((r) => r.status === "rejected"), [], "every switch succeeds");
        assert.deepEqual([...seen], [1], "never zero, never two defaults");
        const defaults = await database.db.selectFrom("realms").select("id").where("is_default", "=", true)
          .execute();
        assert.equal(defaults.length, 1);
      },
    );

    await t.step("10 writers with the same organization version: exactly one wins", async () => {
      const realm = await stores.realms.create({ name: name(), displayName: "R" });
      const org = await stores.organizations.create({ realmId: realm.id, name: name(), displayName: "O" });
      const results = await Promise.allSettled(
        Array.from(
          { length: 10 },
          (_, i) => stores.organizations.update(org.id, { displayName: `w${i}` }, { expectedVersion: 1 }),
        ),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.equal(r.reason.details?.reason, "organization_version_mismatch");
      }
      const final = await stores.organizations.get(org.id);
      assert.equal(final?.version, 2);
      assert.equal(
        final?.displayName,
        (won[0] as PromiseFulfilledResult<{ displayName: string }>).value.displayName,
      );
    });
  } finally {
    await database.close();
  }
});
