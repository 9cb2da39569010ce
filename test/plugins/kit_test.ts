import { strict as assert } from "node:assert";
import { Hono } from "hono";
import { NotFoundError } from "../../core/errors.ts";
import type { FenceScope } from "../../http/auth/fence.ts";
import {
  globalPermissions,
  listedOrg,
  reachable,
  reaches,
  scopedPermissions,
  unchangedView,
  uuidParam,
} from "../../plugins/kit.ts";

const REALM = "0a6f7f6e-6a4b-4a43-9c65-2d7c0b7e0c01";
const ORG = "1b6f7f6e-6a4b-4a43-9c65-2d7c0b7e0c02";
const OTHER_ORG = "2c6f7f6e-6a4b-4a43-9c65-2d7c0b7e0c03";

const scope = (global: boolean, orgId: string | null): FenceScope =>
  ({ principal: { realmId: REALM.toUpperCase() }, global, orgId }) as unknown as FenceScope;

const notFound = (what: string) => (error: unknown) =>
  error instanceof NotFoundError && error.message === `No such ${what}.`;

Deno.test("scopedPermissions and globalPermissions: manage implies read, changing takes manage", () => {
  assert.deepEqual(
    scopedPermissions({ readGlobal: "rg", manageGlobal: "mg", readOrg: "ro", manageOrg: "mo" }),
    { read: { global: ["rg", "mg"], org: ["ro", "mo"] }, manage: { global: ["mg"], org: ["mo"] } },
  );
  assert.deepEqual(globalPermissions("r", "m"), { read: ["r", "m"], manage: ["m"] });
});

Deno.test("reaches/reachable: the caller's realm and organization, else 404", () => {
  const record = { realmId: REALM, orgId: ORG, name: "x" };
  assert.equal(reaches(scope(true, null), REALM, OTHER_ORG), true);
  assert.equal(reaches(scope(true, null), REALM, null), true);
  assert.equal(reaches(scope(true, null), "another-realm", ORG), false);
  assert.equal(reaches(scope(false, ORG), REALM, ORG.toUpperCase()), true);
  assert.equal(reaches(scope(false, ORG), REALM, OTHER_ORG), false);
  assert.equal(reaches(scope(false, ORG), REALM, null), false);
  assert.equal(reachable(scope(false, ORG), record, "thing"), record);
  assert.throws(() => reachable(scope(false, OTHER_ORG), record, "thing"), notFound("thing"));
  assert.throws(() => reachable(scope(true, null), null, "thing"), notFound("thing"));
  assert.throws(
    () => reachable(scope(true, null), { ...record, realmId: "another-realm" }, "thing"),
    notFound("thing"),
  );
});

Deno.test("listedOrg: the asked organization for realm-wide callers, the caller's own otherwise", () => {
  assert.equal(listedOrg(scope(true, null), undefined), null);
  assert.equal(listedOrg(scope(true, null), OTHER_ORG), OTHER_ORG);
  assert.equal(listedOrg(scope(false, ORG), undefined), ORG);
  assert.equal(listedOrg(scope(false, ORG), ORG), ORG);
  assert.throws(() => listedOrg(scope(false, ORG), OTHER_ORG), notFound("organization"));
});

Deno.test("uuidParam: a UUID route parameter as given, anything else 404", async () => {
  const app = new Hono();
  app.onError((error, c) => c.text(error.message, error instanceof NotFoundError ? 404 : 500));
  app.get("/things/:id", (c) => c.text(uuidParam(c, "id", "thing")));
  const ok = await app.request(`/things/${ORG.toUpperCase()}`);
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), ORG.toUpperCase());
  for (const bad of ["x", `${ORG}0`, ORG.slice(1), "%00"]) {
    const res = await app.request(`/things/${bad}`);
    assert.equal(res.status, 404, bad);
    assert.equal(await res.text(), "No such thing.");
  }
});

Deno.test("unchangedView: the same view apart from updatedAt", () => {
  type Row = { name: string; tags: string[]; updatedAt: Date };
  const view = (r: Row) => ({ name: r.name, tags: [...r.tags], updatedAt: r.updatedAt.toISOString() });
  const before: Row = { name: "a", tags: ["x", "y"], updatedAt: new Date(0) };
  assert.equal(unchangedView(view, before, { ...before, updatedAt: new Date(1000) }), true);
  assert.equal(unchangedView(view, before, { ...before, name: "b" }), false);
  assert.equal(unchangedView(view, before, { ...before, tags: ["y", "x"] }), false);
});
