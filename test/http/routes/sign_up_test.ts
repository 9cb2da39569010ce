/**
 * Self sign-up over HTTP (issue 14): off by default (403 `sign_up_closed`), validated (U+0000
 * refused), through the abuse gate (429 past the per-IP limit), and never telling whether the
 * address has an account: the same 202 either way, a link to finish for a new address, a note
 * that someone tried for an existing account's owner. The link is accepted like an invitation.
 */
import { strict as assert } from "node:assert";
import { loginBed } from "../../support/login.ts";

Deno.test("self sign-up: closed by default, same answer for any address, abuse gate, link accepted", async (t) => {
  const bed = await loginBed({ SVC_ABUSE_PER_IP_LIMIT: "6" });
  try {
    await bed.user("owner@example.test", "the owner's password");

    await t.step("off by default: 403 sign_up_closed, nothing sent", async () => {
      const res = await bed.post("/auth/sign-up", { email: "new@example.test" });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error.code, "sign_up_closed");
      assert.equal(await bed.mail("new@example.test", "sign_up"), null);
    });

    await bed.storage.realms.update(bed.realmId, { selfSignUp: true });

    await t.step("bodies are validated; U+0000 is refused", async () => {
      for (const bad of [{}, { email: "a\u0000@example.test" }, { email: "x@example.test", extra: 1 }]) {
        const res = await bed.post("/auth/sign-up", bad);
        assert.equal(res.status, 400, JSON.stringify(bad));
        await res.body?.cancel();
      }
    });

    await t.step("a new address and an existing account get the same answer, different mail", async () => {
      const fresh = await bed.post("/auth/sign-up", { email: "new@example.test" });
      const existing = await bed.post("/auth/sign-up", { email: "owner@example.test" });
      assert.deepEqual([fresh.status, existing.status], [202, 202]);
      assert.deepEqual(await fresh.json(), await existing.json());
      assert.equal(fresh.headers.get("Cache-Control"), "no-store");
      const link = await bed.mail("new@example.test", "sign_up");
      assert.ok(link?.text.includes("/account/complete-sign-up?token="));
      const tried = await bed.mail("owner@example.test", "sign_up_existing");
      assert.ok(tried, "the owner is told someone tried");
      assert.ok(!tried.text.includes("token="), "and gets no link that could change the account");
      assert.equal(await bed.mail("owner@example.test", "sign_up"), null);
    });

    await t.step("the link finishes the account like an invitation (a password here), once", async () => {
      const token = await bed.mailedToken("new@example.test", "sign_up");
      let res = await bed.post("/auth/invitation/accept", { token, password: "a brand new password" });
      assert.equal(res.status, 200, await res.clone().text());
      res = await bed.post("/auth/login", { email: "new@example.test", password: "a brand new password" });
      assert.equal(res.status, 200);
      const user = await bed.storage.users.findByEmail(bed.realmId, "new@example.test");
      assert.equal(user?.emailVerified, true);
      res = await bed.post("/auth/invitation/accept", { token, password: "another password" });
      assert.equal(res.status, 401, "the link works once");
      await res.body?.cancel();
      // Now that it has a password, a second sign-up tells the owner instead of sending a link.
      await bed.post("/auth/sign-up", { email: "new@example.test" });
      assert.ok(await bed.mail("new@example.test", "sign_up_existing"));
    });

    await t.step("the mail is in the language the request asked for", async () => {
      const res = await bed.post("/auth/sign-up", { email: "francais@example.test" }, {
        headers: { "Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5" },
      });
      assert.equal(res.status, 202);
      const mail = await bed.mail("francais@example.test", "sign_up");
      assert.match(mail!.subject, /Terminez la création de votre compte/);
    });

    await t.step("the abuse gate: past the per-IP limit, 429 with Retry-After", async () => {
      // The limit is 6 per IP: this address's attempts reach it within 7.
      let last: Response | null = null;
      for (let i = 0; i < 7 && last?.status !== 429; i++) {
        if (last !== null) await last.body?.cancel();
        last = await bed.post("/auth/sign-up", { email: `spam${i}@example.test` }, { ip: "198.51.100.7" });
      }
      assert.equal(last?.status, 429);
      assert.equal((await last!.json()).error.code, "login_blocked");
      assert.ok(last!.headers.get("Retry-After"));
    });
  } finally {
    await bed.close();
  }
});
