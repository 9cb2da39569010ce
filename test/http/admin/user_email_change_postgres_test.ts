/**
 * Pending email changes on Postgres (issue 24): confirmation links of several changes pending
 * for one user, confirmed at once over separate connections, change the address exactly once
 * (each link names the address it replaces; the update is against the version read), and one
 * link presented many times at once confirms once.
 */
import { strict as assert } from "node:assert";
import { adminBed } from "../../support/admin.ts";

Deno.test("email change on Postgres: concurrent confirmations change the address exactly once", async () => {
  const admin = await adminBed({}, { postgres: true });
  const { bed } = admin;
  try {
    const user = await bed.storage.users.create({
      realmId: admin.realmId,
      email: "racer@example.test",
      emailVerified: true,
    });
    await bed.storage.organizations.addMember(admin.orgA, user.id);
    const addresses = Array.from({ length: 8 }, (_, i) => `racer.${i}@example.test`);
    for (const email of addresses) {
      const res = await admin.request("PATCH", `/svc-admin/users/${user.id}`, {
        as: "orgA",
        body: { email },
      });
      assert.equal(res.status, 202, await res.clone().text());
    }
    const tokens = await Promise.all(addresses.map((to) => bed.mailedToken(to, "email_change")));
    const verify = (token: string) =>
      Promise.resolve(admin.app.request("/auth/email/verify", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token }),
      }));

    const answers = await Promise.all(tokens.map(verify));
    const won = answers.filter((res) => res.status === 200);
    assert.equal(won.length, 1, answers.map((res) => res.status).join(","));
    const winner = (await won[0].json()).email;
    for (const res of answers) if (res.status !== 200) await res.body?.cancel();
    assert.equal((await bed.storage.users.get(user.id))?.email, winner);

    // One more change, its link presented ten times at once: one confirmation.
    const res = await admin.request("PATCH", `/svc-admin/users/${user.id}`, {
      as: "orgA",
      body: { email: "racer.final@example.test" },
    });
    assert.equal(res.status, 202);
    const token = await bed.mailedToken("racer.final@example.test", "email_change");
    const replays = await Promise.all(Array.from({ length: 10 }, () => verify(token)));
    assert.equal(replays.filter((r) => r.status === 200).length, 1);
    for (const r of replays) await r.body?.cancel();
    assert.equal((await bed.storage.users.get(user.id))?.email, "racer.final@example.test");
  } finally {
    await admin.close();
  }
});
