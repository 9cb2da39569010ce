/**
 * The authority rule (core/authority): properties over random callers and subjects (grants of
 * every shape: realm-wide and pinned, Allow and Deny, conditioned and team-restricted, over svc
 * and plugin services), and the examples of issue 24.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { compileSubject, evaluate, type Grant, parsePermissionId } from "../../../core/authz/mod.ts";
import { callerAuthority, permissionUniverse, reachOf } from "../../../core/authority/mod.ts";

const SERVICES = ["svc", "federation", "workload"];
const SCOPES = ["global", "org", "team", "self"] as const;
const ACTIONS = ["users-manage", "users-read", "import", "providers-manage"];
const UNIVERSE = permissionUniverse(
  SERVICES.flatMap((s) => SCOPES.flatMap((scope) => ACTIONS.map((a) => `${s}:${scope}:${a}`))),
);
const ORGS = ["0a", "0b"];
const REALM = "r";

const segment = (values: string[]) =>
  fc.oneof(
    fc.constantFrom(...values),
    fc.constant("*"),
    fc.constantFrom(...values).map((v) => `${v.slice(0, 2)}*`),
  );
const pattern = fc.tuple(segment(SERVICES), fc.constantFrom("*", ...SCOPES), segment(ACTIONS))
  .map(([s, scope, a]) => `${s}:${scope}:${a}`);
const grant: fc.Arbitrary<Grant> = fc.record({
  pattern,
  effect: fc.constantFrom("Allow", "Allow", "Deny") as fc.Arbitrary<"Allow" | "Deny">,
  orgId: fc.constantFrom(null, null, ...ORGS),
  teamIds: fc.constantFrom(null, ["t1"]),
  condition: fc.constantFrom(null, null, {
    version: 1,
    condition: { op: "exists", attr: "subject.contractor" },
  }),
  source: fc.constant("role:test"),
});
const grants = fc.array(grant, { maxLength: 6 });
const scope = fc.oneof(
  fc.constant({ realmWide: true, orgId: null as string | null }),
  fc.constantFrom(...ORGS).map((orgId) => ({ realmWide: false, orgId: orgId as string | null })),
);

const authorityOf = (s: { realmWide: boolean; orgId: string | null }, held: readonly Grant[]) =>
  callerAuthority({ callerId: "caller", realmId: REALM, ...s, grants: held }, UNIVERSE);

/** Whether `subject` (its grants taken at their best: conditions held, own teams) reaches `id` in `orgId`. */
function subjectHas(subjectGrants: readonly Grant[], id: string, orgId: string | null): boolean {
  // At its best: every Allow applies; a Deny only when plain (no condition, no teams).
  const best = subjectGrants
    .filter((g) => g.effect === "Allow" || ((g.teamIds ?? []).length === 0 && g.condition == null))
    .map((g) => ({ ...g, teamIds: null, condition: null }));
  const compiled = compileSubject({ id: "subject", orgId, teamIds: ["t1"], attributes: {}, grants: best });
  return evaluate(compiled, {
    permission: id,
    resourceOrgId: orgId,
    resourceOwnerId: "subject",
    resourceTeamIds: ["t1"],
  }).decision === "Allowed";
}

/** Whether the caller, judged by the engine as it acts in `orgId`, is allowed `id` unconditionally there. */
function callerHas(held: readonly Grant[], id: string, orgId: string): boolean {
  const plain = held.filter((g) =>
    g.effect === "Deny" || ((g.teamIds ?? []).length === 0 && g.condition == null)
  )
    .map((g) => ({ ...g, teamIds: null, condition: null }));
  const compiled = compileSubject({ id: "caller", orgId, teamIds: ["t9"], attributes: {}, grants: plain });
  return evaluate(compiled, {
    permission: id,
    resourceOrgId: orgId,
    resourceOwnerId: "caller",
    resourceTeamIds: ["t9"],
  }).decision === "Allowed";
}

