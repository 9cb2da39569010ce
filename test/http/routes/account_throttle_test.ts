/**
 * Forgot-password and email-verification throttles over HTTP (issue 19 item 6): the answers stay
 * the same past the limit, and no mail leaves beyond it, per account and per IP; the windows
 * reset on time.
 */
import { strict as assert } from "node:assert";
import { loginBed } from "../../support/login.ts";

Deno.test("forgot password: per-account and per-IP limits, same answer, no mail beyond them", async (t) => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" });
  const resets = async (to: string) => {
    await bed.login.idle();
    return (await bed.storage.mailOutbox.list({ to, kind: "password_reset" })).length;
  };
  try {
    await bed.user("ivy@example.test", "ivy's password");

    await t.step("per account: 3 mails an hour, whatever the source address", async () => {
      const answers = [];
      for (let i = 0; i < 8; i++) {
        const res = await bed.post("/auth/password/forgot", { email: " IVY@example.test" }, {
          ip: `198.51.100.${i + 1}`,
        });
        answers.push({ status: res.status, body: await res.json() });
      }
      assert.ok(answers.every((a) => a.status === 202));
      assert.ok(answers.every((a) => a.body.status === "accepted"));
      assert.equal(await resets("ivy@example.test"), 3);
      bed.clock.advance(3600_000);
      await bed.post("/auth/password/forgot", { email: "ivy@example.test" });
      assert.equal(await resets("ivy@example.test"), 4, "the window resets after an hour");
    });

    await t.step("per IP: 10 requests an hour across accounts, unknown ones included", async () => {
      bed.clock.advance(3600_000);
      const users = [];
      for (let i = 0; i < 12; i++) users.push(await bed.user(`u${i}@example.test`, "password one"));
      const ip = "192.0.2.77";
      for (let i = 0; i < 5; i++) {
        assert.equal(
          (await bed.post("/auth/password/forgot", { email: `ghost${i}@example.test` }, { ip })).status,
          202,
        );
      }
      for (let i = 0; i < 12; i++) {
        assert.equal(
          (await bed.post("/auth/password/forgot", { email: `u${i}@example.test` }, { ip })).status,
          202,
        );
      }
      let sent = 0;
      for (let i = 0; i < 12; i++) sent += await resets(`u${i}@example.test`);
      assert.equal(sent, 5, "10 per IP: 5 spent on unknown addresses, 5 left for real ones");
    });

    await t.step("an IPv6 client is counted per /64", async () => {
      await bed.user("late@example.test", "password one");
      for (let i = 0; i < 10; i++) {
        const ip = `2001:db8:1:2::${i + 1}`;
        assert.equal(
          (await bed.post("/auth/password/forgot", { email: `ghost-v6-${i}@example.test` }, { ip })).status,
          202,
        );
      }
      const res = await bed.post("/auth/password/forgot", { email: "late@example.test" }, {
        ip: "2001:db8:1:2::ffff",
      });
      assert.equal(res.status, 202);
      assert.equal(await resets("late@example.test"), 0, "the /64 spent its 10 requests");
      await bed.post("/auth/password/forgot", { email: "late@example.test" }, { ip: "2001:db8:1:3::1" });
      assert.equal(await resets("late@example.test"), 1, "another /64 is another client");
    });
  } finally {
    await bed.close();
  }
});

Deno.test("email verification requests: 3 mails an hour per account, same answer past it", async () => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "1000" });
  try {
    const user = await bed.storage.users.create({ realmId: bed.realmId, email: "jay@example.test" });
    await bed.storage.passwordCredentials.replace(user.id, await bed.login.passwords.hash("jay's password"));
    const login = await bed.post("/auth/login", { email: "jay@example.test", password: "jay's password" });
    const { accessToken } = await login.json();
    const request = (ip: string) =>
      bed.app.request("/auth/email/verify/request", {
        method: "POST",
        headers: { Authorization: `Bearer ${accessToken}` },
      }, { clientAddress: ip });
    for (let i = 0; i < 6; i++) {
      const res = await request(`198.51.100.${i + 1}`);
      assert.equal(res.status, 202);
      assert.deepEqual(await res.json(), { status: "sent" });
    }
    await bed.login.idle();
    const mails = await bed.storage.mailOutbox.list({ to: "jay@example.test", kind: "email_verification" });
    assert.equal(mails.length, 3);
  } finally {
    await bed.close();
  }
});
