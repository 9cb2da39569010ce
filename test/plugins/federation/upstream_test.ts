/**
 * The federation plugin's upstream client against a fake upstream this test controls (its
 * discovery document, JWKS and token endpoint answered by an injected `fetch`; ID tokens signed
 * here with jose): a good ID token passes, and one with a wrong audience, nonce or issuer, an
 * `alg` of `none` or HS256, several audiences without the right `azp`, or an expired one, is
 * refused with the one stable code. Discovery is cached by the clock and must name the issuer;
 * the token endpoint gets the client secret the way the upstream advertises, and no error
 * carries it.
 */
import { strict as assert } from "node:assert";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { ManualClock } from "../../../mod.ts";
import { UpstreamError, Upstreams } from "../../../plugins/federation/upstream.ts";
import { testOutbound } from "../../support/outbound.ts";

const ISSUER = "https://idp.example.test";
const CLIENT = "svc-client";
const SECRET = "upstream secret value";
const NONCE = "n-0123456789";

async function fakeUpstream(options: { authMethods?: string[]; issuer?: string } = {}) {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk = { ...await exportJWK(publicKey), kid: "k1", alg: "RS256", use: "sig" };
  const calls: { url: string; init?: RequestInit }[] = [];
  let idToken = "";
  let tokenStatus = 200;
  const raw = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    calls.push({ url, init });
    if (url === `${ISSUER}/.well-known/openid-configuration`) {
      return Promise.resolve(Response.json({
        issuer: options.issuer ?? ISSUER,
        authorization_endpoint: `${ISSUER}/auth`,
        token_endpoint: `${ISSUER}/token`,
        jwks_uri: `${ISSUER}/jwks`,
        id_token_signing_alg_values_supported: ["RS256", "HS256", "none"],
        token_endpoint_auth_methods_supported: options.authMethods ??
          ["client_secret_basic", "client_secret_post"],
      }));
    }
    if (url === `${ISSUER}/jwks`) return Promise.resolve(Response.json({ keys: [jwk] }));
    if (url === `${ISSUER}/token`) {
      return Promise.resolve(
        tokenStatus === 200
          ? Response.json({ id_token: idToken, access_token: "at", token_type: "Bearer" })
          : Response.json({ error: "invalid_grant" }, { status: tokenStatus }),
      );
    }
    return Promise.resolve(new Response("not found", { status: 404 }));
  };
  const sign = (claims: Record<string, unknown>, now: number) =>
    new SignJWT({ nonce: NONCE, ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(now / 1000) + 300)
      .sign(privateKey);
  return {
    fetch: testOutbound({ fetch: raw }),
    calls,
    sign,
    setIdToken: (token: string) => idToken = token,
    setTokenStatus: (status: number) => tokenStatus = status,
  };
}

const NOW = Date.UTC(2026, 0, 1);

async function refusedWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.code, code);
    assert.ok(!err.message.includes(SECRET));
    return true;
  });
}

