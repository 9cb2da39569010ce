/**
 * Conformance of the role store (roles, grants, assignments) and the policy store on
 * both drivers: atomic creation with grants, the deletion cascade, logical identity.
 */
import assert from "node:assert/strict";
import type { Kysely } from "kysely";
import { cryptoRandom } from "../../../core/random.ts";
import type { GrantInput } from "../../../core/storage/roles.ts";
import type { Database } from "../../../storage/database.ts";
import { createSqlRoleStore } from "../../../storage/sql/roles.ts";
import { conformance, rejectsWith } from "./support.ts";

const CONDITION = {
  version: 1,
  condition: { allOf: [{ op: "eq", attr: "subject.department", value: { ref: "resource.department" } }] },
};
/** The same document with keys in another order. */
const CONDITION_REORDERED = {
  condition: { allOf: [{ value: { ref: "resource.department" }, attr: "subject.department", op: "eq" }] },
  version: 1,
};

async function countRows(
  db: Kysely<Database>,
  table: "grants" | "role_assignments" | "roles" | "policies",
  column: string,
  id: string,
) {
  const row = await db.selectFrom(table)
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    // deno-lint-ignore no-explicit-any
    .where(column as any, "=", id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

conformance({
  roles: {
    "realm-level and org-level roles; keys unique per level": async ({ stores, realm, org }) => {
      const r = await realm();
      const o = await org(r.id);
      const realmRole = await stores.roles.create({ realmId: r.id, key: "viewer", displayName: "Viewer" });
      const orgRole = await stores.roles.create({
        realmId: r.id,
        orgId: o.id,
        key: "viewer",
        displayName: "Org viewer",
      });
      assert.equal(realmRole.orgId, null);
      assert.equal(orgRole.orgId, o.id);
      await rejectsWith(
        stores.roles.create({ realmId: r.id, key: "viewer", displayName: "x" }),
        "conflict",
        "role_key_taken",
      );
      await rejectsWith(
        stores.roles.create({ realmId: r.id, orgId: o.id, key: "viewer", displayName: "x" }),
        "conflict",
        "role_key_taken",
      );
      assert.deepEqual(await stores.roles.get(realmRole.id), realmRole);
      assert.deepEqual(await stores.roles.getByKey(r.id, "viewer"), realmRole);
      assert.deepEqual(await stores.roles.getByKey(r.id, "viewer", o.id), orgRole);
      assert.deepEqual((await stores.roles.list(r.id, { orgId: null })).map((x) => x.id), [realmRole.id]);
      assert.deepEqual((await stores.roles.list(r.id, { orgId: o.id })).map((x) => x.id), [orgRole.id]);
      assert.equal((await stores.roles.list(r.id)).length, 2);
      const renamed = await stores.roles.update(realmRole.id, { displayName: "Reader" });
      assert.equal(renamed.displayName, "Reader");
      await rejectsWith(
        stores.roles.create({ realmId: r.id, orgId: (await org()).id, key: "k", displayName: "x" }),
        "invalid_request",
      );
    },
    "createWithGrants stores grants as given, in order": async ({ stores, realm, org, clock }) => {
      const r = await realm();
      const o = await org(r.id);
      const grants: GrantInput[] = [
        { pattern: "docs:org:read", effect: "Allow" },
        {
          pattern: "docs:team:*",
          effect: "Allow",
          orgId: o.id,
          teamIds: ["t-1", "t,2"],
          condition: CONDITION,
        },
        { pattern: "NOT A PATTERN", effect: "Deny" }, // validation happens elsewhere
      ];
      const { role, grants: stored } = await stores.roles.createWithGrants(
        { realmId: r.id, key: "editor", displayName: "Editor" },
        grants,
      );
      assert.deepEqual(
        stored.map((g) => ({
          pattern: g.pattern,
          effect: g.effect,
          orgId: g.orgId,
          teamIds: g.teamIds,
          condition: g.condition,
        })),
        [
          { pattern: "docs:org:read", effect: "Allow", orgId: null, teamIds: [], condition: null },
          {
            pattern: "docs:team:*",
            effect: "Allow",
            orgId: o.id,
            teamIds: ["t-1", "t,2"],
            condition: CONDITION,
          },
          { pattern: "NOT A PATTERN", effect: "Deny", orgId: null, teamIds: [], condition: null },
        ],
      );
      for (const g of stored) {
        assert.equal(g.roleId, role.id);
        assert.equal(g.policyId, null);
        assert.equal(g.createdAt.getTime(), clock.now());
      }
      assert.deepEqual(
        await stores.roles.listGrants(role.id),
        [...stored].sort((a, b) => a.id < b.id ? -1 : 1),
      );
    },
    "a failing grant insert leaves no role": async ({ stores, realm, db }) => {
      const r = await realm();
      const duplicate: GrantInput = { pattern: "a:global:read", effect: "Allow", condition: CONDITION };
      await rejectsWith(
        stores.roles.createWithGrants({ realmId: r.id, key: "dup", displayName: "Dup" }, [
          { pattern: "ok:global:read", effect: "Allow" },
          duplicate,
          { ...duplicate, condition: CONDITION_REORDERED }, // same logical identity
        ]),
        "conflict",
        "grant_exists",
      );
      assert.equal(await stores.roles.getByKey(r.id, "dup"), null);
      await rejectsWith(
        stores.roles.createWithGrants({ realmId: r.id, key: "bad", displayName: "Bad" }, [
          { pattern: "ok:global:read", effect: "Allow" },
          { pattern: "x:global:read", effect: "Maybe" as "Allow" },
        ]),
        "invalid_request",
      );
      assert.equal(await stores.roles.getByKey(r.id, "bad"), null);
      assert.deepEqual(await stores.roles.list(r.id), []);
      const orphans = await db.selectFrom("grants").select("id").where("pattern", "=", "ok:global:read")
        .where("role_id", "is not", null).execute();
      assert.deepEqual(orphans, []);
    },
    "createWithGrants joins a caller's transaction": async ({ db, realm, clock }) => {
      const r = await realm();
      const deps = { clock, random: cryptoRandom };
      const created = await db.transaction().execute((trx) =>
        createSqlRoleStore(trx, deps).createWithGrants({ realmId: r.id, key: "tx", displayName: "Tx" }, [
          { pattern: "a:org:read", effect: "Allow" },
        ])
      );
      assert.equal((await createSqlRoleStore(db, deps).listGrants(created.role.id)).length, 1);
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await createSqlRoleStore(trx, deps).createWithGrants({
            realmId: r.id,
            key: "rolled",
            displayName: "R",
          }, [
            { pattern: "a:org:read", effect: "Allow" },
          ]);
          throw new Error("caller aborts");
        }),
        /caller aborts/,
      );
      assert.equal(await createSqlRoleStore(db, deps).getByKey(r.id, "rolled"), null);
    },
    "delete removes the role, its grants and every assignment of it": async (
      { stores, realm, org, user, db },
    ) => {
      const r = await realm();
      const o = await org(r.id);
      const u = await user(r.id);
      const group = await stores.groups.create({ realmId: r.id, key: "g", displayName: "G" });
      const { role } = await stores.roles.createWithGrants(
        { realmId: r.id, key: "doomed", displayName: "D" },
        [
          { pattern: "a:org:read", effect: "Allow" },
          { pattern: "a:org:write", effect: "Deny", condition: CONDITION },
        ],
      );
      const { role: kept } = await stores.roles.createWithGrants({
        realmId: r.id,
        key: "kept",
        displayName: "K",
      }, [
        { pattern: "a:org:read", effect: "Allow" },
      ]);
      await stores.roles.assign({ roleId: role.id, principalKind: "User", principalId: u.id });
      await stores.roles.assign({ roleId: role.id, principalKind: "User", principalId: u.id, orgId: o.id });
      await stores.roles.assign({ roleId: role.id, principalKind: "Group", principalId: group.id });
      const keptAssignment = await stores.roles.assign({
        roleId: kept.id,
        principalKind: "User",
        principalId: u.id,
      });
      assert.equal(await countRows(db, "role_assignments", "role_id", role.id), 3);

      assert.equal(await stores.roles.delete(role.id), true);
      assert.equal(await stores.roles.get(role.id), null);
      assert.equal(await countRows(db, "grants", "role_id", role.id), 0);
      assert.equal(await countRows(db, "role_assignments", "role_id", role.id), 0);
      assert.deepEqual(await stores.roles.listGrants(role.id), []);
      assert.deepEqual(await stores.roles.listAssignmentsForPrincipal("User", u.id), [keptAssignment]);
      assert.equal((await stores.roles.listGrants(kept.id)).length, 1);
      assert.equal(await stores.roles.delete(role.id), false);
      assert.equal(await stores.roles.delete("not-a-uuid"), false);
    },
    "grants by logical identity; add and remove": async ({ stores, realm, uuid }) => {
      const r = await realm();
      const { role, grants } = await stores.roles.createWithGrants({
        realmId: r.id,
        key: "li",
        displayName: "LI",
      }, [
        { pattern: "a:org:read", effect: "Allow", condition: CONDITION },
        { pattern: "a:org:read", effect: "Allow" },
      ]);
      const [conditioned, plain] = grants;
      assert.equal(
        (await stores.roles.findGrantByLogicalIdentity(role.id, "a:org:read", "Allow", CONDITION_REORDERED))
          ?.id,
        conditioned.id,
      );
      assert.equal(
        (await stores.roles.findGrantByLogicalIdentity(role.id, "a:org:read", "Allow", null))?.id,
        plain.id,
      );
      assert.equal(
        (await stores.roles.findGrantByLogicalIdentity(role.id, "a:org:read", "Allow", undefined))?.id,
        plain.id,
      );
      assert.equal(await stores.roles.findGrantByLogicalIdentity(role.id, "a:org:read", "Deny", null), null);
      assert.equal(await stores.roles.findGrantByLogicalIdentity(role.id, "a:org:*", "Allow", null), null);
      assert.equal(
        await stores.roles.findGrantByLogicalIdentity(role.id, "a:org:read", "Allow", {
          version: 1,
          condition: { op: "exists", attr: "subject.x" },
        }),
        null,
      );
      await rejectsWith(
        stores.roles.addGrant(role.id, { pattern: "a:org:read", effect: "Allow" }),
        "conflict",
        "grant_exists",
      );
      const deny = await stores.roles.addGrant(role.id, { pattern: "a:org:read", effect: "Deny" });
      assert.equal(deny.effect, "Deny");
      await rejectsWith(
        stores.roles.addGrant(uuid(), { pattern: "a:org:read", effect: "Allow" }),
        "not_found",
      );
      await rejectsWith(stores.roles.addGrant(role.id, { pattern: "", effect: "Allow" }), "invalid_request");
      const { role: other } = await stores.roles.createWithGrants({
        realmId: r.id,
        key: "li2",
        displayName: "x",
      }, []);
      assert.equal(await stores.roles.removeGrant(other.id, deny.id), false);
      assert.equal(await stores.roles.removeGrant(role.id, deny.id), true);
      assert.equal(await stores.roles.removeGrant(role.id, deny.id), false);
      assert.deepEqual(
        (await stores.roles.listGrants(role.id)).map((g) => g.id).sort(),
        [conditioned.id, plain.id].sort(),
      );
    },
    "assignments: realm-wide or per organization, listed per principal": async (
      { stores, realm, org, user, uuid, clock },
    ) => {
      const r = await realm();
      const [o1, o2] = [await org(r.id), await org(r.id)];
      const u = await user(r.id);
      const role = await stores.roles.create({ realmId: r.id, key: "member", displayName: "Member" });
      const orgRole = await stores.roles.create({
        realmId: r.id,
        orgId: o2.id,
        key: "lead",
        displayName: "Lead",
      });
      const wide = await stores.roles.assign({ roleId: role.id, principalKind: "User", principalId: u.id });
      clock.advance(1);
      const inO1 = await stores.roles.assign({
        roleId: role.id,
        principalKind: "User",
        principalId: u.id,
        orgId: o1.id,
      });
      clock.advance(1);
      const inO2 = await stores.roles.assign({
        roleId: orgRole.id,
        principalKind: "User",
        principalId: u.id,
      });
      assert.equal(wide.orgId, null);
      assert.equal(wide.realmId, r.id);
      assert.equal(inO1.orgId, o1.id);
      assert.equal(inO2.orgId, o2.id, "an org-level role is assigned in its organization");
      await rejectsWith(
        stores.roles.assign({ roleId: role.id, principalKind: "User", principalId: u.id }),
        "conflict",
        "role_assignment_exists",
      );
      await rejectsWith(
        stores.roles.assign({ roleId: orgRole.id, principalKind: "User", principalId: u.id, orgId: o1.id }),
        "invalid_request",
      );
      await rejectsWith(
        stores.roles.assign({
          roleId: role.id,
          principalKind: "User",
          principalId: u.id,
          orgId: (await org()).id,
        }),
        "invalid_request",
      );
      await rejectsWith(
        stores.roles.assign({ roleId: role.id, principalKind: "User", principalId: u.id, orgId: uuid() }),
        "not_found",
      );
      await rejectsWith(
        stores.roles.assign({ roleId: uuid(), principalKind: "User", principalId: u.id }),
        "not_found",
      );
      await rejectsWith(
        stores.roles.assign({ roleId: role.id, principalKind: "Robot" as "User", principalId: u.id }),
        "invalid_request",
      );
      const list = async (orgId?: string | null) =>
        (await stores.roles.listAssignmentsForPrincipal(
          "User",
          u.id,
          orgId === undefined ? undefined : { orgId },
        )).map((a) => a.id);
      assert.deepEqual(await list(), [wide.id, inO1.id, inO2.id]);
      assert.deepEqual(await list(null), [wide.id]);
      assert.deepEqual(await list(o1.id), [wide.id, inO1.id]);
      assert.deepEqual(await list(o2.id), [wide.id, inO2.id]);
      assert.deepEqual(await stores.roles.listAssignmentsForPrincipal("Group", u.id), []);
      assert.deepEqual((await stores.roles.listAssignmentsOfRole(role.id)).map((a) => a.id), [
        wide.id,
        inO1.id,
      ]);
      assert.deepEqual(await stores.roles.getAssignment(inO1.id), inO1);
      assert.equal(await stores.roles.unassign(inO1.id), true);
      assert.equal(await stores.roles.unassign(inO1.id), false);
      assert.equal(await stores.roles.getAssignment(inO1.id), null);
      const sa = await stores.roles.assign({
        roleId: role.id,
        principalKind: "ServiceAccount",
        principalId: uuid(),
      });
      assert.equal(sa.principalKind, "ServiceAccount");
    },
  },

  policies: {
    "create with grants, list for a principal, delete with grants": async (
      { stores, realm, org, user, db, clock },
    ) => {
      const r = await realm();
      const o = await org(r.id);
      const u = await user(r.id);
      const g = await stores.groups.create({ realmId: r.id, key: "pg", displayName: "PG" });
      const { policy, grants } = await stores.policies.create(
        { realmId: r.id, name: "own-docs", principalKind: "User", principalId: u.id },
        [{ pattern: "docs:self:*", effect: "Allow", condition: CONDITION }],
      );
      assert.equal(policy.orgId, null);
      assert.equal(grants[0].policyId, policy.id);
      assert.equal(grants[0].roleId, null);
      assert.deepEqual(grants[0].condition, CONDITION);
      clock.advance(1);
      const { policy: inOrg } = await stores.policies.create({
        realmId: r.id,
        orgId: o.id,
        name: "org",
        principalKind: "User",
        principalId: u.id,
      });
      const { policy: forGroup } = await stores.policies.create({
        realmId: r.id,
        name: "grp",
        principalKind: "Group",
        principalId: g.id,
      });
      assert.deepEqual(await stores.policies.get(policy.id), policy);
      const ids = async (orgId?: string | null) =>
        (await stores.policies.listForPrincipal("User", u.id, orgId === undefined ? undefined : { orgId }))
          .map((p) => p.id);
      assert.deepEqual(await ids(), [policy.id, inOrg.id]);
      assert.deepEqual(await ids(null), [policy.id]);
      assert.deepEqual(await ids(o.id), [policy.id, inOrg.id]);
      assert.deepEqual((await stores.policies.listForPrincipal("Group", g.id)).map((p) => p.id), [
        forGroup.id,
      ]);
      assert.equal((await stores.policies.list(r.id)).length, 3);

      assert.equal(
        (await stores.policies.findGrantByLogicalIdentity(
          policy.id,
          "docs:self:*",
          "Allow",
          CONDITION_REORDERED,
        ))?.id,
        grants[0].id,
      );
      await rejectsWith(
        stores.policies.addGrant(policy.id, {
          pattern: "docs:self:*",
          effect: "Allow",
          condition: CONDITION,
        }),
        "conflict",
        "grant_exists",
      );
      const extra = await stores.policies.addGrant(policy.id, { pattern: "docs:self:*", effect: "Deny" });
      assert.equal((await stores.policies.listGrants(policy.id)).length, 2);
      assert.equal(await stores.policies.removeGrant(policy.id, extra.id), true);
      assert.equal(await stores.policies.removeGrant(policy.id, extra.id), false);

      assert.equal(await stores.policies.delete(policy.id), true);
      assert.equal(await stores.policies.get(policy.id), null);
      assert.equal(await countRows(db, "grants", "policy_id", policy.id), 0);
      assert.equal(await stores.policies.delete(policy.id), false);
    },
    "a failing grant leaves no policy; invalid principals are refused": async (
      { stores, realm, user, uuid },
    ) => {
      const r = await realm();
      const u = await user(r.id);
      await rejectsWith(
        stores.policies.create({ realmId: r.id, name: "atomic", principalKind: "User", principalId: u.id }, [
          { pattern: "a:self:read", effect: "Allow" },
          { pattern: "a:self:read", effect: "Allow" },
        ]),
        "conflict",
        "grant_exists",
      );
      assert.deepEqual(await stores.policies.listForPrincipal("User", u.id), []);
      await rejectsWith(
        stores.policies.create({
          realmId: r.id,
          name: "x",
          principalKind: "ServiceAccount" as "User",
          principalId: u.id,
        }),
        "invalid_request",
      );
      await rejectsWith(
        stores.policies.create({ realmId: r.id, name: "x", principalKind: "User", principalId: "nope" }),
        "invalid_request",
      );
      await rejectsWith(
        stores.policies.create({ realmId: uuid(), name: "x", principalKind: "User", principalId: u.id }),
        "not_found",
      );
      await rejectsWith(
        stores.policies.addGrant(uuid(), { pattern: "a:self:read", effect: "Allow" }),
        "not_found",
      );
      assert.equal(await stores.policies.get(uuid()), null);
    },
  },
});
