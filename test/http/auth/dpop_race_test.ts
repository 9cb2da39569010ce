/**
 * A DPoP proof is single use under concurrency, on real Postgres connections: 20 concurrent
 * requests carrying one proof, exactly one accepted (a resource request, a refresh, and the
 * store itself).
 */
import { strict as assert } from "node:assert";
import { freshPostgres } from "../../support/db.ts";
import { dpopKey, dpopProof } from "../../support/dpop.ts";
import { loginBed } from "../../support/login.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { ManualClock } from "../../../core/clock.ts";
import { seededRandom } from "../../../core/random.ts";

const PASSWORD = "correct horse battery staple";

Deno.test("DPoP: 20 concurrent requests with one proof, on Postgres: exactly one accepted", async (t) => {
  const bed = await loginBed({}, { postgres: true });
  const key = await dpopKey();
  const base = bed.config.server.baseUrl;
  const iat = () => Math.floor(bed.clock.now() / 1000);
  try {
    await bed.user("race@example.com", PASSWORD);
    const login = await bed.post("/auth/login", { email: "race@example.com", password: PASSWORD }, {
      headers: { DPoP: await dpopProof(key, { htm: "POST", htu: `${base}/auth/login`, iat: iat() }) },
    });
    assert.equal(login.status, 200);
    const tokens = await login.json();

    await t.step("a resource request", async () => {
      const proof = await dpopProof(key, {
        htm: "GET",
        htu: `${base}/profile/me`,
        iat: iat(),
        accessToken: tokens.accessToken,
      });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          bed.app.request("/profile/me", {
            headers: { Authorization: `DPoP ${tokens.accessToken}`, DPoP: proof },
          }, { clientAddress: "203.0.113.10" })),
      );
      const statuses = answers.map((res) => res.status).sort();
      assert.deepEqual(statuses, [200, ...Array(19).fill(401)]);
      for (const res of answers) await res.body?.cancel();
    });

    await t.step("a refresh", async () => {
      const proof = await dpopProof(key, { htm: "POST", htu: `${base}/auth/refresh`, iat: iat() });
      const answers = await Promise.all(
        Array.from(
          { length: 20 },
          () =>
            bed.post("/auth/refresh", { refreshToken: tokens.refreshToken }, { headers: { DPoP: proof } }),
        ),
      );
      const bodies = await Promise.all(answers.map((res) => res.json()));
      assert.equal(answers.filter((res) => res.status === 200).length, 1);
      assert.equal(bodies.filter((body) => body.error?.code === "invalid_dpop_proof").length, 19);
    });
  } finally {
    await bed.close();
  }
});

Deno.test("DpopStore.useProof on 20 Postgres connections at once: one true", async () => {
  const database = await freshPostgres({ maxConnections: 20 });
  try {
    const storage = createSqlStorage(database, { clock: new ManualClock(0), random: seededRandom(1) });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => storage.dpop.useProof("proof-key", new Date(60_000))),
    );
    assert.equal(results.filter(Boolean).length, 1);
  } finally {
    await database.close();
  }
});
