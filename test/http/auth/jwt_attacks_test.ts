/**
 * The JWT attack suite against the HTTP layer: every forged, mistyped, expired or
 * misdirected token is refused with the same 401 `invalid_token`.
 */
import { strict as assert } from "node:assert";
import { SignJWT } from "jose";
import { toBase64Url, utf8 } from "../../../core/encoding.ts";
import { InvalidTokenError } from "../../../core/tokens/errors.ts";
import { TOKEN_TYPES, type TokenMintInput, type TokenType } from "../../../core/tokens/types.ts";
import { authBed, bearer, segment, signWithRealmKey } from "../../support/auth.ts";
import { uuid } from "../../support/seed.ts";

Deno.test("JWT attacks are all rejected with invalid_token", async (t) => {
  const bed = await authBed();
  const { auth, app, clock } = bed;
  const issuer = bed.config.server.baseUrl;
  const { realmId, userId } = await bed.realmWithUser();
  const signedIn = await bed.signIn({ realmId, userId });
  const sid = signedIn.session.id;
  const now = () => Math.floor(clock.now() / 1000);
  let n = 0;
  const claims = (over: Record<string, unknown> = {}) => ({
    iss: issuer,
    aud: issuer,
    realm: realmId,
    sub: userId,
    sid,
    mfa: "Password",
    iat: now(),
    exp: now() + 600,
    jti: `forged-${n++}`,
    ...over,
  });
  const call = (token: string) => app.request("/profile/me", { headers: bearer(token) });
  const rejected = async (token: string, reason?: InvalidTokenError["reason"]) => {
    const res = await call(token);
    assert.equal(res.status, 401);
    const body = await res.json();
    assert.equal(body.error.code, "invalid_token");
    assert.equal(body.error.message, "The token is invalid or expired.");
    if (reason !== undefined) {
      await assert.rejects(
        auth.tokens.verify("at+svc", token),
        (err) => err instanceof InvalidTokenError && err.reason === reason,
      );
    }
  };
  const accepted = async (token: string) => {
    const res = await call(token);
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
  };

  await t.step(
    "control: a real access token and a well-formed one signed with the realm key pass",
    async () => {
      await accepted(signedIn.tokens.accessToken);
      await accepted(await signWithRealmKey(auth, realmId, claims()));
    },
  );

  await t.step("alg none", async () => {
    const header = segment({ alg: "none", typ: "at+svc", kid: (await auth.keys.signingKey(realmId)).kid });
    await rejected(`${header}.${segment(claims())}.`);
    await rejected(`${header}.${segment(claims())}.${toBase64Url(utf8("x"))}`, "alg");
    await rejected(`${segment({ alg: "none", typ: "at+svc" })}.${segment(claims())}.`);
  });

  await t.step("HS256 signed with the RSA public key", async () => {
    const key = await auth.keys.signingKey(realmId);
    const spki = new Uint8Array(await crypto.subtle.exportKey("spki", key.publicKey));
    const pem = `-----BEGIN PUBLIC KEY-----\n${
      btoa(String.fromCharCode(...spki))
    }\n-----END PUBLIC KEY-----\n`;
    const secrets = [utf8(pem), utf8(JSON.stringify(key.publicJwk)), spki];
    for (const secret of secrets) {
      const hmac = await crypto.subtle.importKey(
        "raw",
        secret as Uint8Array<ArrayBuffer>,
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      const input = `${segment({ alg: "HS256", typ: "at+svc", kid: key.kid })}.${segment(claims())}`;
      const mac = new Uint8Array(
        await crypto.subtle.sign("HMAC", hmac, utf8(input) as Uint8Array<ArrayBuffer>),
      );
      await rejected(`${input}.${toBase64Url(mac)}`, "alg");
    }
  });

  await t.step("unknown, missing or path-like kid", async () => {
    for (
      const kid of ["nope", "../../../../etc/passwd", "/dev/null", "http://evil.example/jwks.json", "a b"]
    ) {
      await rejected(await signWithRealmKey(auth, realmId, claims(), { kid }), "kid");
    }
    const key = await auth.keys.signingKey(realmId);
    const noKid = await new SignJWT(claims()).setProtectedHeader({ alg: "RS256", typ: "at+svc" }).sign(
      key.privateKey,
    );
    await rejected(noKid, "kid");
  });

  await t.step("an embedded jwk (or jku, x5u, x5c) header", async () => {
    const pair = await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    ) as CryptoKeyPair;
    const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
    const attackerJwk = { kty: "RSA", n: jwk.n, e: jwk.e };
    const realKid = (await auth.keys.signingKey(realmId)).kid;
    for (const kid of ["attacker", realKid]) {
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: "RS256", typ: "at+svc", kid, jwk: attackerJwk })
        .sign(pair.privateKey);
      await rejected(token, "header");
    }
    // Even signed with the real key, a header naming another key source is refused.
    await rejected(await signWithRealmKey(auth, realmId, claims(), { jwk: attackerJwk }), "header");
    await rejected(
      await signWithRealmKey(auth, realmId, claims(), { jku: "https://evil.example/k" }),
      "header",
    );
    await rejected(
      await signWithRealmKey(auth, realmId, claims(), { x5u: "https://evil.example/c" }),
      "header",
    );
  });

  await t.step("each other typ presented as an access token, and the reverse", async () => {
    const inputs: { [T in Exclude<TokenType, "at+svc">]: TokenMintInput<T> } = {
      "mfa+svc": { aud: issuer, realm: realmId, sub: userId, org: null, ip: "203.0.113.9", amr: "password" },
      "pwreset+svc": { realm: realmId, sub: userId, stamp: "" },
      "everify+svc": { realm: realmId, sub: userId, email: "a@example.test" },
      "invite+svc": { realm: realmId, email: "b@example.test", org: null, inv: userId },
      "impconsent+svc": { realm: realmId, sub: userId, act: { sub: uuid(), imp: uuid() } },
    };
    for (const [typ, input] of Object.entries(inputs)) {
      const { token } = await auth.tokens.mint(typ as "mfa+svc", input as TokenMintInput<"mfa+svc">);
      await rejected(token, "typ");
    }
    for (const typ of TOKEN_TYPES.filter((x) => x !== "at+svc")) {
      await assert.rejects(
        auth.tokens.verify(typ, signedIn.tokens.accessToken),
        (err) => err instanceof InvalidTokenError && err.reason === "typ",
      );
    }
    for (const typ of ["JWT", "at+jwt", "AT+SVC", "application/at+svc", undefined]) {
      await rejected(await signWithRealmKey(auth, realmId, claims(), { typ }), "typ");
    }
  });

  await t.step("exp and nbf at the boundaries", async () => {
    await rejected(await signWithRealmKey(auth, realmId, claims({ exp: now() })), "expired");
    const lastSecond = await signWithRealmKey(auth, realmId, claims({ exp: now() + 1 }));
    await accepted(lastSecond);
    clock.advance(999);
    await accepted(lastSecond); // cached, still inside its last second
    clock.advance(1);
    await rejected(lastSecond); // exp reached: the cache lets it go too
    await rejected(await signWithRealmKey(auth, realmId, claims({ nbf: now() + 1 })), "not_yet_valid");
    await accepted(await signWithRealmKey(auth, realmId, claims({ nbf: now() })));
    const minted = await bed.signIn({ realmId, userId });
    await accepted(minted.tokens.accessToken);
    clock.advance(minted.tokens.expiresIn * 1000);
    await rejected(minted.tokens.accessToken);
  });

  await t.step("wrong aud and wrong iss", async () => {
    await rejected(
      await signWithRealmKey(auth, realmId, claims({ aud: "https://other-app.example" })),
      "audience",
    );
    await rejected(await signWithRealmKey(auth, realmId, claims({ aud: [issuer, "x"] })), "claims");
    await rejected(await signWithRealmKey(auth, realmId, claims({ iss: "https://evil.example" })), "issuer");
    // An app-scoped token is for its app, not for svc's own API.
    const appToken = await bed.signIn({ realmId, userId, audience: "billing-app" });
    await rejected(appToken.tokens.accessToken, "audience");
  });

  await t.step("tampering: a payload swapped under a cached signature, a realm swapped", async () => {
    const token = signedIn.tokens.accessToken;
    const fresh = await bed.signIn({ realmId, userId });
    await accepted(fresh.tokens.accessToken); // now in the verified-token cache
    const [h, , s] = fresh.tokens.accessToken.split(".");
    await rejected(`${h}.${segment(claims({ sub: uuid() }))}.${s}`, "signature");
    const other = await bed.realmWithUser();
    await auth.keys.ensurePrimary(other.realmId);
    const [h2, p2, s2] = token.split(".");
    const payload = JSON.parse(
      new TextDecoder().decode(
        Uint8Array.from(atob(p2.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0)),
      ),
    );
    await rejected(`${h2}.${segment({ ...payload, realm: other.realmId })}.${s2}`);
    await rejected("not-a-jwt");
    await rejected("a.b.c");
    await rejected("");
  });

  await t.step("a token signed by a retired key: accepted in the overlap window, refused after", async () => {
    const longLived = await signWithRealmKey(auth, realmId, claims({ exp: now() + 3 * 86400 }));
    await accepted(longLived);
    const rotation = await auth.keys.rotate(realmId);
    assert.notEqual(rotation.primaryKid, rotation.retiredKid);
    await accepted(longLived); // retired, inside the overlap
    const afterRotation = await bed.signIn({ realmId, userId });
    assert.equal(JSON.parse(atob(afterRotation.tokens.accessToken.split(".")[0])).kid, rotation.primaryKid);
    clock.advance(bed.config.tokens.signingKeyOverlapSeconds * 1000);
    await rejected(longLived, "kid");
    const jwks = await auth.keys.jwks(realmId);
    assert.deepEqual(jwks.keys.map((k) => k.kid), [rotation.primaryKid]);
  });

  await bed.close();
});
