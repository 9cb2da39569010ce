/**
 * The passkey routes over HTTP without a browser: authentication and validation of each
 * endpoint, the `mfa+svc` hand-off checks, and a recorded registration and login replayed
 * through the endpoints (bearer and cookie transports).
 */
import { strict as assert } from "node:assert";
import { toBase64Url } from "../../../core/encoding.ts";
import { CeremonyKinds } from "../../../core/passkeys/service.ts";
import { type AuthBed, bearer, T0 } from "../../support/auth.ts";
import { passkeyBed } from "../../support/passkey-server.ts";
import { recorded } from "../../core/passkeys/fixtures.ts";

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "Content-Type": "application/json", ...headers },
  body: JSON.stringify(body),
});

/** The recorded responses were made on this origin. */
const RECORDED_ORIGIN = { SVC_BASE_URL: recorded.origin };

async function insertUser(bed: AuthBed, realmId: string, id: string): Promise<void> {
  await bed.database.db.insertInto("users").values({
    id,
    realm_id: realmId,
    email: `${id}@example.test`,
    email_verified: true,
    display_name: "Ada",
    status: "Active",
    attributes: "{}",
    is_break_glass: false,
    anonymized_at: null,
    created_at: new Date(T0),
    updated_at: new Date(T0),
  }).execute();
}

Deno.test("passkey routes: authentication, validation and the mfa hand-off", async (t) => {
  const { bed, app, realmId } = await passkeyBed(RECORDED_ORIGIN);
  try {
    const userId = await bed.seed.user(realmId);
    const { tokens } = await bed.signIn({ realmId, userId });

    await t.step("registration and listing need a signed-in user", async () => {
      assert.equal((await app.request("/auth/passkey/register/options", json({}))).status, 401);
      assert.equal((await app.request("/auth/passkey/register", json({}))).status, 401);
      assert.equal((await app.request("/auth/passkey/")).status, 401);
      assert.equal((await app.request("/auth/passkey/x", { method: "DELETE" })).status, 401);
    });

    await t.step("POST /register/options answers { ceremonyId, options } for the caller", async () => {
      const res = await app.request("/auth/passkey/register/options", {
        method: "POST",
        headers: bearer(tokens.accessToken),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("Cache-Control"), "no-store");
      const { ceremonyId, options } = await res.json();
      assert.equal(typeof ceremonyId, "string");
      assert.deepEqual(options.rp, { name: "svc (development)", id: "localhost" });
      assert.equal(options.user.name, `${userId}@example.test`);
      assert.equal(options.user.id, toBase64Url(new TextEncoder().encode(userId)));
      assert.equal(options.attestation, "none");
      assert.deepEqual(options.pubKeyCredParams.map((p: { alg: number }) => p.alg), [-8, -7, -257]);
    });

    await t.step("bodies are validated", async () => {
      const res = await app.request(
        "/auth/passkey/register",
        json({ ceremonyId: "x", response: { id: "a" } }, bearer(tokens.accessToken)),
      );
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, "invalid_request");
      const login = await app.request("/auth/passkey/login", json({ ceremonyId: "x" }));
      assert.equal(login.status, 400);
      const extra = await app.request("/auth/passkey/login/options", json({ nope: 1 }));
      assert.equal(extra.status, 400);
    });

    await t.step("GET and POST /login/options start a discoverable or username-first login", async () => {
      const get = await app.request("/auth/passkey/login/options");
      assert.equal(get.status, 200);
      const started = await get.json();
      assert.equal(started.options.rpId, "localhost");
      assert.equal(started.options.allowCredentials, undefined);
      assert.equal(started.options.userVerification, "preferred");
      const ceremony = await bed.storage.passkeyCeremonies.consume(started.ceremonyId);
      assert.equal(ceremony?.realmId, realmId, "the default realm");
      const post = await app.request("/auth/passkey/login/options", json({ email: "a@example.test" }));
      assert.equal((await post.json()).options.allowCredentials.length, 1);
      const unknownRealm = await app.request("/auth/passkey/login/options", json({ realm: "nowhere" }));
      assert.equal(unknownRealm.status, 400);
    });

    await t.step("an unknown ceremony is the generic login failure", async () => {
      const [first] = recorded.userVerifying.assertions;
      const res = await app.request(
        "/auth/passkey/login",
        json({ ceremonyId: "nope", response: first.response }),
      );
      assert.equal(res.status, 401);
      assert.deepEqual((await res.json()).error.code, "invalid_credentials");
    });

    await t.step("the mfa hand-off: only an mfa+svc token, not consumed by a failed passkey", async () => {
      const asMfa = await app.request("/auth/passkey/login/options", json({ mfaToken: tokens.accessToken }));
      assert.equal(asMfa.status, 401);
      assert.equal((await asMfa.json()).error.code, "invalid_token");
      const { token: mfaToken } = await bed.auth.tokens.mint("mfa+svc", {
        realm: realmId,
        sub: userId,
        org: null,
        ip: null,
        amr: "password",
        aud: bed.config.server.baseUrl,
      });
      const mixed = await app.request(
        "/auth/passkey/login/options",
        json({ mfaToken, email: "a@example.test" }),
      );
      assert.equal(mixed.status, 400);
      const [first] = recorded.userVerifying.assertions;
      const failed = await app.request(
        "/auth/passkey/mfa/verify",
        json({ mfaToken, ceremonyId: "nope", response: first.response }),
      );
      assert.equal(failed.status, 401);
      assert.equal((await failed.json()).error.code, "invalid_credentials");
      const still = await app.request("/auth/passkey/login/options", json({ mfaToken }));
      assert.equal(still.status, 200);
      const started = await still.json();
      assert.deepEqual(started.options.allowCredentials, [], "the user has no passkeys");
      bed.clock.advance(5 * 60_000 + 1000);
      const expired = await app.request("/auth/passkey/login/options", json({ mfaToken }));
      assert.equal(expired.status, 401);
    });
  } finally {
    await bed.close();
  }
});

