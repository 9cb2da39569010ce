/**
 * SCIM semantics beyond the recorded clients: the authority fence (a connection never changes or
 * adopts a user holding grants beyond its organization), adoption of an existing member, delete
 * by erasure, group-to-role mapping (and its escalation check), ETags (If-Match 412,
 * If-None-Match 304), attribute projection, sorting and paging, SCIM error bodies for every
 * refusal, and a property: the SQL a filter compiles to selects exactly the users the
 * in-memory evaluation of the RFC's semantics selects.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { type Filter, formatFilter, matches } from "../../../plugins/scim/filter.ts";
import { seeder } from "../../support/seed.ts";
import { scimBed } from "./bed.ts";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const q = (filter: string) => encodeURIComponent(filter);

Deno.test("scim semantics", async (t) => {
  const b = await scimBed();
  try {
    const bed = b.plugged.admin.bed;
    const seed = seeder(bed.database.db);
    const conn = await b.connection(b.orgA);
    const create = async (userName: string, extra: Record<string, unknown> = {}) => {
      const res = await b.scim(conn, "POST", "/Users", { schemas: [USER], userName, ...extra });
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()).id as string;
    };
    const patch = (id: string, operations: unknown[], headers: Record<string, string> = {}) =>
      b.scim(conn, "PATCH", `/Users/${id}`, { schemas: [PATCH], Operations: operations }, headers);

    await t.step(
      "a user holding grants beyond the organization is out of the connection's reach",
      async () => {
        const x = await create("x@acme.test");
        const realmRole = await seed.role(b.realmId, "auditor", [{ pattern: "svc:global:users-read" }]);
        await seed.assign(b.realmId, realmRole, { kind: "User", id: x });
        await bed.snapshots.invalidateAll();
        const res = await patch(x, [{ op: "replace", path: "active", value: false }]);
        assert.equal(res.status, 403);
        const body = await res.json();
        assert.equal(body.schemas[0], "urn:ietf:params:scim:api:messages:2.0:Error");
        assert.equal(body.status, "403");
        assert.equal((await b.scim(conn, "DELETE", `/Users/${x}`)).status, 403);
        assert.equal((await bed.storage.users.get(x))?.status, "Active");
        assert.equal(await bed.storage.organizations.isMember(b.orgA, x), true);
        // Grants in another organization are beyond it too.
        const y = await create("y@acme.test");
        const bRole = await seed.role(b.realmId, "b-reader", [{ pattern: "svc:org:members-read" }], b.orgB);
        await seed.assign(b.realmId, bRole, { kind: "User", id: y }, b.orgB);
        await bed.snapshots.invalidateAll();
        assert.equal((await patch(y, [{ op: "replace", path: "displayName", value: "Y" }])).status, 403);
      },
    );

    await t.step(
      "a user who left the organization by other means is out of reach and leaves the view",
      async () => {
        const id = await create("leaver@acme.test");
        await bed.storage.organizations.removeMember(b.orgA, id);
        const res = await patch(id, [{ op: "replace", path: "active", value: false }]);
        assert.equal(res.status, 404);
        assert.equal((await bed.storage.users.get(id))?.status, "Active");
        await b.plugin.onEvent!({
          kind: "user.org_left",
          occurredAt: bed.clock.now(),
          realmId: b.realmId,
          orgId: b.orgA,
          userId: id,
          data: { orgId: b.orgA },
        });
        assert.equal((await b.scim(conn, "GET", `/Users/${id}`)).status, 404);
        const listed =
          await (await b.scim(conn, "GET", `/Users?filter=${q('userName eq "leaver@acme.test"')}`)).json();
        assert.equal(listed.totalResults, 0);
      },
    );

    await t.step("an existing member within the organization is adopted; one beyond it is not", async () => {
      const plain = await bed.storage.users.get(b.users.plain);
      const res = await b.scim(conn, "POST", "/Users", { schemas: [USER], userName: plain!.email });
      assert.equal(res.status, 201);
      assert.equal((await res.json()).id, b.users.plain);
      const z = await seed.user(b.realmId);
      await bed.storage.organizations.addMember(b.orgA, z);
      const realmRole = await seed.role(b.realmId, "z-admin", [{ pattern: "svc:global:*" }]);
      await seed.assign(b.realmId, realmRole, { kind: "User", id: z });
      await bed.snapshots.invalidateAll();
      const zUser = await bed.storage.users.get(z);
      const refused = await b.scim(conn, "POST", "/Users", { schemas: [USER], userName: zUser!.email });
      assert.equal(refused.status, 403);
      // A second connection cannot adopt a user the first one manages.
      const other = await b.connection(b.orgA);
      const taken = await b.scim(other, "POST", "/Users", { schemas: [USER], userName: plain!.email });
      assert.equal(taken.status, 409);
      assert.equal((await taken.json()).scimType, "uniqueness");
    });

    await t.step(
      "a user the directory deprovisioned may come back; one who joined another organization not",
      async () => {
        const id = await create("returning@acme.test");
        assert.equal((await b.scim(conn, "DELETE", `/Users/${id}`)).status, 204);
        const again = await b.scim(conn, "POST", "/Users", {
          schemas: [USER],
          userName: "returning@acme.test",
        });
        assert.equal(again.status, 201);
        assert.equal((await again.json()).id, id, "the same account");
        assert.equal(await bed.storage.organizations.isMember(b.orgA, id), true);
        assert.equal((await b.scim(conn, "DELETE", `/Users/${id}`)).status, 204);
        await bed.storage.organizations.addMember(b.orgB, id);
        const refused = await b.scim(conn, "POST", "/Users", {
          schemas: [USER],
          userName: "returning@acme.test",
        });
        assert.equal(refused.status, 409);
        assert.equal(await bed.storage.organizations.isMember(b.orgA, id), false);
      },
    );

    await t.step(
      "deleteMode erase erases a user of no other organization; else removes the membership",
      async () => {
        const erasing = await b.connection(b.orgA, { deleteMode: "erase" });
        const res = await b.scim(erasing, "POST", "/Users", { schemas: [USER], userName: "gone@acme.test" });
        const id = (await res.json()).id;
        assert.equal((await b.scim(erasing, "DELETE", `/Users/${id}`)).status, 204);
        assert.notEqual((await bed.storage.users.get(id))?.anonymizedAt ?? null, null);
        const res2 = await b.scim(erasing, "POST", "/Users", {
          schemas: [USER],
          userName: "shared@acme.test",
        });
        const shared = (await res2.json()).id;
        await bed.storage.organizations.addMember(b.orgB, shared);
        assert.equal((await b.scim(erasing, "DELETE", `/Users/${shared}`)).status, 204);
        assert.equal((await bed.storage.users.get(shared))?.anonymizedAt, null);
        assert.equal(await bed.storage.organizations.isMember(b.orgA, shared), false);
        assert.equal(await bed.storage.organizations.isMember(b.orgB, shared), true);
      },
    );

    await t.step("groups drive role assignments by the connection's mapping", async () => {
      const role = await seed.role(
        b.realmId,
        "scim-readers",
        [{ pattern: "scim:org:connections-read" }],
        b.orgA,
      );
      const tooMuch = await seed.role(
        b.realmId,
        "member-admins",
        [{ pattern: "svc:org:members-manage" }],
        b.orgA,
      );
      const refused = await b.admin("POST", "/svc-admin/scim/connections", "orgA", {
        orgId: b.orgA,
        displayName: "x",
        groupRoles: { Engineering: [tooMuch] },
      });
      assert.equal(refused.status, 403, "an administrator hands out only what it holds");
      const outside = await b.admin("POST", "/svc-admin/scim/connections", "orgA", {
        orgId: b.orgA,
        displayName: "x",
        groupRoles: { Engineering: [await seed.role(b.realmId, "b-role", [], b.orgB)] },
      });
      assert.equal(outside.status, 400, "only the organization's own roles");
      const made = await b.admin("POST", "/svc-admin/scim/connections", "orgA", {
        orgId: b.orgA,
        displayName: "mapped",
        groupRoles: { Engineering: [role] },
      });
      assert.equal(made.status, 201, await made.clone().text());
      const mapped = await made.json();
      const member =
        (await (await b.scim(mapped, "POST", "/Users", { schemas: [USER], userName: "eng@acme.test" }))
          .json()).id;
      const group = await (await b.scim(mapped, "POST", "/Groups", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: "engineering",
        members: [{ value: member }],
      })).json();
      const assignments = await bed.storage.roles.listAssignmentsForPrincipal("Group", group.id);
      assert.deepEqual(assignments.map((a) => a.roleId), [role]);
      await bed.snapshots.invalidateAll();
      const grants = await bed.snapshots.get(member, b.orgA);
      assert.ok(grants?.snapshot.grants.some((g) => g.pattern === "scim:org:connections-read"));
      // Renamed to a name without a mapping: the assignment goes.
      await b.scim(mapped, "PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH],
        Operations: [{ op: "replace", path: "displayName", value: "Design" }],
      });
      assert.deepEqual(await bed.storage.roles.listAssignmentsForPrincipal("Group", group.id), []);
      const held = async () =>
        (await bed.snapshots.get(member, b.orgA))?.snapshot.grants.some((g) =>
          g.pattern === "scim:org:connections-read"
        );
      assert.equal(await held(), false, "the member's cached grants follow the rename");
      // A new mapping applies to existing groups at once (one audit entry).
      const before = await b.chainLength();
      const remapped = await b.admin("PATCH", `/svc-admin/scim/connections/${mapped.id}`, "orgA", {
        groupRoles: { design: [role] },
      });
      assert.equal(remapped.status, 200, await remapped.clone().text());
      assert.equal(await b.chainLength() - before, 1);
      assert.deepEqual(
        (await bed.storage.roles.listAssignmentsForPrincipal("Group", group.id)).map((a) => a.roleId),
        [role],
      );
      assert.equal(await held(), true, "the member's cached grants follow the new mapping");
    });

    await t.step("ETags: If-Match refuses a stale version with 412; If-None-Match answers 304", async () => {
      const id = await create("etag@acme.test");
      const first = await b.scim(conn, "GET", `/Users/${id}`);
      assert.equal(first.headers.get("ETag"), 'W/"1"');
      assert.equal(
        (await b.scim(conn, "GET", `/Users/${id}`, undefined, { "If-None-Match": 'W/"1"' })).status,
        304,
      );
      assert.equal(
        (await patch(id, [{ op: "add", path: "title", value: "CEO" }], { "If-Match": 'W/"1"' })).status,
        200,
      );
      const stale = await patch(id, [{ op: "add", path: "title", value: "CTO" }], { "If-Match": 'W/"1"' });
      assert.equal(stale.status, 412);
      assert.equal((await stale.json()).status, "412");
      assert.equal(
        (await b.scim(conn, "DELETE", `/Users/${id}`, undefined, { "If-Match": 'W/"1"' })).status,
        412,
      );
      const put = await b.scim(conn, "PUT", `/Users/${id}`, { schemas: [USER], userName: "etag@acme.test" }, {
        "If-Match": 'W/"2"',
      });
      assert.equal(put.status, 200);
      assert.equal((await put.json()).title, undefined, "PUT replaces the whole resource");
    });

    await t.step("attributes and excludedAttributes", async () => {
      const id = await create("proj@acme.test", {
        name: { givenName: "Pro", familyName: "Jection" },
        emails: [{ value: "proj@acme.test", type: "work" }],
        [ENTERPRISE]: { department: "R&D", costCenter: "42" },
      });
      const only = await (await b.scim(conn, "GET", `/Users/${id}?attributes=userName,name.familyName`))
        .json();
      assert.deepEqual(Object.keys(only).sort(), ["id", "name", "schemas", "userName"]);
      assert.deepEqual(only.name, { familyName: "Jection" });
      const ext = await (await b.scim(conn, "GET", `/Users/${id}?attributes=${ENTERPRISE}:department`))
        .json();
      assert.deepEqual(ext[ENTERPRISE], { department: "R&D" });
      const without = await (await b.scim(conn, "GET", `/Users/${id}?excludedAttributes=emails,meta`)).json();
      assert.equal(without.emails, undefined);
      assert.equal(without.meta, undefined);
      assert.equal(without.userName, "proj@acme.test");
    });

    await t.step("sorting and paging", async () => {
      const sorting = await b.connection(b.orgA);
      for (const n of ["delta", "alpha", "echo", "charlie", "bravo"]) {
        await b.scim(sorting, "POST", "/Users", { schemas: [USER], userName: `${n}@sort.test` });
      }
      const page = await (await b.scim(
        sorting,
        "GET",
        "/Users?sortBy=userName&sortOrder=descending&startIndex=2&count=2",
      ))
        .json();
      assert.equal(page.totalResults, 5);
      assert.equal(page.startIndex, 2);
      assert.equal(page.itemsPerPage, 2);
      assert.deepEqual(page.Resources.map((r: { userName: string }) => r.userName), [
        "delta@sort.test",
        "charlie@sort.test",
      ]);
      const none = await (await b.scim(sorting, "GET", "/Users?count=0")).json();
      assert.equal(none.totalResults, 5);
      assert.deepEqual(none.Resources, []);
      const filtered = await (await b.scim(
        sorting,
        "GET",
        `/Users?filter=${q('userName sw "c" or userName sw "e"')}&sortBy=userName`,
      )).json();
      assert.deepEqual(filtered.Resources.map((r: { userName: string }) => r.userName), [
        "charlie@sort.test",
        "echo@sort.test",
      ]);
    });

    await t.step("every refusal is a SCIM error body with its scimType", async () => {
      const id = await create("errors@acme.test");
      const taken = (await bed.storage.users.get(b.users.orgB))!.email;
      const cases: [Promise<Response>, number, string | undefined][] = [
        [b.scim(conn, "GET", `/Users?filter=${q("userName eq")}`), 400, "invalidFilter"],
        [b.scim(conn, "GET", `/Users?filter=${q('nosuch eq "x"')}`), 400, "invalidFilter"],
        [b.scim(conn, "GET", `/Users?filter=${q('meta.created gt "not a date"')}`), 400, "invalidFilter"],
        [b.scim(conn, "GET", "/Users?sortBy=nosuch"), 400, "invalidValue"],
        [b.scim(conn, "GET", "/Users?startIndex=x"), 400, "invalidValue"],
        [b.scim(conn, "POST", "/Users", { schemas: [USER] }), 400, "invalidValue"],
        [b.scim(conn, "POST", "/Users", { schemas: [USER], userName: "nomail" }), 400, "invalidValue"],
        [
          b.scim(conn, "POST", "/Users", { schemas: [USER], userName: "a\u0000b@x.test" }),
          400,
          "invalidSyntax",
        ],
        [b.scim(conn, "POST", "/Users", "{not json"), 400, "invalidSyntax"],
        [
          b.scim(conn, "POST", "/Users", { userName: "ct@x.test" }, { "Content-Type": "text/plain" }),
          400,
          "invalidSyntax",
        ],
        [
          b.scim(conn, "POST", "/Users", { schemas: [USER], userName: "errors@acme.test" }),
          409,
          "uniqueness",
        ],
        [
          b.scim(conn, "PUT", `/Users/${id}`, {
            schemas: [USER],
            userName: "errors@acme.test",
            emails: [{ value: taken }],
          }),
          409,
          "uniqueness",
        ],
        [patch(id, [{ op: "move", path: "title" }]), 400, "invalidSyntax"],
        [patch(id, []), 400, "invalidSyntax"],
        [patch(id, [{ op: "replace", path: "id", value: "x" }]), 400, "mutability"],
        [patch(id, [{ op: "replace", path: "nosuch", value: "x" }]), 400, "invalidPath"],
        [patch(id, [{ op: "replace", path: 'emails[value co "x"].type', value: "x" }]), 400, "noTarget"],
        [patch(id, [{ op: "remove" }]), 400, "noTarget"],
        [patch(id, [{ op: "replace", path: "active", value: "maybe" }]), 400, "invalidValue"],
        [b.scim(conn, "PATCH", `/Users/${id}`, { Operations: [] }), 400, "invalidSyntax"],
        [b.scim(conn, "GET", "/Users/not-a-uuid"), 404, undefined],
        [b.scim(conn, "GET", "/Bulk"), 404, undefined],
        [
          b.scim(conn, "POST", "/Users", {
            schemas: [USER],
            userName: "big@x.test",
            title: "x".repeat(1_100_000),
          }),
          413,
          undefined,
        ],
        [b.scim({ id: conn.id, token: "svc_scim_wrong" }, "GET", "/Users"), 401, undefined],
      ];
      for (const [pending, status, scimType] of cases) {
        const res = await pending;
        const text = await res.text();
        assert.equal(res.status, status, text);
        const body = JSON.parse(text);
        assert.deepEqual(body.schemas, ["urn:ietf:params:scim:api:messages:2.0:Error"], text);
        assert.equal(body.status, String(status));
        assert.equal(body.scimType, scimType, text);
        assert.match(res.headers.get("Content-Type") ?? "", /^application\/scim\+json/);
      }
    });

    await t.step("discovery: ServiceProviderConfig, ResourceTypes, Schemas", async () => {
      const config = await (await b.scim(conn, "GET", "/ServiceProviderConfig")).json();
      assert.equal(config.patch.supported, true);
      assert.equal(config.bulk.supported, true);
      assert.equal(config.bulk.maxOperations, 100);
      assert.equal(config.bulk.maxPayloadSize, 1048576);
      assert.equal(config.sort.supported, true);
      assert.equal(config.etag.supported, true);
      const types = await (await b.scim(conn, "GET", "/ResourceTypes")).json();
      assert.deepEqual(types.Resources.map((r: { id: string }) => r.id), ["User", "Group"]);
      assert.equal(types.Resources[0].schemaExtensions[0].schema, ENTERPRISE);
      const schemas = await (await b.scim(conn, "GET", "/Schemas")).json();
      assert.equal(schemas.totalResults, 3);
      const user = await (await b.scim(conn, "GET", `/Schemas/${USER}`)).json();
      assert.ok(
        user.attributes.some((a: { name: string; uniqueness: string }) =>
          a.name === "userName" && a.uniqueness === "server"
        ),
      );
    });
  } finally {
    await b.close();
  }
});

// ---------------------------------------------------------------------------

const PEOPLE = [
  {
    userName: "ada@one.test",
    title: "eng",
    externalId: "Ext-1",
    active: true,
    name: { givenName: "Ada", familyName: "Lovelace" },
    emails: [{ value: "ada@one.test", type: "work", primary: true }, {
      value: "ada@home.test",
      type: "home",
    }],
    [ENTERPRISE]: { department: "rnd" },
  },
  {
    userName: "grace@two.test",
    active: false,
    name: { givenName: "Grace" },
    emails: [{ value: "grace@two.test", type: "work" }],
  },
  { userName: "alan@one.test", title: "ops", externalId: "ext-1", active: true },
  {
    userName: "edsger@three.test",
    title: "",
    name: { familyName: "Dijkstra" },
    emails: [{ value: "e@home.test", type: "home" }],
    [ENTERPRISE]: { department: "Ops" },
  },
];

const pathOf = (attr: string, sub: string | null = null, schema: string | null = null) => ({
  schema,
  attr,
  sub,
});
const leafPath = fc.constantFrom(
  pathOf("userName"),
  pathOf("title"),
  pathOf("externalId"),
  pathOf("name", "givenName"),
  pathOf("name", "familyName"),
  pathOf("emails"),
  pathOf("emails", "value"),
  pathOf("emails", "type"),
  pathOf("department", null, ENTERPRISE),
);
const word = fc.constantFrom(
  "a",
  "ada",
  "one",
  "ONE.test",
  "ext-1",
  "Ext-1",
  "work",
  "home",
  "rnd",
  "g",
  "",
  "z",
);
const leaf: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({
    op: fc.constantFrom("eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"),
    path: leafPath,
    value: word,
  }) as fc.Arbitrary<Filter>,
  fc.record({ op: fc.constant("pr" as const), path: leafPath }),
  fc.record({ op: fc.constant("eq" as const), path: fc.constant(pathOf("active")), value: fc.boolean() }),
  fc.record({
    op: fc.constant("valuePath" as const),
    path: fc.constant(pathOf("emails")),
    filter: fc.record({
      op: fc.constantFrom("eq", "co", "sw") as fc.Arbitrary<"eq">,
      path: fc.constantFrom(pathOf("type"), pathOf("value")),
      value: word,
    }),
  }),
);
const filterArb: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { maxDepth: 3, depthSize: "small" },
    leaf,
    fc.record({ op: fc.constantFrom("and" as const, "or" as const), left: tie("f"), right: tie("f") }),
    fc.record({ op: fc.constant("not" as const), filter: tie("f") }),
  ),
})).f;

Deno.test("property: a filter compiled to SQL selects what the RFC's semantics select", async () => {
  const b = await scimBed();
  try {
    const conn = await b.connection(b.orgA);
    const stored: Record<string, unknown>[] = [];
    for (const person of PEOPLE) {
      const res = await b.scim(conn, "POST", "/Users", { schemas: [USER, ENTERPRISE], ...person });
      assert.equal(res.status, 201, await res.clone().text());
      stored.push(await res.json());
    }
    const caseExact = (p: { attr: string }) => p.attr === "externalId" || p.attr === "id";
    await fc.assert(
      fc.asyncProperty(filterArb, async (filter) => {
        const text = formatFilter(filter);
        const res = await b.scim(conn, "GET", `/Users?filter=${q(text)}`);
        assert.equal(res.status, 200, `${text}: ${await res.clone().text()}`);
        const got = (await res.json()).Resources.map((r: { userName: string }) => r.userName).sort();
        const want = stored.filter((r) => matches(filter, r, caseExact)).map((r) => r.userName).sort();
        assert.deepEqual(got, want, text);
      }),
      { numRuns: 100 },
    );
  } finally {
    await b.close();
  }
});
