/**
 * DPoP on svc's own API (RFC 9449): opt-in binding at `/auth/login` and `/auth/refresh`,
 * `Authorization: DPoP` with a proof at every route, bound tokens refused as Bearer, replays
 * refused, `WWW-Authenticate: DPoP` challenges, and server nonces when required.
 */
import { strict as assert } from "node:assert";
import { decodeJwt } from "jose";
import { dpopKey, dpopProof, type DpopTestKey } from "../../support/dpop.ts";
import { type LoginBed, loginBed } from "../../support/login.ts";

const PASSWORD = "correct horse battery staple";

function proofFor(
  bed: LoginBed,
  key: DpopTestKey,
  htm: string,
  path: string,
  extra: Record<string, unknown> = {},
) {
  return dpopProof(key, {
    htm,
    htu: `${bed.config.server.baseUrl}${path}`,
    iat: Math.floor(bed.clock.now() / 1000),
    ...extra,
  });
}

async function login(bed: LoginBed, email: string, headers: Record<string, string> = {}) {
  return await bed.post("/auth/login", { email, password: PASSWORD }, { headers });
}

function me(bed: LoginBed, headers: Record<string, string>) {
  return bed.app.request("/profile/me", { headers }, { clientAddress: "203.0.113.10" });
}

Deno.test("DPoP on svc's own API", async (t) => {
  const bed = await loginBed();
  const key = await dpopKey();
  const other = await dpopKey();
  try {
    const adaId = await bed.user("ada@example.com", PASSWORD);
    const res = await login(bed, "ada@example.com", {
      DPoP: await proofFor(bed, key, "POST", "/auth/login"),
    });
    assert.equal(res.status, 200);
    const bound = await res.json();
    assert.equal(bound.tokenType, "DPoP");
    assert.deepEqual(decodeJwt(bound.accessToken).cnf, { jkt: key.jkt });

    await t.step("a bound token with a proof of its key (ath, htm, htu) is accepted", async () => {
      const proof = await proofFor(bed, key, "GET", "/profile/me", { accessToken: bound.accessToken });
      const ok = await me(bed, { Authorization: `DPoP ${bound.accessToken}`, DPoP: proof });
      assert.equal(ok.status, 200);
      assert.equal((await ok.json()).email, "ada@example.com");
    });

    await t.step("the same proof again is a replay", async () => {
      const proof = await proofFor(bed, key, "GET", "/profile/me", { accessToken: bound.accessToken });
      assert.equal((await me(bed, { Authorization: `DPoP ${bound.accessToken}`, DPoP: proof })).status, 200);
      const again = await me(bed, { Authorization: `DPoP ${bound.accessToken}`, DPoP: proof });
      assert.equal(again.status, 401);
      assert.equal((await again.json()).error.code, "invalid_dpop_proof");
      assert.match(
        again.headers.get("WWW-Authenticate") ?? "",
        /^DPoP error="invalid_dpop_proof".*algs="ES256/,
      );
    });

    await t.step("a bound token as Bearer (or as a cookie) is refused with a DPoP challenge", async () => {
      const res = await me(bed, { Authorization: `Bearer ${bound.accessToken}` });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token");
      assert.match(res.headers.get("WWW-Authenticate") ?? "", /^DPoP error="invalid_token"/);
      const cookie = await me(bed, { Cookie: `svc_at=${bound.accessToken}` });
      assert.equal(cookie.status, 401);
    });

    await t.step("no proof, another key's proof, a wrong ath, htm or htu: refused", async () => {
      const auth = { Authorization: `DPoP ${bound.accessToken}` };
      const cases: [string, Record<string, string>][] = [
        ["none", {}],
        ["other key", {
          DPoP: await proofFor(bed, other, "GET", "/profile/me", { accessToken: bound.accessToken }),
        }],
        ["no ath", { DPoP: await proofFor(bed, key, "GET", "/profile/me") }],
        ["wrong ath", { DPoP: await proofFor(bed, key, "GET", "/profile/me", { accessToken: "x" }) }],
        ["htm", {
          DPoP: await proofFor(bed, key, "POST", "/profile/me", { accessToken: bound.accessToken }),
        }],
        ["htu", {
          DPoP: await proofFor(bed, key, "GET", "/profile/other", { accessToken: bound.accessToken }),
        }],
        [
          "two proofs",
          {
            DPoP: `${await proofFor(bed, key, "GET", "/profile/me", { accessToken: bound.accessToken })}, x`,
          },
        ],
      ];
      for (const [name, headers] of cases) {
        const res = await me(bed, { ...auth, ...headers });
        assert.equal(res.status, 401, name);
        assert.equal((await res.json()).error.code, "invalid_dpop_proof", name);
        assert.match(res.headers.get("WWW-Authenticate") ?? "", /^DPoP /, name);
      }
    });

    await t.step("an unbound token stays a Bearer token; as DPoP it is refused", async () => {
      const plain = await (await login(bed, "ada@example.com")).json();
      assert.equal(plain.tokenType, "Bearer");
      assert.equal(decodeJwt(plain.accessToken).cnf, undefined);
      assert.equal((await me(bed, { Authorization: `Bearer ${plain.accessToken}` })).status, 200);
      const proof = await proofFor(bed, key, "GET", "/profile/me", { accessToken: plain.accessToken });
      const res = await me(bed, { Authorization: `DPoP ${plain.accessToken}`, DPoP: proof });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_token");
    });

    await t.step("switching organization keeps the binding", async () => {
      const org = await bed.storage.organizations.create({
        realmId: bed.realmId,
        name: "acme",
        displayName: "Acme",
      });
      await bed.storage.organizations.addMember(org.id, adaId);
      const proof = await proofFor(bed, key, "POST", "/auth/switch-organization", {
        accessToken: bound.accessToken,
      });
      const res = await bed.post("/auth/switch-organization", { orgId: org.id }, {
        headers: { Authorization: `DPoP ${bound.accessToken}`, DPoP: proof },
      });
      assert.equal(res.status, 200);
      const switched = await res.json();
      assert.equal(switched.tokenType, "DPoP");
      assert.deepEqual(decodeJwt(switched.accessToken).cnf, { jkt: key.jkt });
    });

    await t.step("a bound refresh token needs a proof of its key", async () => {
      const refresh = (token: string, headers: Record<string, string>) =>
        bed.post("/auth/refresh", { refreshToken: token }, { headers });
      let res = await refresh(bound.refreshToken, {
        DPoP: await proofFor(bed, other, "POST", "/auth/refresh"),
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, "invalid_dpop_proof");
      res = await refresh(bound.refreshToken, { DPoP: await proofFor(bed, key, "POST", "/auth/login") });
      assert.equal(res.status, 400, "a proof for another URI");
      res = await refresh(bound.refreshToken, { DPoP: await proofFor(bed, key, "POST", "/auth/refresh") });
      assert.equal(res.status, 200, "the refresh token was not spent by the refused attempts");
      const next = await res.json();
      assert.equal(next.tokenType, "DPoP");
      assert.deepEqual(decodeJwt(next.accessToken).cnf, { jkt: key.jkt });

      // Without any proof the token is taken for stolen: refused, and its family ends.
      res = await refresh(next.refreshToken, {});
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, "invalid_dpop_proof");
      res = await refresh(next.refreshToken, { DPoP: await proofFor(bed, key, "POST", "/auth/refresh") });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "invalid_refresh_token");
    });

    await t.step("a bad proof at sign-in is 400 and signs nobody in", async () => {
      const before = (await bed.storage.sessions.listActiveForUser(
        adaId,
      )).length;
      const res = await login(bed, "ada@example.com", {
        DPoP: await proofFor(bed, key, "GET", "/auth/login"),
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, "invalid_dpop_proof");
      const after = (await bed.storage.sessions.listActiveForUser(
        adaId,
      )).length;
      assert.equal(after, before);
      // Checked before the password: a wrong password with a bad proof gets the proof's error.
      const early = await bed.post("/auth/login", { email: "ada@example.com", password: "wrong" }, {
        headers: { DPoP: await proofFor(bed, key, "GET", "/auth/login") },
      });
      assert.equal((await early.json()).error.code, "invalid_dpop_proof");
    });
  } finally {
    await bed.close();
  }
});