Deno.test("passkey routes: a recorded registration and login through the endpoints", async (t) => {
  const { bed, app, realmId } = await passkeyBed(RECORDED_ORIGIN);
  try {
    const { userId, registration, assertions } = recorded.userVerifying;
    await insertUser(bed, realmId, userId);
    const { tokens } = await bed.signIn({ realmId, userId });
    let passkeyId = "";

    await t.step("POST /register stores the credential (201); a second completion fails", async () => {
      const ceremony = await bed.storage.passkeyCeremonies.create({
        kind: CeremonyKinds.registration,
        challenge: registration.challenge,
        realmId,
        userId,
      });
      const body = { ceremonyId: ceremony.id, response: registration.response, name: "Phone" };
      const res = await app.request("/auth/passkey/register", json(body, bearer(tokens.accessToken)));
      assert.equal(res.status, 201);
      const { passkey } = await res.json();
      passkeyId = passkey.id;
      assert.deepEqual(
        { ...passkey, id: undefined },
        {
          id: undefined,
          credentialId: registration.response.id,
          name: "Phone",
          userVerificationCapable: true,
          transports: ["internal"],
          signCount: 1,
          createdAt: new Date(T0).toISOString(),
          lastUsedAt: null,
        },
      );
      const again = await app.request("/auth/passkey/register", json(body, bearer(tokens.accessToken)));
      assert.equal(again.status, 400);
      assert.equal((await again.json()).error.code, "passkey_registration_failed");
    });

    await t.step("POST /login with the cookie transport sets the session cookies", async () => {
      const [first] = assertions;
      const ceremony = await bed.storage.passkeyCeremonies.create({
        kind: CeremonyKinds.login,
        challenge: first.challenge,
        realmId,
      });
      const res = await app.request(
        "/auth/passkey/login",
        json({ ceremonyId: ceremony.id, response: first.response }, { "X-Svc-Transport": "cookie" }),
      );
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(typeof body.csrfToken, "string");
      assert.equal(body.accessToken, undefined);
      const cookies = res.headers.getSetCookie().map((c) => c.split("=")[0]);
      assert.ok(cookies.includes("svc_at") && cookies.includes("svc_rt") && cookies.includes("svc_csrf"));
      const at = res.headers.getSetCookie().find((c) => c.startsWith("svc_at="))!.split(";")[0].slice(7);
      assert.equal((await bed.auth.tokens.verify("at+svc", at)).mfa, "PhishingResistant");
    });

    await t.step(
      "POST /login with org (by name) and audience: bearer tokens for that app and organization",
      async () => {
        const [, second] = assertions;
        const orgId = await bed.seed.org(realmId, [userId]);
        const unknownApp = await app.request(
          "/auth/passkey/login",
          json({ ceremonyId: "x", response: second.response, audience: "https://app.example.test" }),
        );
        assert.equal(unknownApp.status, 400);
        assert.equal((await unknownApp.json()).error.code, "unknown_audience");
        await bed.storage.appCatalog.register({ appKey: "https://app.example.test" });
        const ceremony = await bed.storage.passkeyCeremonies.create({
          kind: CeremonyKinds.login,
          challenge: second.challenge,
          realmId,
        });
        const res = await app.request(
          "/auth/passkey/login",
          json(
            {
              ceremonyId: ceremony.id,
              response: second.response,
              org: (await bed.storage.organizations.get(orgId))!.name.toUpperCase(),
              audience: "https://app.example.test",
            },
            { "User-Agent": "TestBrowser/1.0" },
          ),
          { clientAddress: "198.51.100.9" },
        );
        assert.equal(res.status, 200);
        const claims = await bed.auth.tokens.verify("at+svc", (await res.json()).accessToken, {
          audience: "https://app.example.test",
        });
        assert.equal(claims.org, orgId);
        assert.equal(claims.mfa, "PhishingResistant");
        const session = await bed.storage.sessions.get(claims.sid);
        assert.deepEqual([session?.ipAddress, session?.deviceDescription], [
          "198.51.100.9",
          "TestBrowser/1.0",
        ]);
      },
    );

    await t.step(
      "PATCH renames the caller's passkey; another user's is 404; bad bodies are 400",
      async () => {
        const patch = (id: string, token: string, body: string) =>
          app.request(`/auth/passkey/${id}`, {
            method: "PATCH",
            headers: { ...bearer(token), "Content-Type": "application/json" },
            body,
          });
        const renamed = await patch(
          passkeyId,
          tokens.accessToken,
          JSON.stringify({ name: "  Work laptop " }),
        );
        assert.equal(renamed.status, 200);
        assert.equal((await renamed.json()).passkey.name, "Work laptop");
        const listed = await (await app.request("/auth/passkey", { headers: bearer(tokens.accessToken) }))
          .json();
        assert.equal(listed.passkeys[0].name, "Work laptop");
        const other = await bed.signIn({ realmId, userId: await bed.seed.user(realmId) });
        const foreign = await patch(passkeyId, other.tokens.accessToken, JSON.stringify({ name: "mine" }));
        assert.equal(foreign.status, 404);
        const unknown = await patch(crypto.randomUUID(), tokens.accessToken, JSON.stringify({ name: "x" }));
        assert.equal(unknown.status, 404);
        assert.equal((await unknown.json()).error.code, (await foreign.json()).error.code, "the same answer");
        for (
          const bad of [
            JSON.stringify({ name: "a\u0000b" }),
            JSON.stringify({ name: "x".repeat(101) }),
            JSON.stringify({ name: 3 }),
            JSON.stringify({ name: "x", extra: true }),
            "{",
          ]
        ) {
          const res = await patch(passkeyId, tokens.accessToken, bad);
          assert.equal(res.status, 400, bad);
          await res.body?.cancel();
        }
        const anonymous = await app.request(`/auth/passkey/${passkeyId}`, {
          method: "PATCH",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ name: "x" }),
        });
        assert.equal(anonymous.status, 401);
        await anonymous.body?.cancel();
        const cleared = await patch(passkeyId, tokens.accessToken, JSON.stringify({ name: null }));
        assert.equal((await cleared.json()).passkey.name, null);
        assert.equal(
          await (await patch(passkeyId, tokens.accessToken, JSON.stringify({ name: "Laptop" }))).status,
          200,
        );
      },
    );

    await t.step("GET / lists the caller's passkeys; DELETE removes one (204, then 404)", async () => {
      const listed = await (await app.request("/auth/passkey", { headers: bearer(tokens.accessToken) }))
        .json();
      assert.deepEqual(listed.passkeys.map((p: { id: string; signCount: number }) => [p.id, p.signCount]), [
        [passkeyId, 3],
      ]);
      const other = await bed.signIn({ realmId, userId: await bed.seed.user(realmId) });
      const foreign = await app.request(`/auth/passkey/${passkeyId}`, {
        method: "DELETE",
        headers: bearer(other.tokens.accessToken),
      });
      assert.equal(foreign.status, 404);
      const del = await app.request(`/auth/passkey/${passkeyId}`, {
        method: "DELETE",
        headers: bearer(tokens.accessToken),
      });
      assert.equal(del.status, 204);
      const gone = await app.request(`/auth/passkey/${passkeyId}`, {
        method: "DELETE",
        headers: bearer(tokens.accessToken),
      });
      assert.equal(gone.status, 404);
      assert.deepEqual(
        bed.events.filter((e) => e.kind.startsWith("passkey.")).map((e) => e.kind),
        [
          "passkey.registered",
          "passkey.login",
          "passkey.login",
          "passkey.renamed",
          "passkey.renamed",
          "passkey.renamed",
          "passkey.removed",
        ],
      );
    });
  } finally {
    await bed.close();
  }
});
