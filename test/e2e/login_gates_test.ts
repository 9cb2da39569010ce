/**
 * The login gates attacked over HTTP against the real server (`svc start`, Postgres): a risk
 * block answers exactly as a wrong password; the device cookie lets a returning browser sign in
 * without a step-up; a race of wrong guesses from several addresses gets no more password
 * checks than the lockout allows, and the right password is refused afterwards.
 */
import { strict as assert } from "node:assert";
import { startTestServer } from "../support/server.ts";

const ATTACKER = "192.0.2.66";

Deno.test("login gates against the real server", async (t) => {
  const reputation = await Deno.makeTempFile({ suffix: ".txt" });
  await Deno.writeTextFile(reputation, `${ATTACKER}\n`);
  const server = await startTestServer({
    SVC_TRUSTED_PROXIES: "127.0.0.1",
    SVC_RISK_IP_REPUTATION_FILE: reputation,
  });
  const login = (password: string, from: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Forwarded-For": from, ...headers },
      body: JSON.stringify({ email: server.adminEmail, password }),
    });
  const comparable = (res: Response) =>
    [...res.headers].filter(([name]) => name !== "x-request-id" && name !== "date");
  const withoutRequestId = (body: { error: Record<string, unknown> }) => {
    const { requestId: _, ...rest } = body.error;
    return rest;
  };
  try {
    await t.step("a risk block is indistinguishable from a wrong password", async () => {
      // A new device (30) from a listed address (50) scores 80: blocked.
      const right = await login(server.adminPassword, ATTACKER);
      const wrong = await login("not the password", ATTACKER);
      assert.equal(right.status, 401);
      assert.equal(wrong.status, 401);
      const [rightBody, wrongBody] = [await right.json(), await wrong.json()];
      assert.equal(rightBody.error.code, "invalid_credentials");
      assert.deepEqual(withoutRequestId(rightBody), withoutRequestId(wrongBody));
      assert.deepEqual(comparable(right), comparable(wrong));
    });

    await t.step("the device cookie set on sign-in keeps a returning browser known", async () => {
      const first = await login(server.adminPassword, "203.0.113.20");
      assert.equal(first.status, 200);
      await first.body?.cancel();
      const cookie = first.headers.getSetCookie().find((c) => c.startsWith("svc_device="));
      assert.ok(cookie, "svc_device is set on the sign-in answer");
      assert.match(cookie, /HttpOnly/);
      const device = cookie.split(";")[0];
      // Ten logins in an hour from that browser (moving between a few addresses, so the
      // per-IP-and-account layer does not stop it): no step-up (known device; velocity alone is 25).
      for (let i = 0; i < 10; i++) {
        const res = await login(server.adminPassword, `203.0.113.${21 + (i % 4)}`, { Cookie: device });
        assert.equal(res.status, 200);
        const body = await res.json();
        assert.equal(body.mfaRequired, undefined, `login ${i + 1} asked for a second factor`);
        assert.equal(res.headers.getSetCookie().some((c) => c.startsWith("svc_device=")), false);
      }
      // The same logins without the cookie: a new device on top of the velocity steps up.
      const bare = await login(server.adminPassword, "203.0.113.25");
      assert.equal(bare.status, 200);
      assert.equal((await bare.json()).mfaRequired, true);
    });

    await t.step("a race of wrong guesses from five addresses checks at most 5 passwords", async () => {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => login(`guess ${i}`, `198.51.100.${1 + (i % 5)}`)),
      );
      const statuses = await Promise.all(answers.map(async (res) => {
        await res.body?.cancel();
        return res.status;
      }));
      // Each 401 is a password that was checked; every other attempt was refused before.
      assert.equal(statuses.filter((s) => s === 401).length, 5, statuses.join(","));
      assert.equal(statuses.filter((s) => s === 429).length, 45);
      const right = await login(server.adminPassword, "203.0.113.26");
      assert.equal(right.status, 429, "the right password is refused within the window");
      assert.equal((await right.json()).error.code, "login_blocked");
    });
  } finally {
    await server.close();
    await Deno.remove(reputation);
  }
});
