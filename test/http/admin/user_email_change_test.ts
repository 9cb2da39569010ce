/**
 * Email changes by an organization administrator never reveal other accounts (issue 24): the
 * `PATCH` answers 202 alike whether the new address is free or taken; a free address gets a
 * confirmation link (the change waits for it), a taken one's owner gets a notice, and the caller
 * learns nothing. Realm administrators keep the direct change (and its 409). Through the full app
 * over real storage.
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";

Deno.test("user email change: pending for org admins, no enumeration; direct for realm admins", async (t) => {
  const admin = await adminBed();
  const { bed } = admin;
  try {
    const users = bed.storage.users;
    const member = async (email: string) => {
      const user = await users.create({ realmId: admin.realmId, email, emailVerified: true });
      await bed.storage.organizations.addMember(admin.orgA, user.id);
      return user.id;
    };
    const alice = await member("alice@example.test");
    const bob = await member("bob@example.test");
    // Another organization's account: the org admin of A must not learn that it exists.
    const taken = await users.create({
      realmId: admin.realmId,
      email: "taken@example.test",
      emailVerified: true,
    });
    await bed.storage.organizations.addMember(admin.orgB, taken.id);

    const patch = (as: "global" | "orgA", userId: string, email: string) =>
      admin.request("PATCH", `/svc-admin/users/${userId}`, { as, body: { email } });

    await t.step("an org admin gets the same answer for a free and a taken address", async () => {
      const free = await patch("orgA", alice, "alice.new@example.test");
      const clash = await patch("orgA", bob, "taken@example.test");
      assert.equal(free.status, 202, await free.clone().text());
      assert.equal(clash.status, 202, await clash.clone().text());
      const [a, b] = [await free.json(), await clash.json()];
      assert.equal(a.email, "alice@example.test", "pending: the address is unchanged");
      assert.equal(b.email, "bob@example.test");
      assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort());
      assert.equal(a.emailVerified, b.emailVerified);
      assert.equal((await users.get(alice))?.email, "alice@example.test");
      assert.equal((await users.get(bob))?.email, "bob@example.test");
    });

    await t.step("the clash is told to the owner of the address, by mail", async () => {
      assert.ok(await bed.mail("taken@example.test", "email_change_in_use"));
      assert.equal(await bed.mail("taken@example.test", "email_change"), null, "no link to a taken address");
      assert.equal(await bed.mail("bob@example.test", "email_change_in_use"), null);
    });

    await t.step("the new address confirms the change, once", async () => {
      const token = await bed.mailedToken("alice.new@example.test", "email_change");
      const res = await admin.app.request("/auth/email/verify", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), {
        userId: alice,
        email: "alice.new@example.test",
        emailVerified: true,
      });
      const again = await admin.app.request("/auth/email/verify", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token }),
      });
      assert.equal(again.status, 401, "single use");
      await again.body?.cancel();
    });

    await t.step("a change link dies once the address it replaces is gone", async () => {
      assert.equal((await patch("orgA", bob, "bob.one@example.test")).status, 202);
      assert.equal((await patch("orgA", bob, "bob.two@example.test")).status, 202);
      const first = await bed.mailedToken("bob.one@example.test", "email_change");
      const second = await bed.mailedToken("bob.two@example.test", "email_change");
      const verify = (token: string) =>
        admin.app.request("/auth/email/verify", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ token }),
        });
      assert.equal((await verify(second)).status, 200);
      const stale = await verify(first);
      assert.equal(stale.status, 401, "bob.two replaced the address bob.one was to replace");
      await stale.body?.cancel();
      assert.equal((await users.get(bob))?.email, "bob.two@example.test");
    });

    await t.step("a realm admin changes directly, and a taken address is a 409", async () => {
      const clash = await patch("global", alice, "taken@example.test");
      assert.equal(clash.status, 409);
      assert.equal((await clash.json()).error.code, "user_email_taken");
      const direct = await patch("global", alice, "alice.direct@example.test");
      assert.equal(direct.status, 200, await direct.clone().text());
      assert.equal((await direct.json()).email, "alice.direct@example.test");
      assert.ok(await bed.mail("alice.direct@example.test", "email_verification"));
    });
  } finally {
    await admin.close();
  }
});
