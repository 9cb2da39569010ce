/**
 * Model-based test: any sequence of SCIM operations (create, replace, deactivate and reactivate
 * in Okta's and Entra's forms, delete; group create, member add and remove, delete; duplicates and
 * operations on unknown ids included) leaves the organization's membership, its users' statuses
 * and its groups' members equal to a model's, and the SCIM view (`GET /Users`, `GET /Groups`)
 * equal to svc's state. Each run uses a fresh organization and connection.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { seeder } from "../../support/seed.ts";
import { scimBed } from "./bed.ts";

const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

type Op =
  | { k: "createUser"; u: number }
  | { k: "active"; u: number; active: boolean; entra: boolean }
  | { k: "put"; u: number; given: string }
  | { k: "deleteUser"; u: number }
  | { k: "createGroup"; g: number }
  | { k: "addMember"; g: number; u: number }
  | { k: "removeMember"; g: number; u: number; entra: boolean }
  | { k: "deleteGroup"; g: number };

const user = fc.integer({ min: 0, max: 3 });
const group = fc.integer({ min: 0, max: 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("createUser" as const), u: user }), weight: 4 },
  fc.record({ k: fc.constant("active" as const), u: user, active: fc.boolean(), entra: fc.boolean() }),
  fc.record({ k: fc.constant("put" as const), u: user, given: fc.constantFrom("Ada", "Grace", "") }),
  fc.record({ k: fc.constant("deleteUser" as const), u: user }),
  fc.record({ k: fc.constant("createGroup" as const), g: group }),
  { arbitrary: fc.record({ k: fc.constant("addMember" as const), g: group, u: user }), weight: 2 },
  fc.record({ k: fc.constant("removeMember" as const), g: group, u: user, entra: fc.boolean() }),
  fc.record({ k: fc.constant("deleteGroup" as const), g: group }),
);

Deno.test("model: SCIM operations leave the organization's membership equal to the model's", async () => {
  const b = await scimBed();
  try {
    const bed = b.plugged.admin.bed;
    const seed = seeder(bed.database.db);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        run++;
        const orgId = await seed.org(b.realmId, []);
        const conn = await b.connection(orgId);
        const name = (u: number) => `u${u}-r${run}@model.test`;
        // The model: userName → {id, active}; group index → {id, members}.
        const users = new Map<number, { id: string; active: boolean }>();
        const groups = new Map<number, { id: string; members: Set<number> }>();
        const unknown = "00000000-0000-4000-8000-000000000000";
        for (const o of ops) {
          switch (o.k) {
            case "createUser": {
              const res = await b.scim(conn, "POST", "/Users", {
                schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
                userName: name(o.u),
                emails: [{ value: name(o.u), primary: true }],
                active: true,
              });
              if (users.has(o.u)) assert.equal(res.status, 409);
              else {
                assert.equal(res.status, 201, await res.clone().text());
                users.set(o.u, { id: (await res.json()).id, active: true });
              }
              break;
            }
            case "active": {
              const target = users.get(o.u);
              const operation = o.entra
                ? { op: "Replace", path: "active", value: o.active ? "True" : "False" }
                : { op: "replace", value: { active: o.active } };
              const res = await b.scim(conn, "PATCH", `/Users/${target?.id ?? unknown}`, {
                schemas: [PATCH],
                Operations: [operation],
              });
              assert.equal(res.status, target ? 200 : 404);
              if (target) target.active = o.active;
              break;
            }
            case "put": {
              const target = users.get(o.u);
              const res = await b.scim(conn, "PUT", `/Users/${target?.id ?? unknown}`, {
                schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
                userName: name(o.u),
                name: { givenName: o.given },
                emails: [{ value: name(o.u), primary: true }],
                active: target?.active ?? true,
              });
              assert.equal(res.status, target ? 200 : 404);
              break;
            }
            case "deleteUser": {
              const target = users.get(o.u);
              const res = await b.scim(conn, "DELETE", `/Users/${target?.id ?? unknown}`);
              assert.equal(res.status, target ? 204 : 404);
              if (target) {
                users.delete(o.u);
                for (const g of groups.values()) g.members.delete(o.u);
              }
              break;
            }
            case "createGroup": {
              const res = await b.scim(conn, "POST", "/Groups", {
                schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                displayName: `g${o.g}`,
              });
              if (groups.has(o.g)) assert.equal(res.status, 409);
              else {
                assert.equal(res.status, 201);
                groups.set(o.g, { id: (await res.json()).id, members: new Set() });
              }
              break;
            }
            case "addMember": {
              const g = groups.get(o.g);
              const u = users.get(o.u);
              const res = await b.scim(conn, "PATCH", `/Groups/${g?.id ?? unknown}`, {
                schemas: [PATCH],
                Operations: [{ op: "add", path: "members", value: [{ value: u?.id ?? unknown }] }],
              });
              assert.equal(
                res.status,
                g === undefined ? 404 : u === undefined ? 400 : 200,
                await res.clone().text(),
              );
              if (g && u) g.members.add(o.u);
              break;
            }
            case "removeMember": {
              const g = groups.get(o.g);
              const id = users.get(o.u)?.id ?? unknown;
              const operation = o.entra
                ? { op: "Remove", path: "members", value: [{ value: id }] }
                : { op: "remove", path: `members[value eq "${id}"]` };
              const res = await b.scim(conn, "PATCH", `/Groups/${g?.id ?? unknown}`, {
                schemas: [PATCH],
                Operations: [operation],
              });
              assert.equal(res.status, g ? 200 : 404);
              g?.members.delete(o.u);
              break;
            }
            case "deleteGroup": {
              const g = groups.get(o.g);
              const res = await b.scim(conn, "DELETE", `/Groups/${g?.id ?? unknown}`);
              assert.equal(res.status, g ? 204 : 404);
              groups.delete(o.g);
              break;
            }
          }
        }
        // svc's state equals the model's.
        const members = (await bed.storage.organizations.listMembers(orgId, { offset: 0, limit: 100 }))
          .map((m) => m.userId).sort();
        assert.deepEqual(members, [...users.values()].map((u) => u.id).sort(), "organization membership");
        for (const u of users.values()) {
          assert.equal((await bed.storage.users.get(u.id))?.status, u.active ? "Active" : "Suspended");
        }
        for (const g of groups.values()) {
          const inSvc = (await bed.storage.groups.listMembers(g.id)).map((m) => m.userId).sort();
          assert.deepEqual(inSvc, [...g.members].map((u) => users.get(u)!.id).sort(), "group members");
        }
        assert.equal(
          (await bed.storage.groups.list(b.realmId, { orgId })).filter((g) => g.orgId === orgId).length,
          groups.size,
        );
        // The SCIM view equals svc's state.
        const listed = await (await b.scim(conn, "GET", "/Users?count=200")).json();
        assert.deepEqual(
          listed.Resources.map((r: { id: string; active: boolean }) => `${r.id}:${r.active}`).sort(),
          [...users.values()].map((u) => `${u.id}:${u.active}`).sort(),
        );
        const listedGroups = await (await b.scim(conn, "GET", "/Groups")).json();
        assert.equal(listedGroups.totalResults, groups.size);
      }),
      { numRuns: Number(Deno.env.get("SCIM_MODEL_RUNS") ?? 12) },
    );
    assert.equal((await bed.storage.adminAudit.verify(b.realmId)).valid, true);
  } finally {
    await b.close();
  }
});
