/**
 * SCIM `/Bulk` (RFC 7644 §3.7, `plugins/scim/bulk.ts`) on a connection of organization A:
 *
 * - `/ServiceProviderConfig` advertises it with the configured `maxOperations` and
 *   `maxPayloadSize`;
 * - an Okta-style bulk (two users, a group whose members are `bulkId:` references, placed before
 *   the users it names, then a deactivation through a `bulkId:` path) gives each operation its
 *   status, location and version, and leaves exactly the state, audit entries and events the
 *   same requests made one by one leave (the same handlers run);
 * - per-operation refusals (a duplicate userName, bad operations, a reference to an undefined or
 *   failed bulkId, a stale version) fail alone; `failOnErrors` stops processing; circular
 *   references are refused and nothing of them is written;
 * - more operations than `maxOperations` is 413 `tooMany`, a body over `maxPayloadSize` 413, a
 *   request without the BulkRequest schema 400, no token 401.
 */
import { strict as assert } from "node:assert";
import { type ScimBed, scimBed } from "./bed.ts";

const BULK = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

const user = (name: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER],
  userName: `${name}@acme.test`,
  name: { givenName: name, familyName: "Doe" },
  emails: [{ primary: true, value: `${name}@acme.test`, type: "work" }],
  active: true,
  ...extra,
});

interface BulkAnswer {
  schemas: string[];
  Operations: {
    method: string;
    bulkId?: string;
    location?: string;
    version?: string;
    status: string;
    response?: { scimType?: string; detail?: string; status?: string };
  }[];
}

async function bulk(s: ScimBed, conn: { id: string; token: string }, body: unknown) {
  const res = await s.scim(conn, "POST", "/Bulk", body);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as BulkAnswer & Record<string, unknown>, text };
}

