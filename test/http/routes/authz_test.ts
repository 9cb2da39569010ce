import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/mod.ts";
import { AUTHZ_INSPECT_GLOBAL, AUTHZ_INSPECT_ORG } from "../../../core/definitions/svc-permissions.ts";
import { nullEventSink } from "../../../core/events/sink.ts";
import { seededRandom } from "../../../core/random.ts";
import { InProcessCacheBus } from "../../../core/snapshots/bus.ts";
import { SubjectSnapshots } from "../../../core/snapshots/service.ts";
import { createApp } from "../../../http/app.ts";
import { authzRoutes } from "../../../http/routes/authz.ts";
import { createSqlSubjectGrantSource } from "../../../storage/sql/subject-grants.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder, uuid } from "../../support/seed.ts";
import { asSubject, testSubjectAuthenticator } from "../../support/test-subject.ts";

Deno.test("authz routes", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const snapshots = new SubjectSnapshots({
    source: createSqlSubjectGrantSource(database.db),
    bus: new InProcessCacheBus(),
    events: nullEventSink,
    clock,
    ttlMs: 60_000,
    maxEntries: 100,
  });
  await snapshots.start();
  const app = createApp({
    config: loadConfig({ env: {} }).config,
    readinessChecks: [],
    clock,
    random: seededRandom(1),
    authenticator: testSubjectAuthenticator,
    routes: [authzRoutes(snapshots)],
  });
  const seed = seeder(database.db);
  const realm = await seed.realm();
  const admin = await seed.user(realm);
  const orgAdmin = await seed.user(realm);
  const alice = await seed.user(realm, { clearance: 2 });
  const outsider = await seed.user(realm);
  const org = await seed.org(realm, [alice, orgAdmin]);
  const team = await seed.team(realm, org, [alice]);
  await seed.assign(realm, await seed.role(realm, "inspector", [{ pattern: AUTHZ_INSPECT_GLOBAL }]), {
    kind: "User",
    id: admin,
  });
  await seed.assign(realm, await seed.role(realm, "org-inspector", [{ pattern: AUTHZ_INSPECT_ORG }], org), {
    kind: "User",
    id: orgAdmin,
  });
  const editor = await seed.role(realm, "editor", [
    { pattern: "docs:org:*" },
    { pattern: "docs:org:delete", effect: "Deny" },
    { pattern: "docs:team:edit" },
    {
      pattern: "docs:org:secret",
      condition: { version: 1, condition: { op: "gte", attr: "subject.clearance", value: 3 } },
    },
  ]);
  await seed.assign(realm, editor, { kind: "User", id: alice }, org);
  const otherRealm = await seed.realm();
  const stranger = await seed.user(otherRealm);

  const inspect = (caller: Record<string, string>, body: unknown) =>
    app.request("/svc-admin/authz/inspect", {
      method: "POST",
      headers: { ...caller, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  const asAdmin = asSubject(admin, realm);
  const check = (permission: string, extra: Record<string, unknown> = {}) => ({
    userId: alice,
    orgId: org,
    check: { permission, resourceOrgId: org, ...extra },
  });

  await t.step("explains an Allowed decision grant by grant", async () => {
    const res = await inspect(asAdmin, check("docs:org:read"));
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.decision, "Allowed");
    assert.deepEqual(body.grants.map((g: { outcome: string }) => g.outcome), [
      "Allowed",
      "PatternMismatch",
      "PatternMismatch",
      "PatternMismatch",
    ]);
    assert.equal(body.grants[0].source, "role:editor");
    assert.equal(body.grants[0].orgId, org);
  });

  await t.step("explains a Denied decision", async () => {
    const body = await (await inspect(asAdmin, check("docs:org:delete"))).json();
    assert.equal(body.decision, "Denied");
    assert.deepEqual(body.grants.map((g: { outcome: string }) => g.outcome), [
      "Allowed",
      "Denied",
      "PatternMismatch",
      "PatternMismatch",
    ]);
  });

  await t.step("explains a DeniedByDefault decision with scope and condition outcomes", async () => {
    let body = await (await inspect(asAdmin, check("docs:team:edit", { resourceTeamIds: [uuid()] }))).json();
    assert.equal(body.decision, "DeniedByDefault");
    assert.equal(body.grants[2].outcome, "ScopeNotApplicable");
    body = await (await inspect(asAdmin, check("docs:team:edit", { resourceTeamIds: [team] }))).json();
    assert.equal(body.decision, "Allowed");
    body = await (await inspect(asAdmin, check("docs:org:secret"))).json();
    assert.equal(body.grants[3].outcome, "ConditionFailed");
    assert.equal(body.decision, "Allowed", "docs:org:* still allows it");
    body = await (await inspect(asAdmin, check("billing:org:read"))).json();
    assert.equal(body.decision, "DeniedByDefault");
    assert.ok(body.grants.every((g: { outcome: string }) => g.outcome === "PatternMismatch"));
  });

  await t.step("always explains from a fresh snapshot, never the cache", async () => {
    await app.request("/profile/permissions", { headers: asSubject(alice, realm, org) }); // fills the cache
    await seed.assign(realm, await seed.role(realm, "billing", [{ pattern: "billing:org:read" }]), {
      kind: "User",
      id: alice,
    });
    const body = await (await inspect(asAdmin, check("billing:org:read"))).json();
    assert.equal(body.decision, "Allowed");
    const cached =
      await (await app.request("/profile/permissions", { headers: asSubject(alice, realm, org) })).json();
    assert.ok(!cached.permissions.includes("billing:org:read"), "the profile is served from the cache");
    await snapshots.invalidateUser(alice);
    const fresh = await (await app.request("/profile/permissions", { headers: asSubject(alice, realm, org) }))
      .json();
    assert.ok(fresh.permissions.includes("billing:org:read"));
  });

  await t.step("is fenced by its svc: permission", async () => {
    let res = await inspect({}, check("docs:org:read"));
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "unauthenticated");
    res = await inspect(asSubject(outsider, realm), check("docs:org:read"));
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error.code, "forbidden");
    res = await inspect(asSubject(alice, realm, org), check("docs:org:read"));
    assert.equal(res.status, 403);
  });

  await t.step("the org-scoped inspector sees members of its own organization only", async () => {
    const asOrgAdmin = asSubject(orgAdmin, realm, org);
    assert.equal((await inspect(asOrgAdmin, check("docs:org:read"))).status, 200);
    assert.equal((await inspect(asOrgAdmin, { ...check("docs:org:read"), userId: outsider })).status, 404);
    assert.equal((await inspect(asOrgAdmin, { ...check("docs:org:read"), orgId: null })).status, 403);
  });

  await t.step("unknown users and other realms answer the same 404", async () => {
    const unknown = await inspect(asAdmin, { ...check("docs:org:read"), userId: uuid() });
    const foreign = await inspect(asAdmin, { ...check("docs:org:read"), userId: stranger });
    assert.equal(unknown.status, 404);
    assert.equal(foreign.status, 404);
    assert.equal((await unknown.json()).error.message, (await foreign.json()).error.message);
  });

  await t.step("bad input gets a stable code", async () => {
    let res = await inspect(asAdmin, { userId: "x", check: { permission: "docs:org:read" } });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, "invalid_request");
    res = await inspect(asAdmin, check("docs:org:*"));
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, "permission_format");
    res = await inspect(asAdmin, { ...check("docs:org:read"), extra: 1 });
    assert.equal(res.status, 400);
  });

  await t.step("GET /profile/permissions returns allow patterns and team ids only", async () => {
    await snapshots.invalidateAll();
    const res = await app.request("/profile/permissions", { headers: asSubject(alice, realm, org) });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ["permissions", "teamIds"]);
    assert.deepEqual(body.permissions, [
      "docs:org:*",
      "docs:team:edit",
      "docs:org:secret",
      "billing:org:read",
    ]);
    assert.deepEqual(body.teamIds, [team]);
    assert.equal((await app.request("/profile/permissions")).status, 401);
  });

  await snapshots.stop();
  await database.close();
});