Deno.test("DPoP nonces on svc's own API (SVC_DPOP_NONCE_REQUIRED=true)", async () => {
  const bed = await loginBed({ SVC_DPOP_NONCE_REQUIRED: "true", SVC_ACCESS_TOKEN_TTL_SECONDS: "3600" });
  const key = await dpopKey();
  try {
    await bed.user("bo@example.com", PASSWORD);
    let res = await login(bed, "bo@example.com", { DPoP: await proofFor(bed, key, "POST", "/auth/login") });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, "use_dpop_nonce");
    const nonce = res.headers.get("DPoP-Nonce");
    assert.ok(nonce !== null && nonce.length > 20);
    res = await login(bed, "bo@example.com", {
      DPoP: await proofFor(bed, key, "POST", "/auth/login", { nonce: "1.forged-forged-forged-forged-abcd" }),
    });
    assert.equal((await res.json()).error.code, "use_dpop_nonce", "a forged nonce");
    res = await login(bed, "bo@example.com", {
      DPoP: await proofFor(bed, key, "POST", "/auth/login", { nonce }),
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get("DPoP-Nonce"), "every DPoP answer carries the current nonce");
    const { accessToken } = await res.json();

    const auth = { Authorization: `DPoP ${accessToken}` };
    let get = await me(bed, {
      ...auth,
      DPoP: await proofFor(bed, key, "GET", "/profile/me", { accessToken }),
    });
    assert.equal(get.status, 401);
    assert.match(get.headers.get("WWW-Authenticate") ?? "", /^DPoP error="use_dpop_nonce"/);
    const fresh = get.headers.get("DPoP-Nonce")!;
    get = await me(bed, {
      ...auth,
      DPoP: await proofFor(bed, key, "GET", "/profile/me", { accessToken, nonce: fresh }),
    });
    assert.equal(get.status, 200);

    // Ten minutes later the nonce has rotated out (two windows of five minutes).
    bed.clock.advance(600_000);
    get = await me(bed, {
      ...auth,
      DPoP: await proofFor(bed, key, "GET", "/profile/me", { accessToken, nonce: fresh }),
    });
    assert.equal(get.status, 401);
    assert.match(get.headers.get("WWW-Authenticate") ?? "", /use_dpop_nonce/);
    assert.notEqual(get.headers.get("DPoP-Nonce"), fresh);
  } finally {
    await bed.close();
  }
});
