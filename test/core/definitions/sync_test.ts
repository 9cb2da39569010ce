import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { planDefinitions } from "../../../core/definitions/declarations.ts";
import { SVC_PERMISSIONS } from "../../../core/definitions/svc-permissions.ts";
import { DEFINITIONS_ACTOR_ID, syncDefinitions } from "../../../core/definitions/sync.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { createSqlPermissionCatalogStore } from "../../../storage/sql/permission-catalog.ts";
import { createSqlRealmStore } from "../../../storage/sql/realms.ts";
import { createSqlRoleStore } from "../../../storage/sql/roles.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { drivers } from "../../support/db.ts";

for (const driver of drivers) {
  Deno.test(`syncDefinitions (${driver.name})`, async (t) => {
    const database = await driver.open();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const deps = { clock, random: cryptoRandom };
    const stores = {
      catalog: createSqlPermissionCatalogStore(database.db, deps),
      realms: createSqlRealmStore(database.db, deps),
      roles: createSqlRoleStore(database.db, deps),
    };
    let conditionedGrantId = "";
    const condition = { version: 1, condition: { op: "eq", attr: "subject.dept", value: "eng" } };
    try {
      await t.step(
        "first boot publishes every permission, creates the default realm and the roles",
        async () => {
          const plan = planDefinitions({
            permissions: [{ id: "docs:org:read", description: "Read" }, { id: "docs:org:write" }],
            roles: [{
              key: "writer",
              displayName: "Writer",
              grants: [{ pattern: "docs:org:read", effect: "Allow", condition }, {
                pattern: "docs:org:*",
                effect: "Allow",
              }],
            }],
          });
          const report = await syncDefinitions(plan, stores);
          assert.deepEqual(
            report.catalog.added,
            [...SVC_PERMISSIONS.map((p) => p.id), "docs:org:read", "docs:org:write"].sort(),
          );
          assert.equal(report.defaultRealm.isDefault, true);
          assert.deepEqual(report.rolesCreated, ["writer"]);
          const role = await stores.roles.getByKey(report.defaultRealm.id, "writer", null);
          const grants = await stores.roles.listGrants(role!.id);
          assert.equal(grants.length, 2);
          conditionedGrantId = grants.find((g) => g.condition !== null)!.id;
        },
      );

      await t.step(
        "a later boot retires removed permissions, never deletes, and reconciles role grants",
        async () => {
          clock.advance(60_000);
          const plan = planDefinitions({
            permissions: [{ id: "docs:org:read" }],
            roles: [{
              key: "writer",
              displayName: "Writer (renamed)",
              // Same condition with keys in another order: the same grant.
              grants: [{
                pattern: "docs:org:read",
                effect: "Allow",
                condition: { condition: { value: "eng", attr: "subject.dept", op: "eq" }, version: 1 },
              }, { pattern: "docs:*:read", effect: "Allow" }],
            }],
          });
          const report = await syncDefinitions(plan, stores);
          assert.deepEqual(report.catalog.retired, ["docs:org:write"]);
          assert.deepEqual(report.catalog.added, []);
          assert.deepEqual(report.rolesUpdated, ["writer"]);
          const retired = await stores.catalog.get("docs:org:write");
          assert.ok(retired?.retiredAt instanceof Date, "tombstoned, still there");
          const role = await stores.roles.getByKey(report.defaultRealm.id, "writer", null);
          assert.equal(role?.displayName, "Writer (renamed)");
          const grants = await stores.roles.listGrants(role!.id);
          assert.deepEqual(grants.map((g) => g.pattern).sort(), ["docs:*:read", "docs:org:read"]);
          const kept = grants.find((g) => g.pattern === "docs:org:read");
          assert.equal(kept?.id, conditionedGrantId, "the conditioned grant was kept, not re-created");
        },
      );

      await t.step(
        "re-declaring restores a retired permission; an unchanged boot changes nothing",
        async () => {
          const plan = planDefinitions({
            permissions: [{ id: "docs:org:read" }, { id: "docs:org:write" }],
            roles: [],
          });
          const first = await syncDefinitions(plan, stores);
          assert.deepEqual(first.catalog.restored, ["docs:org:write"]);
          const second = await syncDefinitions(plan, stores);
          assert.deepEqual([second.catalog.added, second.catalog.restored, second.catalog.retired], [
            [],
            [],
            [],
          ]);
          assert.equal(second.defaultRealm.id, first.defaultRealm.id);
        },
      );

      await t.step("two instances booting at once agree on one default realm and one role", async () => {
        const plan = planDefinitions({
          permissions: [{ id: "docs:org:read" }],
          roles: [{
            key: "reader",
            displayName: "Reader",
            grants: [{ pattern: "docs:org:read", effect: "Allow" }],
          }],
        });
        const [a, b] = await Promise.all([syncDefinitions(plan, stores), syncDefinitions(plan, stores)]);
        assert.equal(a.defaultRealm.id, b.defaultRealm.id);
        const role = await stores.roles.getByKey(a.defaultRealm.id, "reader", null);
        assert.equal((await stores.roles.listGrants(role!.id)).length, 1);
      });
    } finally {
      await database.close();
    }
  });
}

for (const driver of drivers) {
  Deno.test(`syncDefinitions (${driver.name}): realm and role changes are admin mutations in the chain`, async () => {
    const database = await driver.open();
    const storage = createSqlStorage(database, {
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
      random: cryptoRandom,
    });
    const stores = {
      catalog: storage.permissionCatalog,
      realms: storage.realms,
      roles: storage.roles,
      storage,
    };
    const plan = (displayName: string, patterns: string[]) =>
      planDefinitions({
        permissions: [{ id: "docs:org:read" }, { id: "docs:org:write" }],
        roles: [{
          key: "writer",
          displayName,
          grants: patterns.map((pattern) => ({ pattern, effect: "Allow" })),
        }],
      });
    const entries = async (realmId: string) =>
      (await storage.adminAudit.list(realmId, { limit: 100 })).map((e) => [e.action, e.actorKind, e.actorId]);
    try {
      // Two instances boot at once: one realm, one role, one entry each.
      const [first] = await Promise.all([
        syncDefinitions(plan("Writer", ["docs:org:read"]), stores),
        syncDefinitions(plan("Writer", ["docs:org:read"]), stores),
      ]);
      const realmId = first.defaultRealm.id;
      assert.deepEqual(await entries(realmId), [
        ["realm.create", "System", DEFINITIONS_ACTOR_ID],
        ["role.create", "System", DEFINITIONS_ACTOR_ID],
      ]);
      // A boot that changes nothing appends nothing.
      await syncDefinitions(plan("Writer", ["docs:org:read"]), stores);
      assert.equal((await entries(realmId)).length, 2);
      // A changed declaration is one role.update with before and after.
      const report = await syncDefinitions(plan("Writers", ["docs:org:*"]), stores);
      assert.deepEqual(report.rolesUpdated, ["writer"]);
      const last = (await storage.adminAudit.list(realmId, { limit: 100 })).at(-1)!;
      assert.equal(last.action, "role.update");
      assert.deepEqual((last.before as { grants: { pattern: string }[] }).grants.map((g) => g.pattern), [
        "docs:org:read",
      ]);
      assert.deepEqual(last.after, {
        key: "writer",
        displayName: "Writers",
        grants: [{ pattern: "docs:org:*", effect: "Allow", teamIds: [], condition: null }],
      });
      assert.equal((await storage.adminAudit.verify(realmId)).valid, true);
    } finally {
      await database.close();
    }
  });
}