Deno.test("SCIM /Bulk: bulkId references, one code path, failOnErrors, limits", async (t) => {
  const s = await scimBed({}, {
    SVC_SCIM_BULK_MAX_OPERATIONS: "6",
    SVC_SCIM_BULK_MAX_PAYLOAD_BYTES: "16384",
  });
  try {
    const { bed } = s.plugged.admin;
    const conn = await s.connection(s.orgA);
    const audit = async () =>
      (await bed.storage.adminAudit.list(s.realmId)).filter((e) => e.actorId === `scim:connection:${conn.id}`)
        .map((e) => e.action);

    await t.step("ServiceProviderConfig advertises bulk with its limits", async () => {
      const res = await s.scim(conn, "GET", "/ServiceProviderConfig");
      assert.equal(res.status, 200);
      assert.deepEqual((await res.json()).bulk, { supported: true, maxOperations: 6, maxPayloadSize: 16384 });
    });

    let ann = "";
    let bob = "";
    let group = "";
    await t.step("Okta-style: users and a group with bulkId members, then a deactivation", async () => {
      bed.events.length = 0;
      const before = (await audit()).length;
      const { status, body, text } = await bulk(s, conn, {
        schemas: [BULK],
        Operations: [
          {
            method: "POST",
            path: "/Groups",
            bulkId: "g1",
            data: {
              schemas: [GROUP],
              displayName: "Engineering",
              members: [{ value: "bulkId:u1" }, { value: "bulkId:u2" }],
            },
          },
          { method: "POST", path: "/Users", bulkId: "u1", data: user("ann") },
          { method: "POST", path: "/Users", bulkId: "u2", data: user("bob") },
          {
            method: "PATCH",
            path: "/Users/bulkId:u2",
            data: { schemas: [PATCH], Operations: [{ op: "replace", value: { active: false } }] },
          },
        ],
      });
      assert.equal(status, 200, text);
      assert.deepEqual(body.schemas, ["urn:ietf:params:scim:api:messages:2.0:BulkResponse"]);
      // The group waited for the users it names.
      assert.deepEqual(body.Operations.map((o) => [o.method, o.bulkId ?? null, o.status]), [
        ["POST", "u1", "201"],
        ["POST", "u2", "201"],
        ["POST", "g1", "201"],
        ["PATCH", null, "200"],
      ]);
      const [u1, u2, g1, patch] = body.Operations;
      assert.match(u1.location!, new RegExp(`/scim/v2/${conn.id}/Users/[0-9a-f-]{36}$`));
      assert.match(u1.version!, /^W\/"/);
      ann = u1.location!.split("/").at(-1)!;
      bob = u2.location!.split("/").at(-1)!;
      group = g1.location!.split("/").at(-1)!;
      assert.equal(patch.response, undefined);
      const read = await (await s.scim(conn, "GET", `/Groups/${group}`)).json();
      assert.deepEqual(read.members.map((m: { value: string }) => m.value).sort(), [ann, bob].sort());
      const bobRead = await (await s.scim(conn, "GET", `/Users/${bob}`)).json();
      assert.equal(bobRead.active, false);
      assert.equal((await bed.storage.users.get(bob))?.status, "Suspended");
      assert.equal((await bed.storage.users.get(ann))?.status, "Active");
      assert.ok(await bed.storage.organizations.isMember(s.orgA, ann));
      // The entries and events the four requests make one by one.
      assert.deepEqual((await audit()).slice(before), [
        "scim.user.create",
        "scim.user.create",
        "scim.group.create",
        "scim.user.update",
        "user.suspend",
      ]);
      const kinds = bed.events.map((e) => e.kind);
      assert.equal(kinds.filter((k) => k === "user.created").length, 2);
      assert.equal(kinds.filter((k) => k === "group.created").length, 1);
      assert.equal(kinds.filter((k) => k === "group.member_added").length, 2);
      assert.equal(kinds.filter((k) => k === "user.suspended").length, 1);
      // Each operation is in the provisioning log.
      const log = await (await s.admin("GET", `/svc-admin/scim/connections/${conn.id}/log`, "global")).json();
      const entries = log.items.map((e: { method: string; path: string; status: number }) =>
        `${e.method} ${e.path} ${e.status}`
      );
      for (
        const entry of [
          "POST /Bulk 200",
          "POST /Bulk /Users 201",
          "POST /Bulk /Groups 201",
          "PATCH /Bulk /Users/bulkId:u2 200",
        ]
      ) {
        assert.ok(entries.includes(entry), `${entry}: ${JSON.stringify(entries)}`);
      }
    });

    await t.step("refusals fail alone; references to failed or unknown bulkIds are 409", async () => {
      const before = (await audit()).length;
      const { status, body } = await bulk(s, conn, {
        schemas: [BULK],
        Operations: [
          { method: "POST", path: "/Users", bulkId: "dup", data: user("ann") },
          { method: "POST", path: "/Users", bulkId: "cy", data: user("cy") },
          {
            method: "PATCH",
            path: `/Groups/${group}`,
            data: {
              schemas: [PATCH],
              Operations: [{ op: "add", path: "members", value: [{ value: "bulkId:dup" }] }],
            },
          },
          {
            method: "PATCH",
            path: `/Groups/${group}`,
            data: {
              schemas: [PATCH],
              Operations: [{ op: "add", path: "members", value: [{ value: "bulkId:nope" }] }],
            },
          },
          {
            method: "PUT",
            path: `/Users/${ann}`,
            version: 'W/"999"',
            data: user("ann", { displayName: "Ann" }),
          },
          { method: "GET", path: "/Users" },
        ],
      });
      assert.equal(status, 200);
      const by = (i: number) => body.Operations[i];
      // The malformed operation is answered first; the others in order.
      assert.equal(by(0).status, "400");
      assert.equal(by(0).response?.scimType, "invalidSyntax");
      assert.equal(by(1).status, "409");
      assert.equal(by(1).response?.scimType, "uniqueness");
      assert.equal(by(2).status, "201");
      assert.equal(by(3).status, "409");
      assert.match(by(3).response!.detail!, /bulkId dup failed/);
      assert.equal(by(4).status, "409");
      assert.match(by(4).response!.detail!, /no operation defines bulkId nope/);
      assert.equal(by(5).status, "412");
      assert.deepEqual((await audit()).slice(before), ["scim.user.create"]);
    });

    await t.step("failOnErrors stops processing", async () => {
      const before = (await audit()).length;
      const { body } = await bulk(s, conn, {
        schemas: [BULK],
        failOnErrors: 1,
        Operations: [
          { method: "POST", path: "/Users", bulkId: "x", data: { schemas: [USER] } },
          { method: "POST", path: "/Users", bulkId: "y", data: user("dana") },
        ],
      });
      assert.equal(body.Operations.length, 1);
      assert.equal(body.Operations[0].status, "400");
      assert.equal((await audit()).length, before);
      const list = await (await s.scim(
        conn,
        "GET",
        `/Users?filter=${encodeURIComponent('userName eq "dana@acme.test"')}`,
      ))
        .json();
      assert.equal(list.totalResults, 0);
    });

    await t.step("circular bulkId references are refused; nothing of them is written", async () => {
      const before = (await audit()).length;
      const { body } = await bulk(s, conn, {
        schemas: [BULK],
        Operations: [
          { method: "POST", path: "/Users", bulkId: "a", data: user("eve", { externalId: "bulkId:b" }) },
          { method: "POST", path: "/Users", bulkId: "b", data: user("fay", { externalId: "bulkId:a" }) },
          { method: "POST", path: "/Users", bulkId: "c", data: user("gus") },
        ],
      });
      assert.deepEqual(body.Operations.map((o) => [o.bulkId, o.status]), [["c", "201"], ["a", "409"], [
        "b",
        "409",
      ]]);
      assert.match(body.Operations[1].response!.detail!, /circular/);
      assert.deepEqual((await audit()).slice(before), ["scim.user.create"]);
    });

    await t.step("limits and malformed requests", async () => {
      const many = Array.from({ length: 7 }, (_, i) => ({
        method: "POST",
        path: "/Users",
        bulkId: `m${i}`,
        data: user(`m${i}`),
      }));
      const before = (await audit()).length;
      const tooMany = await bulk(s, conn, { schemas: [BULK], Operations: many });
      assert.equal(tooMany.status, 413);
      assert.equal(tooMany.body.scimType, "tooMany");
      assert.equal(tooMany.body.status, "413");
      const big = await s.scim(conn, "POST", "/Bulk", {
        schemas: [BULK],
        Operations: [{
          method: "POST",
          path: "/Users",
          bulkId: "big",
          data: user("big", { title: "x".repeat(20000) }),
        }],
      });
      assert.equal(big.status, 413);
      await big.body?.cancel();
      const noSchema = await bulk(s, conn, { schemas: [], Operations: many.slice(0, 1) });
      assert.equal(noSchema.status, 400);
      assert.equal(noSchema.body.scimType, "invalidSyntax");
      const twice = await bulk(s, conn, { schemas: [BULK], Operations: [many[0], many[0]] });
      assert.equal(twice.status, 400);
      assert.equal(twice.body.scimType, "invalidValue");
      const nul = await s.scim(
        conn,
        "POST",
        "/Bulk",
        `{"schemas":["${BULK}"],"Operations":[],"x":"\\u0000"}`,
      );
      assert.equal(nul.status, 400);
      await nul.body?.cancel();
      const anonymous = await s.scim({ id: conn.id, token: "nope" }, "POST", "/Bulk", {
        schemas: [BULK],
        Operations: many.slice(0, 1),
      });
      assert.equal(anonymous.status, 401);
      await anonymous.body?.cancel();
      assert.equal((await audit()).length, before);
    });
  } finally {
    await s.close();
  }
});
