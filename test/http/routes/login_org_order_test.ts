/**
 * The password login answers in spec 5.2's fixed order (issue 25): the `org` asked for is checked
 * only after the risk gate, so a right password that the risk gate blocks answers exactly as a
 * wrong one (401) whatever the `org`, and a refused `org` (403) keeps the attempt's lockout slot:
 * five such refusals lock the account like five wrong passwords.
 */
import { strict as assert } from "node:assert";
import { ListIpReputation } from "../../../core/risk/providers.ts";
import { loginBed } from "../../support/login.ts";

const REPUTATION = await Deno.readTextFile(new URL("../../fixtures/risk/ip-reputation.txt", import.meta.url));
/** Listed with no score (100): the IP reputation signal (50) fires; with a new device (30), a block. */
const BAD_IP = "192.0.2.66";

const withoutRequestId = (body: { error: Record<string, unknown> }) => {
  const { requestId: _, ...rest } = body.error;
  return rest;
};

Deno.test("password login: org is checked after the risk gate and keeps the lockout slot", async (t) => {
  const bed = await loginBed({}, { reputation: ListIpReputation.parse(REPUTATION, "ip-reputation.txt") });
  try {
    const org = await bed.storage.organizations.create({
      realmId: bed.realmId,
      name: "acme",
      displayName: "Acme",
    });

    await t.step("a blocked right password with a foreign org answers as a wrong one", async () => {
      await bed.user("frank@example.test", "frank's password");
      const login = { email: "frank@example.test", password: "frank's password", deviceFingerprint: "phone" };
      const first = await bed.post("/auth/login", login); // the device becomes known
      assert.equal(first.status, 200);
      await first.body?.cancel();
      const stolen = { ...login, deviceFingerprint: "stolen", org: org.id };
      const answers = [];
      for (let i = 0; i < 5; i++) {
        const right = await bed.post("/auth/login", stolen, { ip: BAD_IP });
        const wrong = await bed.post("/auth/login", { ...stolen, password: `guess ${i}` }, { ip: BAD_IP });
        answers.push([right.status, await right.json(), wrong.status, await wrong.json()] as const);
        if (right.status !== 401) break;
      }
      for (const [rightStatus, rightBody, wrongStatus, wrongBody] of answers.slice(0, 2)) {
        assert.equal(rightStatus, 401, JSON.stringify(rightBody));
        assert.equal(rightStatus, wrongStatus);
        assert.deepEqual(withoutRequestId(rightBody), withoutRequestId(wrongBody));
      }
      // Each blocked right password and each wrong one held a slot: the account locks (5 per 15 minutes).
      const locked = answers.flatMap(([rightStatus, , wrongStatus]) => [rightStatus, wrongStatus]);
      assert.ok(locked.includes(429), `no lockout: ${locked.join(",")}`);
      assert.ok(!locked.includes(403), `the org check answered: ${locked.join(",")}`);
      const after = await bed.post("/auth/login", stolen, { ip: BAD_IP });
      assert.equal(after.status, 429);
      assert.equal((await after.json()).error.code, "login_blocked");
    });

    await t.step("a refused org keeps the lockout slot", async () => {
      await bed.user("gina@example.test", "gina's password");
      const login = { email: "gina@example.test", password: "gina's password", org: org.id };
      for (let i = 0; i < 5; i++) {
        const res = await bed.post("/auth/login", login);
        assert.equal(res.status, 403, `attempt ${i}`);
        assert.equal((await res.json()).error.code, "forbidden");
      }
      const res = await bed.post("/auth/login", { email: "gina@example.test", password: "gina's password" });
      assert.equal(res.status, 429, "five refused orgs lock the account as five wrong passwords do");
      await res.body?.cancel();
      bed.clock.advance(15 * 60_000);
      const later = await bed.post("/auth/login", {
        email: "gina@example.test",
        password: "gina's password",
      });
      assert.equal(later.status, 200);
      await later.body?.cancel();
    });
  } finally {
    await bed.close();
  }
});