Deno.test("upstream ID tokens: good passes; wrong audience, nonce, issuer, alg, azp or time are refused", async () => {
  const clock = new ManualClock(NOW);
  const up = await fakeUpstream();
  const upstreams = new Upstreams({ clock, fetch: up.fetch, discoveryTtlMs: 60_000, allowHttp: false });
  const metadata = await upstreams.metadata(ISSUER);
  const expected = { clientId: CLIENT, nonce: NONCE };
  const base = { iss: ISSUER, aud: CLIENT, sub: "user-1" };

  const good = await upstreams.verifyIdToken(metadata, await up.sign(base, NOW), expected);
  assert.equal(good.sub, "user-1");

  const cases: [string, string][] = [
    ["wrong audience", await up.sign({ ...base, aud: "someone-else" }, NOW)],
    ["wrong nonce", await up.sign({ ...base, nonce: "another nonce" }, NOW)],
    ["no nonce", await up.sign({ ...base, nonce: undefined }, NOW)],
    ["wrong issuer", await up.sign({ ...base, iss: "https://evil.example.test" }, NOW)],
    ["issuer with a trailing slash", await up.sign({ ...base, iss: `${ISSUER}/` }, NOW)],
    ["several audiences, no azp", await up.sign({ ...base, aud: [CLIENT, "other"] }, NOW)],
    ["azp of another client", await up.sign({ ...base, aud: [CLIENT, "other"], azp: "other" }, NOW)],
    ["expired", await up.sign(base, NOW - 3600_000)],
    ["issued in the future", await up.sign(base, NOW + 3600_000)],
    ["no subject", await up.sign({ ...base, sub: undefined }, NOW)],
    [
      "alg none",
      new UnsecuredJWT({ ...base, nonce: NONCE, iat: NOW / 1000, exp: NOW / 1000 + 300 }).encode(),
    ],
    [
      "HS256 keyed with the client secret",
      await new SignJWT({ ...base, nonce: NONCE }).setProtectedHeader({ alg: "HS256" }).setIssuedAt(
        NOW / 1000,
      )
        .setExpirationTime(NOW / 1000 + 300).sign(new TextEncoder().encode(SECRET)),
    ],
  ];
  for (const [name, token] of cases) {
    await refusedWith(upstreams.verifyIdToken(metadata, token, expected), "federation_id_token_invalid")
      .catch((err) => assert.fail(`${name}: ${err}`));
  }
  // Several audiences with the right azp pass.
  const multi = await upstreams.verifyIdToken(
    metadata,
    await up.sign({ ...base, aud: [CLIENT, "other"], azp: CLIENT }, NOW),
    expected,
  );
  assert.equal(multi.sub, "user-1");
  // HS256 and none are never among the accepted algorithms, whatever the upstream advertises.
  assert.deepEqual(metadata.idTokenAlgorithms, ["RS256"]);
});

Deno.test("upstream discovery: cached by the clock, must name its issuer, https unless allowed", async () => {
  const clock = new ManualClock(NOW);
  const up = await fakeUpstream();
  const upstreams = new Upstreams({ clock, fetch: up.fetch, discoveryTtlMs: 60_000, allowHttp: false });
  await upstreams.metadata(ISSUER);
  await upstreams.metadata(ISSUER);
  assert.equal(up.calls.length, 1);
  clock.advance(60_001);
  await upstreams.metadata(ISSUER);
  assert.equal(up.calls.length, 2);

  const lying = await fakeUpstream({ issuer: "https://other.example.test" });
  await refusedWith(
    new Upstreams({ clock, fetch: lying.fetch, discoveryTtlMs: 0, allowHttp: false }).metadata(ISSUER),
    "federation_upstream_invalid",
  );
  await refusedWith(upstreams.metadata("http://idp.example.test"), "federation_upstream_invalid");
  assert.equal(upstreams.issuerAllowed("http://idp.example.test"), false);
  assert.equal(
    new Upstreams({ clock, fetch: testOutbound(), discoveryTtlMs: 0, allowHttp: true }).issuerAllowed(
      "http://idp.example.test",
    ),
    true,
  );
});

Deno.test("upstream token endpoint: the advertised client authentication, no secret in errors", async () => {
  const clock = new ManualClock(NOW);
  for (
    const [methods, expected] of [[["client_secret_basic"], "basic"], [
      ["client_secret_post"],
      "post",
    ]] as const
  ) {
    const up = await fakeUpstream({ authMethods: [...methods] });
    const upstreams = new Upstreams({ clock, fetch: up.fetch, discoveryTtlMs: 0, allowHttp: false });
    const metadata = await upstreams.metadata(ISSUER);
    up.setIdToken("header.payload.signature");
    const idToken = await upstreams.exchangeCode(
      metadata,
      { clientId: CLIENT, clientSecret: SECRET },
      "the-code",
      "https://svc/cb",
      "verifier",
    );
    assert.equal(idToken, "header.payload.signature");
    const call = up.calls.find((c) => c.url === `${ISSUER}/token`)!;
    const form = new URLSearchParams(String(call.init?.body));
    const headers = new Headers(call.init?.headers);
    assert.equal(form.get("code_verifier"), "verifier");
    assert.equal(form.get("grant_type"), "authorization_code");
    if (expected === "basic") {
      assert.equal(headers.get("Authorization"), `Basic ${btoa(`${CLIENT}:${SECRET.replaceAll(" ", "+")}`)}`);
      assert.equal(form.get("client_secret"), null);
    } else {
      assert.equal(headers.get("Authorization"), null);
      assert.equal(form.get("client_secret"), SECRET);
    }
    up.setTokenStatus(400);
    await refusedWith(
      upstreams.exchangeCode(
        metadata,
        { clientId: CLIENT, clientSecret: SECRET },
        "c",
        "https://svc/cb",
        "v",
      ),
      "federation_code_refused",
    );
  }
  const none = await fakeUpstream({ authMethods: ["private_key_jwt"] });
  await refusedWith(
    new Upstreams({ clock, fetch: none.fetch, discoveryTtlMs: 0, allowHttp: false }).metadata(ISSUER),
    "federation_upstream_invalid",
  );
});

