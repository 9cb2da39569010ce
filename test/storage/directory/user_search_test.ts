/**
 * The admin API's user store additions, on both drivers: `search` (prefix search by email or
 * display name, status and organization filters, offset pages seeked on their first key) agrees
 * with a reference filter over the whole list; `update` bumps `version` and, given an expected
 * version, applies only to that version.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { User, UserStatus } from "../../../core/storage/users.ts";
import { conformance, rejectsWith } from "./support.ts";

const NAMES = ["Ada", "ada lovelace", "Alan", "Grace", "grace_h", "100%", "Zoë", null];

conformance({
  "user search": {
    "pages, prefixes and filters agree with a reference filter": async ({ stores, realm, org, clock }) => {
      const r = await realm();
      const other = await realm();
      const o = await org(r.id);
      const users: User[] = [];
      for (let i = 0; i < 24; i++) {
        // Runs of equal creation times: the id breaks the tie.
        if (i % 3 === 0) clock.advance(1000);
        const name = NAMES[i % NAMES.length];
        const local = `${(name ?? "anon").replace(/[^a-z0-9%_]/gi, "").toLowerCase()}${i}`;
        let user = await stores.users.create({
          realmId: r.id,
          email: `${local}@example.com`,
          displayName: name,
        });
        if (i % 4 === 1) user = await stores.users.update(user.id, { status: "Suspended" });
        if (i % 2 === 0) await stores.organizations.addMember(o.id, user.id);
        users.push(user);
      }
      await stores.users.create({
        realmId: other.id,
        email: "ada-elsewhere@example.com",
        displayName: "Ada",
      });
      const members = new Set((await stores.organizations.listMembers(o.id)).map((m) => m.userId));
      const ordered = await stores.users.listByRealm(r.id);
      assert.equal(ordered.length, users.length);

      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("", "a", "AD", "ada ", "grace_", "gracex", "100%", "1%", "zo", "_", "\\"),
          fc.constantFrom<UserStatus | undefined>(undefined, "Active", "Suspended"),
          fc.boolean(),
          fc.nat(30),
          fc.integer({ min: 1, max: 10 }),
          async (q, status, inOrg, offset, limit) => {
            const needle = q.trim().toLowerCase();
            const expected = ordered.filter((u) =>
              (needle === "" || u.email.startsWith(needle) ||
                (u.displayName ?? "").toLowerCase().startsWith(needle)) &&
              (status === undefined || u.status === status) &&
              (!inOrg || members.has(u.id))
            );
            const page = await stores.users.search(r.id, {
              q,
              status,
              memberOf: inOrg ? o.id : undefined,
              offset,
              limit,
            });
            assert.equal(page.total, expected.length);
            assert.deepEqual(
              page.items.map((u) => u.id),
              expected.slice(offset, offset + limit).map((u) => u.id),
            );
          },
        ),
        { numRuns: 60 },
      );
    },
    "unknown realm or organization: nothing": async ({ stores, realm, uuid }) => {
      const r = await realm();
      await stores.users.create({ realmId: r.id, email: "someone@example.com" });
      assert.deepEqual(await stores.users.search(uuid(), { offset: 0, limit: 10 }), { items: [], total: 0 });
      assert.deepEqual(await stores.users.search("x", { offset: 0, limit: 10 }), { items: [], total: 0 });
      assert.deepEqual(
        await stores.users.search(r.id, { memberOf: "x", offset: 0, limit: 10 }),
        { items: [], total: 0 },
      );
    },
  },
  "user versions": {
    "every update bumps the version; an expected version applies only to that version": async (
      { stores, realm, user, uuid },
    ) => {
      const r = await realm();
      const u = await user(r.id);
      assert.equal(u.version, 1);
      const renamed = await stores.users.update(u.id, { displayName: "One" }, { expectedVersion: 1 });
      assert.equal(renamed.version, 2);
      await rejectsWith(
        stores.users.update(u.id, { displayName: "Stale" }, { expectedVersion: 1 }),
        "conflict",
        "user_version_stale",
      );
      assert.equal((await stores.users.get(u.id))?.displayName, "One");
      assert.equal((await stores.users.mergeAttributes(u.id, { a: 1 })).version, 3);
      assert.equal((await stores.users.update(u.id, { status: "Suspended" })).version, 4);
      assert.equal((await stores.users.anonymize(u.id)).version, 5);
      await rejectsWith(
        stores.users.update(uuid(), { displayName: "x" }, { expectedVersion: 1 }),
        "not_found",
      );
    },
  },
});
