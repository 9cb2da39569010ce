/**
 * Races on Postgres (real connections): 20 concurrent creates of one userName give exactly one
 * 201 and 409 `uniqueness` for the others, one user, one membership and one audit entry; 20
 * concurrent identical deactivations give one suspension entry; 20 concurrent adds of one member
 * to a group leave it a member once.
 */
import { strict as assert } from "node:assert";
import { scimBed } from "./bed.ts";

const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

Deno.test("scim races on Postgres: one create per userName, one suspension, one membership", async (t) => {
  const b = await scimBed({ postgres: true });
  try {
    const bed = b.plugged.admin.bed;
    const conn = await b.connection(b.orgA);
    let userId = "";

    await t.step("20 concurrent creates of one userName: one 201, the rest 409 uniqueness", async () => {
      const before = await b.chainLength();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          b.scim(conn, "POST", "/Users", {
            schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
            userName: "race@acme.test",
            active: true,
          })),
      );
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [201, ...Array(19).fill(409)]);
      for (const res of answers) {
        const body = await res.json();
        if (res.status === 201) userId = body.id;
        else assert.equal(body.scimType, "uniqueness");
      }
      assert.equal(await b.chainLength() - before, 1);
      const user = await bed.storage.users.findByEmail(b.realmId, "race@acme.test");
      assert.equal(user?.id, userId);
      assert.equal(await bed.storage.organizations.isMember(b.orgA, userId), true);
    });

    await t.step("20 concurrent identical deactivations: one change, one suspension", async () => {
      const before = await b.chainLength();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          b.scim(conn, "PATCH", `/Users/${userId}`, {
            schemas: [PATCH],
            Operations: [{ op: "Replace", path: "active", value: "False" }],
          })),
      );
      assert.deepEqual(answers.map((r) => r.status), Array(20).fill(200));
      // scim.user.update and user.suspend, once each.
      const entries = (await bed.storage.adminAudit.list(b.realmId)).slice(before);
      assert.deepEqual(entries.map((e) => e.action).sort(), ["scim.user.update", "user.suspend"]);
      assert.equal((await bed.storage.users.get(userId))?.status, "Suspended");
    });

    await t.step("20 concurrent adds of one member: a member once, one entry", async () => {
      const group = await (await b.scim(conn, "POST", "/Groups", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        displayName: "racers",
      })).json();
      const before = await b.chainLength();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          b.scim(conn, "PATCH", `/Groups/${group.id}`, {
            schemas: [PATCH],
            Operations: [{ op: "add", path: "members", value: [{ value: userId }] }],
          })),
      );
      assert.deepEqual(answers.map((r) => r.status), Array(20).fill(200));
      assert.equal(await b.chainLength() - before, 1);
      assert.deepEqual((await bed.storage.groups.listMembers(group.id)).map((m) => m.userId), [userId]);
    });
    assert.equal((await bed.storage.adminAudit.verify(b.realmId)).valid, true);
  } finally {
    await b.close();
  }
});