Deno.test("upstream requests go through the outbound guard: inward endpoints are refused, nothing is sent", async () => {
  const clock = new ManualClock(NOW);
  const sent: string[] = [];
  // A well-formed ID token, so that validating it needs the upstream's keys.
  const { privateKey } = await generateKeyPair("RS256");
  const signed = await new SignJWT({ nonce: NONCE, sub: "s", aud: CLIENT, iss: ISSUER })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuedAt(Math.floor(NOW / 1000))
    .setExpirationTime(Math.floor(NOW / 1000) + 300)
    .sign(privateKey);
  // A discovery document that points svc inward: the token endpoint on the loopback, the keys at
  // the cloud metadata address; and an issuer whose discovery redirects to the metadata address.
  const inward = (token: string, jwks: string) => (input: string | URL | Request): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    sent.push(url);
    if (url === "https://redirecting.example.test/.well-known/openid-configuration") {
      return Promise.resolve(
        new Response(null, {
          status: 302,
          headers: { Location: "http://169.254.169.254/latest/meta-data/" },
        }),
      );
    }
    return Promise.resolve(Response.json({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/auth`,
      token_endpoint: token,
      jwks_uri: jwks,
      token_endpoint_auth_methods_supported: ["client_secret_post"],
    }));
  };
  for (
    const [token, jwks] of [
      ["http://127.0.0.1:8080/token", "https://169.254.169.254/jwks"],
      ["https://169.254.169.254/token", "http://[::ffff:127.0.0.1]/jwks"],
      ["https://inward.example.test/token", "https://inward.example.test/jwks"], // DNS: 10.0.0.5
    ]
  ) {
    sent.length = 0;
    const upstreams = new Upstreams({
      clock,
      fetch: testOutbound({ fetch: inward(token, jwks), names: { "inward.example.test": ["10.0.0.5"] } }),
      discoveryTtlMs: 0,
      allowHttp: true,
    });
    const metadata = await upstreams.metadata(ISSUER);
    await refusedWith(
      upstreams.exchangeCode(
        metadata,
        { clientId: CLIENT, clientSecret: SECRET },
        "c",
        "https://svc/cb",
        "v",
      ),
      "federation_upstream_unavailable",
    );
    await refusedWith(
      upstreams.verifyIdToken(metadata, signed, { clientId: CLIENT, nonce: NONCE }),
      "federation_id_token_invalid",
    );
    assert.deepEqual(sent, [`${ISSUER}/.well-known/openid-configuration`], "only discovery was sent");
  }
  // An issuer on the loopback or the metadata address: discovery itself is refused.
  const upstreams = new Upstreams({
    clock,
    fetch: testOutbound({ fetch: inward("", "") }),
    discoveryTtlMs: 0,
    allowHttp: true,
  });
  sent.length = 0;
  await refusedWith(upstreams.metadata("http://127.0.0.1:9999"), "federation_upstream_unavailable");
  await refusedWith(upstreams.metadata("http://169.254.169.254"), "federation_upstream_unavailable");
  assert.deepEqual(sent, []);
  // A discovery redirect to the metadata address is refused at that hop.
  await refusedWith(
    upstreams.metadata("https://redirecting.example.test"),
    "federation_upstream_unavailable",
  );
  assert.deepEqual(sent, ["https://redirecting.example.test/.well-known/openid-configuration"]);
});
