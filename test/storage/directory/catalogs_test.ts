/**
 * Conformance of the permission catalog (sync, tombstones) and the app catalog on
 * both drivers. The catalogs are global to a database, so each case works under its
 * own id prefix and filters what it reads by it.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { CatalogSyncResult } from "../../../core/storage/permission-catalog.ts";
import { conformance, rejectsWith } from "./support.ts";

/** Keeps only the ids of one case. */
function only(prefix: string, result: CatalogSyncResult): CatalogSyncResult {
  const keep = (ids: string[]) => ids.filter((id) => id.startsWith(prefix));
  return {
    added: keep(result.added),
    restored: keep(result.restored),
    retired: keep(result.retired),
    unchanged: keep(result.unchanged),
  };
}

conformance({
  "permission catalog": {
    "sync inserts, tombstones, and un-retires": async ({ stores, unique, clock }) => {
      const p = unique("svc");
      const [read, write, del] = [`${p}:org:read`, `${p}:org:write`, `${p}:org:delete`];
      const catalog = stores.permissionCatalog;
      const first = await catalog.sync([{ permissionId: read, description: "Read" }, write]);
      assert.deepEqual(only(p, first), {
        added: [read, write].sort(),
        restored: [],
        retired: [],
        unchanged: [],
      });
      const syncedAt = clock.now();
      assert.deepEqual(await catalog.get(read), {
        permissionId: read,
        description: "Read",
        lastSyncedAt: new Date(syncedAt),
        retiredAt: null,
      });

      clock.advance(1000);
      const second = await catalog.sync([read, del]);
      assert.deepEqual(only(p, second), { added: [del], restored: [], retired: [write], unchanged: [read] });
      const tombstone = await catalog.get(write);
      assert.deepEqual(tombstone, {
        permissionId: write,
        description: null,
        lastSyncedAt: new Date(syncedAt),
        retiredAt: new Date(clock.now()),
      });
      assert.equal((await catalog.get(read))?.lastSyncedAt.getTime(), clock.now());
      assert.equal((await catalog.get(read))?.description, "Read", "an absent description is kept");
      const active = (await catalog.listActive()).map((e) => e.permissionId).filter((id) => id.startsWith(p));
      assert.deepEqual(active, [del, read].sort());
      const all = (await catalog.listAll()).map((e) => e.permissionId).filter((id) => id.startsWith(p));
      assert.deepEqual(all, [del, read, write].sort(), "retired entries are never deleted");

      clock.advance(1000);
      const third = await catalog.sync([read, del, { permissionId: write, description: "Write" }]);
      assert.deepEqual(only(p, third), {
        added: [],
        restored: [write],
        retired: [],
        unchanged: [del, read].sort(),
      });
      assert.deepEqual(await catalog.get(write), {
        permissionId: write,
        description: "Write",
        lastSyncedAt: new Date(clock.now()),
        retiredAt: null,
      });
    },
    "upsert never retires; retire ignores unknown and retired ids": async ({ stores, unique, clock }) => {
      const p = unique("svc");
      const [a, b, c] = [`${p}:global:a`, `${p}:global:b`, `${p}:global:c`];
      const catalog = stores.permissionCatalog;
      await catalog.upsert([a, b]);
      const upserted = await catalog.upsert([c, { permissionId: a, description: "A" }, {
        permissionId: a,
        description: "A2",
      }]);
      assert.deepEqual(upserted, { added: [c], restored: [], retired: [], unchanged: [a] });
      assert.equal((await catalog.get(a))?.description, "A2", "the last description of a duplicate wins");
      assert.equal((await catalog.get(b))?.retiredAt, null);
      clock.advance(10);
      assert.deepEqual(await catalog.retire([b, `${p}:global:unknown`, b]), [b]);
      assert.deepEqual(await catalog.retire([b]), [], "already retired");
      assert.equal((await catalog.get(b))?.retiredAt?.getTime(), clock.now());
      assert.equal(await catalog.get(`${p}:global:unknown`), null);
      assert.deepEqual(await catalog.upsert([b]), { added: [], restored: [b], retired: [], unchanged: [] });
      assert.deepEqual(await catalog.upsert([]), { added: [], restored: [], retired: [], unchanged: [] });
      assert.deepEqual(await catalog.retire([]), []);
      await rejectsWith(catalog.upsert([""]), "invalid_request");
    },
    "ids are stored as given (validation happens before storage)": async ({ stores, unique }) => {
      const odd = `${unique("Odd")}.Dotted:*:x`;
      await stores.permissionCatalog.upsert([odd]);
      assert.equal((await stores.permissionCatalog.get(odd))?.permissionId, odd);
    },
    "property: after each sync the active set is the declaration, and nothing is ever deleted": async (
      { stores, unique, clock },
    ) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.subarray(["a", "b", "c", "d", "e"]), { minLength: 1, maxLength: 5 }),
          async (declarations) => {
            const p = unique("prop");
            const ever = new Set<string>();
            let previous = new Set<string>();
            for (const declaration of declarations) {
              clock.advance(1);
              const ids = declaration.map((x) => `${p}:org:${x}`);
              const result = only(p, await stores.permissionCatalog.sync(ids));
              for (const id of ids) ever.add(id);
              const active = (await stores.permissionCatalog.listActive()).map((e) => e.permissionId)
                .filter((id) => id.startsWith(p));
              assert.deepEqual(active, [...ids].sort());
              const all = (await stores.permissionCatalog.listAll()).map((e) => e.permissionId)
                .filter((id) => id.startsWith(p));
              assert.deepEqual(all, [...ever].sort());
              assert.deepEqual(result.retired, [...previous].filter((id) => !ids.includes(id)).sort());
              previous = new Set(ids);
            }
          },
        ),
        { numRuns: 15 },
      );
    },
  },

  "app catalog": {
    "register, get, list; duplicates conflict; ensure is idempotent": async ({ stores, unique, clock }) => {
      const key = unique("app");
      const entry = await stores.appCatalog.register({ appKey: key, displayName: "App" });
      assert.deepEqual(entry, { appKey: key, displayName: "App", createdAt: new Date(clock.now()) });
      assert.deepEqual(await stores.appCatalog.get(key), entry);
      await rejectsWith(stores.appCatalog.register({ appKey: key }), "conflict", "app_key_taken");
      clock.advance(5);
      assert.deepEqual(await stores.appCatalog.ensure({ appKey: key, displayName: "Other" }), entry);
      const other = await stores.appCatalog.ensure({ appKey: `${key}-b` });
      assert.equal(other.displayName, null);
      const listed = (await stores.appCatalog.list()).filter((e) => e.appKey.startsWith(key));
      assert.deepEqual(listed, [entry, other]);
      assert.equal(await stores.appCatalog.get(unique("missing")), null);
      await rejectsWith(stores.appCatalog.register({ appKey: "" }), "invalid_request");
    },
  },
});
