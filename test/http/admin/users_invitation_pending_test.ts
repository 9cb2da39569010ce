/**
 * The user list tells invited users who have not accepted (issue 27): `invitationPending` is
 * true for them (no password, no passkey, address unverified), false for everyone else and once
 * the invitation is accepted, in the list and on the user's own read; the console shows them as
 * "Invited".
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";

for (const postgres of [false, true]) {
  Deno.test(`GET /svc-admin/users: invitationPending until the invitation is accepted (${postgres ? "Postgres" : "PGlite"})`, async () => {
    const admin = await adminBed({}, { postgres });
    try {
      let res = await admin.request("POST", "/svc-admin/users/invite", {
        body: { email: "new@example.test" },
      });
      assert.equal(res.status, 201, await res.clone().text());
      await res.body?.cancel();
      const pending = async () => {
        const list = await (await admin.request("GET", "/svc-admin/users?limit=200")).json();
        return Object.fromEntries(
          (list.items as { email: string; invitationPending: boolean }[]).map((
            u,
          ) => [u.email, u.invitationPending]),
        );
      };
      // The user's own page says the same (the console's detail shows "Invited").
      const one = async () => {
        const list = await (await admin.request("GET", "/svc-admin/users?q=new%40example.test")).json();
        const read = await admin.request("GET", `/svc-admin/users/${list.items[0].id}`);
        assert.equal(read.status, 200);
        return (await read.json()).invitationPending;
      };
      let flags = await pending();
      assert.equal(flags["new@example.test"], true);
      assert.equal(flags["root@example.test"], false);
      assert.equal(await one(), true);
      const token = await admin.bed.mailedToken("new@example.test", "invitation");
      res = await admin.bed.post("/auth/invitation/accept", { token, password: "a long enough password" });
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
      flags = await pending();
      assert.equal(flags["new@example.test"], false);
      assert.equal(await one(), false);
    } finally {
      await admin.close();
    }
  });
}