Deno.test("authority: when nothing is missing over a subject, the caller holds all the subject has, in every organization", () => {
  fc.assert(
    fc.property(scope, grants, grants, (s, held, subjectGrants) => {
      const authority = authorityOf(s, held);
      if (authority.missingOver(subjectGrants).length > 0) return;
      const root = s.realmWide &&
        UNIVERSE.filter((id) => id.service === "svc").every((id) => authority.holds(id, null));
      for (const orgId of ORGS) {
        for (const id of UNIVERSE) {
          if (!subjectHas(subjectGrants, id.text, orgId)) continue;
          // The realm's root is the authority over the plugins' permissions.
          if (root && id.service !== "svc") continue;
          assert.ok(s.realmWide || (orgId === s.orgId && id.scope !== "global"), `${id.text} in ${orgId}`);
          assert.ok(callerHas(held, id.text, orgId), `caller lacks ${id.text} in ${orgId}`);
        }
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("authority: handing out a pattern at a context is allowed exactly when a subject holding only it is within authority", () => {
  fc.assert(
    fc.property(
      scope,
      grants,
      fc.array(pattern, { minLength: 1, maxLength: 3 }),
      fc.constantFrom(null, ...ORGS),
      (s, held, patterns, context) => {
        const authority = authorityOf(s, held);
        const missing = authority.missingToGrant(patterns, context);
        const over = authority.missingOver(
          patterns.map((p) => ({ pattern: p, effect: "Allow" as const, orgId: context, source: "x" })),
        );
        assert.deepEqual([...new Set(over.map((m) => m.permission))].sort(), missing);
        // Outside the universe: free where the caller acts, refused elsewhere.
        const app = authority.missingToGrant(["docs:*:read"], context);
        assert.deepEqual(app, s.realmWide || context === s.orgId ? [] : ["docs:*:read"]);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("authority: a realm-wide caller covers a subject with its own unconditional grants; more Allow grants never need less", () => {
  const allows = fc.array(grant.map((g) => ({ ...g, effect: "Allow" as const })), { maxLength: 4 });
  fc.assert(
    fc.property(grants, grants, allows, (held, extra, more) => {
      const plain = held.map((g) => ({ ...g, effect: "Allow" as const, teamIds: null, condition: null }));
      assert.deepEqual(authorityOf({ realmWide: true, orgId: null }, plain).missingOver(plain), []);
      const authority = authorityOf({ realmWide: true, orgId: null }, held);
      const key = (m: { permission: string; context: string | null }) => `${m.permission}@${m.context}`;
      const fewer = new Set(authority.missingOver(extra).map(key));
      const all = new Set(authority.missingOver([...extra, ...more]).map(key));
      for (const k of fewer) assert.ok(all.has(k), k);
    }),
    { numRuns: 200 },
  );
});

Deno.test("authority: an organization caller never holds a global permission, anything realm-wide or in another organization", () => {
  fc.assert(
    fc.property(fc.constantFrom(...ORGS), grants, (orgId, held) => {
      const authority = authorityOf({ realmWide: false, orgId }, held);
      for (const id of UNIVERSE) {
        assert.equal(authority.holds(id, null), false);
        for (const other of ORGS) {
          if (other !== orgId || id.scope === "global") assert.equal(authority.holds(id, other), false);
        }
      }
    }),
    { numRuns: 100 },
  );
});

Deno.test("authority: an org caller reads a subject's activity of its own organization only", () => {
  fc.assert(
    fc.property(scope, fc.subarray(ORGS), (s, memberOf) => {
      const filter = authorityOf(s, []).activityFilter(memberOf);
      if (s.realmWide) return assert.equal(filter, null);
      assert.equal(filter?.orgId, s.orgId);
      assert.equal(filter?.withoutOrg, memberOf.every((org) => org === s.orgId));
    }),
  );
});

Deno.test("authority: the read filter and mayRead agree", () => {
  fc.assert(
    fc.property(
      scope,
      fc.constantFrom(REALM, "other"),
      fc.constantFrom(null, ...ORGS),
      (s, realmId, orgId) => {
        const authority = authorityOf(s, []);
        const filter = authority.readFilter();
        const expected = realmId === filter.realmId && (filter.orgId === null || filter.orgId === orgId);
        assert.equal(authority.mayRead({ realmId, orgId }), expected);
      },
    ),
  );
});

Deno.test("authority: the issue 24 examples", () => {
  const svcAdmin: Grant = { pattern: "svc:*:*", effect: "Allow", source: "role:svc-admin" };
  const orgAdmin: Grant = { pattern: "svc:org:*", effect: "Allow", orgId: "0a", source: "role:org-admin" };
  const realm = authorityOf({ realmWide: true, orgId: null }, [svcAdmin]);
  const org = authorityOf({ realmWide: false, orgId: "0a" }, [orgAdmin]);
  // An org admin cannot hand out plugin permissions, nor global ones, even pinned to its organization.
  assert.ok(org.missingToGrant(["workload:*:*"], "0a").length > 0);
  assert.ok(org.missingToGrant(["svc:global:users-manage"], "0a").length > 0);
  assert.deepEqual(org.missingToGrant(["svc:org:users-read"], "0a"), []);
  assert.ok(org.missingToGrant(["svc:org:users-read"], "0b").length > 0);
  // A member with svc-admin pinned to the organization is beyond the org admin.
  assert.deepEqual(org.missingOver([{ ...svcAdmin, orgId: "0a" }])[0], {
    permission: "svc:global:import",
    context: "0a",
  });
  assert.deepEqual(
    org.missingOver([{ pattern: "svc:org:users-read", effect: "Allow", orgId: "0a", source: "" }]),
    [],
  );
  // The svc admin holds no plugin permission but, as the realm's root, is their authority; a
  // realm admin short of root is not.
  assert.deepEqual(realm.missingOver([{ pattern: "federation:*:*", effect: "Allow", source: "" }]), []);
  const usersAdmin = authorityOf({ realmWide: true, orgId: null }, [
    { pattern: "svc:*:users-*", effect: "Allow", source: "" },
  ]);
  assert.ok(usersAdmin.missingOver([{ pattern: "federation:*:*", effect: "Allow", source: "" }]).length > 0);
  assert.ok(usersAdmin.missingToGrant(["workload:global:*"], null).length > 0);
  assert.ok(usersAdmin.missingOver([{ ...svcAdmin, orgId: "0a" }]).length > 0);
  assert.deepEqual(realm.missingOver([{ ...orgAdmin }]), []);
  // A pinned Deny narrows a realm-wide caller in that organization.
  const narrowed = authorityOf({ realmWide: true, orgId: null }, [
    svcAdmin,
    { pattern: "svc:org:users-manage", effect: "Deny", orgId: "0b", source: "" },
  ]);
  assert.equal(narrowed.holds("svc:org:users-manage", "0a"), true);
  assert.equal(narrowed.holds("svc:org:users-manage", "0b"), false);
  assert.equal(narrowed.holds("svc:org:users-manage", null), false);
  assert.equal(reachOf([svcAdmin], UNIVERSE).length, 16);
  assert.equal(parsePermissionId("svc:org:import").scope, "org");
});
