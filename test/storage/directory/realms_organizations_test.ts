/**
 * Conformance of the realm and organization stores (organizations, domains, memberships)
 * on both drivers.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { EMAIL_DOMAIN } from "../../../core/storage/organizations.ts";
import { conformance, rejectsWith } from "./support.ts";

conformance({
  realms: {
    "no default realm in an empty database, then exactly one": async ({ stores, unique }) => {
      assert.equal(await stores.realms.getDefault(), null);
      const realm = await stores.realms.create({
        name: unique("default"),
        displayName: "Default",
        isDefault: true,
      });
      assert.equal(realm.isDefault, true);
      assert.deepEqual(await stores.realms.getDefault(), realm);
      await rejectsWith(
        stores.realms.create({ name: unique("second"), displayName: "Second", isDefault: true }),
        "conflict",
        "default_realm_exists",
      );
    },
    "creates and reads a realm by id and by name": async ({ stores, unique, clock }) => {
      const name = unique("acme");
      const realm = await stores.realms.create({ name, displayName: "Acme" });
      assert.equal(realm.name, name);
      assert.equal(realm.displayName, "Acme");
      assert.equal(realm.isDefault, false);
      assert.equal(realm.createdAt.getTime(), clock.now());
      assert.deepEqual(await stores.realms.get(realm.id), realm);
      assert.deepEqual(await stores.realms.getByName(name), realm);
    },
    "unknown ids and names read as null": async ({ stores, uuid, unique }) => {
      assert.equal(await stores.realms.get(uuid()), null);
      assert.equal(await stores.realms.get("not-a-uuid"), null);
      assert.equal(await stores.realms.getByName(unique("missing")), null);
    },
    "a duplicate name is a conflict": async ({ stores, unique }) => {
      const name = unique("dup");
      await stores.realms.create({ name, displayName: "One" });
      await rejectsWith(stores.realms.create({ name, displayName: "Two" }), "conflict", "realm_name_taken");
    },
    "list is in creation order, then id": async ({ stores, unique, clock }) => {
      clock.advance(1000);
      const a = await stores.realms.create({ name: unique("l"), displayName: "A" });
      const b = await stores.realms.create({ name: unique("l"), displayName: "B" });
      clock.advance(1000);
      const c = await stores.realms.create({ name: unique("l"), displayName: "C" });
      const listed = (await stores.realms.list()).filter((r) => [a.id, b.id, c.id].includes(r.id));
      const tied = [a, b].sort((x, y) => x.id < y.id ? -1 : 1);
      assert.deepEqual(listed.map((r) => r.id), [...tied.map((r) => r.id), c.id]);
    },
  },

  organizations: {
    "creates, reads, lists and updates organizations": async ({ stores, realm, unique, clock }) => {
      const r = await realm();
      const name = unique("org");
      const org = await stores.organizations.create({ realmId: r.id, name, displayName: "Org" });
      assert.equal(org.status, "Active");
      assert.equal(org.defaultIdentityProviderId, null);
      assert.deepEqual(await stores.organizations.get(org.id), org);
      assert.deepEqual(await stores.organizations.getByName(r.id, name), org);
      const updated = await stores.organizations.update(org.id, {
        displayName: "Renamed",
        status: "Suspended",
        defaultIdentityProviderId: "okta-main",
      });
      assert.equal(org.version, 1);
      assert.deepEqual(updated, {
        ...org,
        displayName: "Renamed",
        status: "Suspended",
        defaultIdentityProviderId: "okta-main",
        version: 2,
      });
      const cleared = await stores.organizations.update(org.id, { defaultIdentityProviderId: null });
      assert.equal(cleared.defaultIdentityProviderId, null);
      assert.equal(cleared.status, "Suspended");
      assert.equal(cleared.version, 3);
      assert.deepEqual(await stores.organizations.update(org.id, {}), cleared, "no change, no new version");
      clock.advance(1);
      const second = await stores.organizations.create({
        realmId: r.id,
        name: unique("org"),
        displayName: "Two",
      });
      assert.deepEqual((await stores.organizations.listByRealm(r.id)).map((o) => o.id), [org.id, second.id]);
    },
    "names are unique per realm only": async ({ stores, realm, unique }) => {
      const [r1, r2] = [await realm(), await realm()];
      const name = unique("same");
      await stores.organizations.create({ realmId: r1.id, name, displayName: "1" });
      await stores.organizations.create({ realmId: r2.id, name, displayName: "2" });
      await rejectsWith(
        stores.organizations.create({ realmId: r1.id, name, displayName: "3" }),
        "conflict",
        "organization_name_taken",
      );
    },
    "unknown realm or organization": async ({ stores, uuid, unique }) => {
      await rejectsWith(
        stores.organizations.create({ realmId: uuid(), name: unique(), displayName: "x" }),
        "not_found",
      );
      await rejectsWith(
        stores.organizations.create({ realmId: "nope", name: unique(), displayName: "x" }),
        "not_found",
      );
      assert.equal(await stores.organizations.get(uuid()), null);
      await rejectsWith(stores.organizations.update(uuid(), { displayName: "x" }), "not_found");
      assert.deepEqual(await stores.organizations.listByRealm(uuid()), []);
    },
  },

  "organization domains": {
    "only verified rows are found, by normalized value": async ({ stores, org, unique }) => {
      const o = await org();
      const domain = `${unique("d")}.example.com`;
      const row = await stores.organizations.addDomain({
        orgId: o.id,
        kind: EMAIL_DOMAIN,
        value: `  ${domain.toUpperCase()} `,
      });
      assert.equal(row.value, domain);
      assert.equal(row.verified, false);
      assert.equal(await stores.organizations.findVerifiedDomain(EMAIL_DOMAIN, domain), null);
      const verified = await stores.organizations.setDomainVerified(row.id, true);
      assert.equal(verified.verified, true);
      const found = await stores.organizations.findVerifiedDomain(EMAIL_DOMAIN, ` ${domain.toUpperCase()}`);
      assert.deepEqual(found, { ...verified, realmId: o.realmId });
      assert.deepEqual(
        await stores.organizations.findVerifiedDomain(EMAIL_DOMAIN, domain, { realmId: o.realmId }),
        found,
      );
      assert.equal(
        await stores.organizations.findVerifiedDomain(EMAIL_DOMAIN, domain, {
          realmId: (await stores.realms.create({ name: unique(), displayName: "r" })).id,
        }),
        null,
      );
      assert.equal(await stores.organizations.findVerifiedDomain("SamlDomain", domain), null);
      await stores.organizations.setDomainVerified(row.id, false);
      assert.equal(await stores.organizations.findVerifiedDomain(EMAIL_DOMAIN, domain), null);
    },
    "an unverified claim elsewhere never shadows a verified one": async ({ stores, org, unique }) => {
      const domain = `${unique("d")}.example.org`;
      const unverifiedOrg = await org();
      const verifiedOrg = await org();
      await stores.organizations.addDomain({ orgId: unverifiedOrg.id, kind: EMAIL_DOMAIN, value: domain });
      const row = await stores.organizations.addDomain({
        orgId: verifiedOrg.id,
        kind: EMAIL_DOMAIN,
        value: domain,
        verified: true,
      });
      assert.equal((await stores.organizations.findVerifiedDomain(EMAIL_DOMAIN, domain))?.id, row.id);
    },
    "duplicates conflict; listing and removal": async ({ stores, org, unique, uuid }) => {
      const o = await org();
      const value = `${unique("d")}.example.net`;
      const a = await stores.organizations.addDomain({ orgId: o.id, kind: EMAIL_DOMAIN, value });
      await rejectsWith(
        stores.organizations.addDomain({ orgId: o.id, kind: EMAIL_DOMAIN, value: value.toUpperCase() }),
        "conflict",
        "organization_domain_exists",
      );
      const b = await stores.organizations.addDomain({ orgId: o.id, kind: "Other", value });
      assert.deepEqual((await stores.organizations.listDomains(o.id)).map((d) => d.id), [a.id, b.id]);
      assert.equal(await stores.organizations.removeDomain(a.id), true);
      assert.equal(await stores.organizations.removeDomain(a.id), false);
      assert.deepEqual((await stores.organizations.listDomains(o.id)).map((d) => d.id), [b.id]);
      await rejectsWith(
        stores.organizations.addDomain({ orgId: uuid(), kind: EMAIL_DOMAIN, value }),
        "not_found",
      );
      await rejectsWith(stores.organizations.setDomainVerified(uuid(), true), "not_found");
      await rejectsWith(
        stores.organizations.addDomain({ orgId: o.id, kind: EMAIL_DOMAIN, value: "  " }),
        "invalid_request",
      );
    },
  },

  "org memberships": {
    "add, check, list and remove": async ({ stores, realm, org, user }) => {
      const r = await realm();
      const [o1, o2] = [await org(r.id), await org(r.id)];
      const u = await user(r.id);
      const m = await stores.organizations.addMember(o1.id, u.id);
      assert.deepEqual(m, { orgId: o1.id, userId: u.id, createdAt: m.createdAt });
      await stores.organizations.addMember(o2.id, u.id);
      assert.equal(await stores.organizations.isMember(o1.id, u.id), true);
      assert.deepEqual(
        (await stores.organizations.listOrgsOfUser(u.id)).map((o) => o.id),
        [o1.id, o2.id].sort(),
      );
      await rejectsWith(stores.organizations.addMember(o1.id, u.id), "conflict", "org_membership_exists");
      assert.equal(await stores.organizations.removeMember(o1.id, u.id), true);
      assert.equal(await stores.organizations.removeMember(o1.id, u.id), false);
      assert.equal(await stores.organizations.isMember(o1.id, u.id), false);
      assert.deepEqual((await stores.organizations.listOrgsOfUser(u.id)).map((o) => o.id), [o2.id]);
    },
    "listOrgsOfUser follows membership creation time": async ({ stores, realm, org, user, clock }) => {
      const r = await realm();
      const [o1, o2] = [await org(r.id), await org(r.id)];
      const u = await user(r.id);
      await stores.organizations.addMember(o2.id, u.id);
      clock.advance(1);
      await stores.organizations.addMember(o1.id, u.id);
      assert.deepEqual((await stores.organizations.listOrgsOfUser(u.id)).map((o) => o.id), [o2.id, o1.id]);
    },
    "unknown org or user, and cross-realm membership": async ({ stores, realm, org, user, uuid }) => {
      const r = await realm();
      const o = await org(r.id);
      const u = await user(r.id);
      await rejectsWith(stores.organizations.addMember(uuid(), u.id), "not_found");
      await rejectsWith(stores.organizations.addMember(o.id, uuid()), "not_found");
      const stranger = await user((await realm()).id);
      await rejectsWith(stores.organizations.addMember(o.id, stranger.id), "invalid_request");
      assert.equal(await stores.organizations.isMember(uuid(), u.id), false);
      assert.deepEqual(await stores.organizations.listOrgsOfUser(uuid()), []);
      assert.deepEqual(await stores.organizations.listMembers(uuid(), {}), []);
    },
    "listMembers is in creation time then user id order, paged": async (
      { stores, realm, org, user, clock, db },
    ) => {
      const r = await realm();
      const o = await org(r.id);
      // Rows written before addMember kept creation times strictly increasing may tie: the user id
      // breaks the tie.
      const tied = [];
      for (let i = 0; i < 3; i++) {
        const u = await user(r.id);
        await db.insertInto("org_memberships").values({
          org_id: o.id,
          user_id: u.id,
          created_at: new Date(0),
        })
          .execute();
        tied.push({ orgId: o.id, userId: u.id, createdAt: new Date(0) });
      }
      tied.sort((a, b) => a.userId < b.userId ? -1 : 1);
      const added = [];
      for (let i = 0; i < 4; i++) {
        const u = await user(r.id);
        if (i % 3 === 0) clock.advance(5); // the clock standing still: still a later creation time
        added.push(await stores.organizations.addMember(o.id, u.id));
      }
      const expected = [...tied, ...added];
      assert.deepEqual(await stores.organizations.listMembers(o.id), expected);
      assert.deepEqual(
        await stores.organizations.listMembers(o.id, { offset: 2, limit: 3 }),
        expected.slice(2, 5),
      );
      assert.deepEqual(
        await stores.organizations.listMembers(o.id, { offset: 6, limit: 3 }),
        expected.slice(6),
      );
      assert.deepEqual(await stores.organizations.listMembers(o.id, { offset: 10 }), []);
      assert.deepEqual(await stores.organizations.listMembers(o.id, { limit: 0 }), []);
      assert.equal(await stores.organizations.countMembers(o.id), 7);
      await rejectsWith(stores.organizations.listMembers(o.id, { offset: -1 }), "invalid_request");
      await rejectsWith(stores.organizations.listMembers(o.id, { limit: 1.5 }), "invalid_request");
    },
    "property: pages concatenated equal the full stable order": async (
      { stores, realm, org, user, clock },
    ) => {
      const r = await realm();
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 0, maxLength: 10 }),
          fc.integer({ min: 1, max: 4 }),
          async (steps, pageSize) => {
            const o = await org(r.id);
            const joined: string[] = [];
            for (const step of steps) {
              clock.advance(step); // 0: the clock did not move since the previous member
              joined.push((await stores.organizations.addMember(o.id, (await user(r.id)).id)).userId);
            }
            const full = await stores.organizations.listMembers(o.id);
            assert.deepEqual(
              full.map((m) => m.userId),
              joined,
              "creation order, even when the clock stands still",
            );
            assert.equal(full.length, steps.length);
            const paged = [];
            for (let offset = 0;; offset += pageSize) {
              const page = await stores.organizations.listMembers(o.id, { offset, limit: pageSize });
              assert.ok(page.length <= pageSize);
              paged.push(...page);
              if (page.length < pageSize) break;
            }
            assert.deepEqual(paged, full);
          },
        ),
        { numRuns: 15 },
      );
    },
  },
});
