import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { KeyRing } from "../../../core/keys/ring.ts";
import { seededRandom } from "../../../core/random.ts";
import { VerifiedTokenCache } from "../../../core/tokens/cache.ts";
import { InvalidTokenError } from "../../../core/tokens/errors.ts";
import { TokenService } from "../../../core/tokens/service.ts";
import { createSqlStorage } from "../../../storage/storage.ts";
import { T0 } from "../../support/auth.ts";
import { freshEmbedded } from "../../support/db.ts";
import { seeder, uuid } from "../../support/seed.ts";

const ISSUER = "https://id.example.test";
const reason = (r: InvalidTokenError["reason"]) => (err: unknown) =>
  err instanceof InvalidTokenError && err.code === "invalid_token" && err.status === 401 && err.reason === r;

Deno.test("token service", async (t) => {
  const database = await freshEmbedded();
  const clock = new ManualClock(T0);
  const random = seededRandom(5);
  const storage = createSqlStorage(database, { clock, random });
  const keys = new KeyRing({ store: storage.signingKeys, clock, random, overlapMs: 86_400_000 });
  const cache = new VerifiedTokenCache(clock, { maxEntries: 2 });
  const tokens = new TokenService({
    keys,
    clock,
    random,
    issuer: ISSUER,
    consumed: storage.consumedTokens,
    cache,
  });
  const seed = seeder(database.db);
  const realm = await seed.realm();
  const user = await seed.user(realm);

  await t.step("access tokens carry the claims of spec 2.1 and live 10 minutes", async () => {
    const org = uuid(), sid = uuid();
    const { token, claims } = await tokens.mint("at+svc", {
      aud: "app-1",
      realm,
      sub: user,
      org,
      sid,
      mfa: "PhishingResistant",
    });
    assert.equal(claims.exp - claims.iat, 600);
    const header = JSON.parse(atob(token.split(".")[0]));
    assert.deepEqual(Object.keys(header).sort(), ["alg", "kid", "typ"]);
    assert.equal(header.typ, "at+svc");
    const verified = await tokens.verify("at+svc", token, { audience: ["other", "app-1"] });
    assert.deepEqual(verified, claims);
    assert.equal(verified.act, undefined, "act only when impersonating");
    await assert.rejects(tokens.verify("at+svc", token), reason("audience"));
  });

  await t.step(
    "the verified-token cache: hits skip signature checks, still check audience and expiry",
    async () => {
      const { token } = await tokens.mint("at+svc", {
        aud: ISSUER,
        realm,
        sub: user,
        sid: uuid(),
        mfa: "Password",
      });
      await tokens.verify("at+svc", token);
      assert.ok(cache.size >= 1);
      await tokens.verify("at+svc", token);
      await assert.rejects(tokens.verify("at+svc", token, { audience: "x" }), reason("audience"));
      const [h, p, s] = token.split(".");
      await assert.rejects(tokens.verify("at+svc", `${h}.${p}x.${s}`), InvalidTokenError);
      clock.advance(600_000);
      await assert.rejects(tokens.verify("at+svc", token), reason("expired"));
      clock.set(T0);
    },
  );

  await t.step(
    "mfa+svc lives 5 minutes and carries subject, realm, requested org, audience and IP",
    async () => {
      const org = uuid();
      const { token, claims } = await tokens.mint("mfa+svc", {
        aud: "app-1",
        realm,
        sub: user,
        org,
        ip: "203.0.113.5",
        amr: "password",
      });
      assert.equal(claims.exp - claims.iat, 300);
      const verified = await tokens.verify("mfa+svc", token, { audience: "app-1" });
      assert.deepEqual([verified.sub, verified.realm, verified.org, verified.aud, verified.ip], [
        user,
        realm,
        org,
        "app-1",
        "203.0.113.5",
      ]);
      await assert.rejects(tokens.verify("at+svc", token, { audience: "app-1" }), reason("typ"));
      await assert.rejects(tokens.verify("pwreset+svc", token, { audience: "app-1" }), reason("typ"));
    },
  );

  await t.step("single-use types consume their jti once", async () => {
    const reset = await tokens.mint("pwreset+svc", { realm, sub: user, stamp: "" });
    assert.equal(reset.claims.aud, ISSUER);
    await tokens.verify("pwreset+svc", reset.token);
    const results = await Promise.allSettled([
      tokens.consume("pwreset+svc", reset.token),
      tokens.consume("pwreset+svc", reset.token),
    ]);
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    await assert.rejects(tokens.consume("pwreset+svc", reset.token), reason("consumed"));
    await assert.rejects(tokens.verify("pwreset+svc", reset.token), reason("consumed"));

    const verify = await tokens.mint("everify+svc", { realm, sub: user, email: "x@example.test" });
    assert.equal((await tokens.consume("everify+svc", verify.token)).email, "x@example.test");
    await assert.rejects(tokens.consume("everify+svc", verify.token), reason("consumed"));
    await assert.rejects(tokens.consume("invite+svc", verify.token), reason("typ"));
    const invite = await tokens.mint("invite+svc", { realm, email: "y@example.test", org: null, inv: user });
    await tokens.consume("invite+svc", invite.token);
    await assert.rejects(tokens.consume("invite+svc", invite.token), reason("consumed"));
    const consent = await tokens.mint("impconsent+svc", {
      realm,
      sub: user,
      act: { sub: uuid(), imp: uuid() },
    });
    await tokens.verify("impconsent+svc", consent.token);
    await tokens.verify("impconsent+svc", consent.token);
    // Single use (issue 12): the approval consumes it, a replay is refused.
    await tokens.consume("impconsent+svc", consent.token);
    await assert.rejects(tokens.consume("impconsent+svc", consent.token), reason("consumed"));
    await assert.rejects(tokens.verify("impconsent+svc", consent.token), reason("consumed"));
  });

  await t.step("a token never outlives notAfter", async () => {
    const { claims } = await tokens.mint("at+svc", { aud: ISSUER, realm, sub: user, sid: uuid(), mfa: "x" }, {
      notAfter: T0 + 120_000,
    });
    assert.equal(claims.exp, Math.floor(T0 / 1000) + 120);
  });

  await database.close();
});
