/**
 * Passkey login options are rate limited per IP (issue 19 item 6): past the limit every mode
 * (discoverable, username-first, second factor) answers 429 `login_blocked` with `Retry-After`,
 * like the password login's abuse gate, and no ceremony is created.
 */
import { strict as assert } from "node:assert";
import { passkeyBed } from "../../support/passkey-server.ts";

Deno.test("passkey login options: 30 per IP per 5 minutes, then 429 with Retry-After", async () => {
  const { bed, app } = await passkeyBed();
  try {
    const get = (ip: string) => app.request("/auth/passkey/login/options", {}, { clientAddress: ip });
    const post = (ip: string, body: unknown) =>
      app.request("/auth/passkey/login/options", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }, { clientAddress: ip });

    const ip = "203.0.113.50";
    for (let i = 0; i < 15; i++) assert.equal((await get(ip)).status, 200);
    for (let i = 0; i < 15; i++) assert.equal((await post(ip, { email: `u${i}@example.test` })).status, 200);
    const ceremonies = await bed.database.db.selectFrom("passkey_ceremonies").select("id").execute();
    assert.equal(ceremonies.length, 30);

    bed.clock.advance(60_000);
    for (const res of [await get(ip), await post(ip, { email: "x@example.test" }), await post(ip, {})]) {
      assert.equal(res.status, 429);
      assert.equal((await res.json()).error.code, "login_blocked");
      assert.equal(res.headers.get("Retry-After"), "240");
    }
    assert.equal(
      (await bed.database.db.selectFrom("passkey_ceremonies").select("id").execute()).length,
      30,
      "nothing created past the limit",
    );
    assert.equal((await get("203.0.113.51")).status, 200, "another address has its own budget");
    bed.clock.advance(240_000);
    assert.equal((await get(ip)).status, 200, "the window resets");
  } finally {
    await bed.close();
  }
});
