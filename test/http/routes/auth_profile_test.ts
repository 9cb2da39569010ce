/**
 * Token, session, profile and JWKS routes over the real token authenticator: refresh through
 * the bearer transport, /profile/me (and its impersonation banner), session listing and
 * remote logout, logout-all, organization switch (the snapshot follows the organization),
 * key-set publication, readiness, and API key and service-account presentation.
 */
import { strict as assert } from "node:assert";
import { createApiKey } from "../../../core/credentials/api-keys.ts";
import {
  createServiceAccount,
  rotateServiceAccountSecret,
} from "../../../core/credentials/service-accounts.ts";
import { randomUuid } from "../../../core/random.ts";
import { authBed, bearer } from "../../support/auth.ts";
import { uuid } from "../../support/seed.ts";

const json = (body: unknown) => ({
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

Deno.test("auth and profile routes", async (t) => {
  const bed = await authBed();
  const { app, seed, clock } = bed;
  const { realmId, userId } = await bed.realmWithUser({ isDefault: true });
  const orgA = await seed.org(realmId, [userId]);
  const orgB = await seed.org(realmId, [userId]);
  const foreignOrg = await seed.org(realmId, []);
  await seed.assign(realmId, await seed.role(realmId, "a-reader", [{ pattern: "docs:org:read" }], orgA), {
    kind: "User",
    id: userId,
  }, orgA);
  await seed.assign(realmId, await seed.role(realmId, "b-writer", [{ pattern: "billing:org:write" }], orgB), {
    kind: "User",
    id: userId,
  }, orgB);

  await t.step("GET /profile/me needs a caller and answers the profile", async () => {
    assert.equal((await app.request("/profile/me")).status, 401);
    const { tokens, session } = await bed.signIn({ realmId, userId, orgId: orgA });
    const res = await app.request("/profile/me", { headers: bearer(tokens.accessToken) });
    assert.equal(res.status, 200);
    const me = await res.json();
    assert.equal(me.id, userId);
    assert.equal(me.realmId, realmId);
    assert.equal(me.orgId, orgA);
    assert.equal(me.sessionId, session.id);
    assert.equal(me.mfa, "Password");
    assert.equal(me.impersonation, null);
  });

  await t.step(
    "GET /profile/permissions works with a real bearer token; the org switch moves the snapshot",
    async () => {
      const { tokens } = await bed.signIn({ realmId, userId, orgId: orgA });
      let res = await app.request("/profile/permissions", { headers: bearer(tokens.accessToken) });
      assert.equal(res.status, 200);
      assert.deepEqual((await res.json()).permissions, ["docs:org:read"]);

      res = await app.request("/auth/switch-organization", {
        ...json({ orgId: orgB }),
        headers: { ...bearer(tokens.accessToken), "Content-Type": "application/json" },
      });
      assert.equal(res.status, 200);
      const switched = await res.json();
      assert.deepEqual(Object.keys(switched).sort(), ["accessToken", "expiresIn", "tokenType"]);
      assert.equal(switched.tokenType, "Bearer");
      res = await app.request("/profile/permissions", { headers: bearer(switched.accessToken) });
      assert.deepEqual((await res.json()).permissions, ["billing:org:write"]);
      const me = await (await app.request("/profile/me", { headers: bearer(switched.accessToken) })).json();
      assert.equal(me.orgId, orgB);

      res = await app.request("/auth/switch-organization", {
        ...json({ orgId: foreignOrg }),
        headers: { ...bearer(tokens.accessToken), "Content-Type": "application/json" },
      });
      assert.equal(res.status, 403, "not a member");
    },
  );

  await t.step("POST /auth/refresh (bearer) rotates, and a replay revokes the family", async () => {
    const { tokens } = await bed.signIn({ realmId, userId, orgId: orgA });
    assert.match(tokens.refreshToken, /^srt_[A-Za-z0-9_-]{43}$/);
    const res = await app.request("/auth/refresh", json({ refreshToken: tokens.refreshToken }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Cache-Control"), "no-store");
    const next = await res.json();
    assert.deepEqual(Object.keys(next).sort(), ["accessToken", "expiresIn", "refreshToken", "tokenType"]);
    assert.equal(next.tokenType, "Bearer");
    assert.equal(next.expiresIn, 600);
    assert.notEqual(next.refreshToken, tokens.refreshToken);
    const me = await (await app.request("/profile/me", { headers: bearer(next.accessToken) })).json();
    assert.equal(me.orgId, orgA, "the family keeps its organization");

    const replay = await app.request("/auth/refresh", json({ refreshToken: tokens.refreshToken }));
    assert.equal(replay.status, 401);
    assert.equal((await replay.json()).error.code, "invalid_refresh_token");
    assert.ok(bed.events.some((e) => e.kind === "token.refresh_reuse_detected" && e.userId === userId));
    const dead = await app.request("/auth/refresh", json({ refreshToken: next.refreshToken }));
    assert.equal(dead.status, 401, "the successor died with its family");
    for (const bad of ["srt_nope", "", "x".repeat(100)]) {
      assert.equal((await app.request("/auth/refresh", json({ refreshToken: bad }))).status, 401);
    }
    assert.equal((await app.request("/auth/refresh", { method: "POST" })).status, 401);
  });

  await t.step("POST /auth/refresh with orgId moves the family to another organization", async () => {
    const { tokens } = await bed.signIn({ realmId, userId, orgId: orgA });
    let res = await app.request(
      "/auth/refresh",
      json({ refreshToken: tokens.refreshToken, orgId: foreignOrg }),
    );
    assert.equal(res.status, 403);
    res = await app.request("/auth/refresh", json({ refreshToken: tokens.refreshToken, orgId: orgB }));
    const moved = await res.json();
    res = await app.request("/auth/refresh", json({ refreshToken: moved.refreshToken }));
    const again = await res.json();
    const me = await (await app.request("/profile/me", { headers: bearer(again.accessToken) })).json();
    assert.equal(me.orgId, orgB);
  });

  await t.step("idle and absolute session timeouts end refreshing", async () => {
    const idle = await bed.signIn({ realmId, userId });
    clock.advance(bed.config.sessions.idleTimeoutSeconds * 1000);
    assert.equal(
      (await app.request("/auth/refresh", json({ refreshToken: idle.tokens.refreshToken }))).status,
      401,
    );

    let current = (await bed.signIn({ realmId, userId })).tokens.refreshToken;
    const step = bed.config.sessions.idleTimeoutSeconds * 1000 - 1000;
    let elapsed = 0;
    while (elapsed + step < bed.config.sessions.absoluteTimeoutSeconds * 1000) {
      clock.advance(step);
      elapsed += step;
      const res = await app.request("/auth/refresh", json({ refreshToken: current }));
      assert.equal(res.status, 200, "activity keeps the session alive");
      current = (await res.json()).refreshToken;
    }
    clock.advance(bed.config.sessions.absoluteTimeoutSeconds * 1000 - elapsed);
    assert.equal((await app.request("/auth/refresh", json({ refreshToken: current }))).status, 401);
  });

  await t.step("sessions: list, remote logout, 404 alike for another user's and an unknown id", async () => {
    const other = await seed.user(realmId);
    const mine1 = await bed.signIn({
      realmId,
      userId: other,
      deviceDescription: "laptop",
      ipAddress: "198.51.100.1",
    });
    const mine2 = await bed.signIn({ realmId, userId: other, deviceDescription: "phone" });
    const someoneElse = await bed.signIn({ realmId, userId });
    const headers = bearer(mine1.tokens.accessToken);
    let res = await app.request("/profile/sessions", { headers });
    const { sessions } = await res.json();
    assert.deepEqual(
      sessions.map((s: { id: string }) => s.id).sort(),
      [mine1.session.id, mine2.session.id].sort(),
    );
    const current = sessions.find((s: { current: boolean }) => s.current);
    assert.equal(current.id, mine1.session.id);
    assert.equal(current.deviceDescription, "laptop");
    assert.equal(current.ipAddress, "198.51.100.1");

    const foreign = await app.request(`/profile/sessions/${someoneElse.session.id}`, {
      method: "DELETE",
      headers,
    });
    const unknown = await app.request(`/profile/sessions/${uuid()}`, { method: "DELETE", headers });
    const garbage = await app.request(`/profile/sessions/not-an-id`, { method: "DELETE", headers });
    assert.equal(foreign.status, 404);
    assert.equal(unknown.status, 404);
    assert.equal(garbage.status, 404);
    const [a, b] = [await foreign.json(), await unknown.json()];
    assert.equal(a.error.code, b.error.code);
    assert.equal(a.error.message, b.error.message);

    res = await app.request(`/profile/sessions/${mine2.session.id}`, { method: "DELETE", headers });
    assert.equal(res.status, 204);
    assert.equal(
      (await app.request("/auth/refresh", json({ refreshToken: mine2.tokens.refreshToken }))).status,
      401,
    );
    res = await app.request("/profile/sessions", { headers });
    assert.equal((await res.json()).sessions.length, 1);
    const again = await app.request(`/profile/sessions/${mine2.session.id}`, { method: "DELETE", headers });
    assert.equal(again.status, 404);
  });

  await t.step("logout and logout-all", async () => {
    const other = await seed.user(realmId);
    const s1 = await bed.signIn({ realmId, userId: other });
    const s2 = await bed.signIn({ realmId, userId: other });
    const s3 = await bed.signIn({ realmId, userId: other });
    let res = await app.request("/auth/logout", { method: "POST", headers: bearer(s1.tokens.accessToken) });
    assert.equal(res.status, 204);
    assert.equal(
      (await app.request("/auth/refresh", json({ refreshToken: s1.tokens.refreshToken }))).status,
      401,
    );
    assert.equal(
      (await app.request("/auth/refresh", json({ refreshToken: s2.tokens.refreshToken }))).status,
      200,
    );

    assert.equal((await app.request("/auth/logout-all", { method: "POST" })).status, 401);
    res = await app.request("/auth/logout-all", { method: "POST", headers: bearer(s3.tokens.accessToken) });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { sessionsEnded: 2 });
    const listed = await app.request("/profile/sessions", { headers: bearer(s3.tokens.accessToken) });
    assert.equal(listed.status, 401, "the caller's own session ended too");
    assert.deepEqual(await bed.storage.sessions.listActiveForUser(other), []);
  });

  await t.step("ending every session of a subject is one call", async () => {
    const other = await seed.user(realmId);
    const a = await bed.signIn({ realmId, userId: other });
    const b = await bed.signIn({ realmId, userId: other });
    assert.equal(await bed.auth.sessions.logoutAll(other), 2);
    for (const s of [a, b]) {
      assert.equal(
        (await app.request("/auth/refresh", json({ refreshToken: s.tokens.refreshToken }))).status,
        401,
      );
    }
  });

  await t.step("/profile/me carries the impersonation banner when act is present", async () => {
    const admin = await seed.user(realmId);
    const impersonationId = randomUuid(bed.random);
    const expiresAt = new Date(clock.now() + 5 * 60_000);
    await bed.storage.impersonations.create({
      id: impersonationId,
      realmId,
      actorId: admin,
      targetId: userId,
      reason: "support ticket 42",
      consentRequired: false,
      expiresAt,
    });
    const { tokens } = await bed.signIn({
      realmId,
      userId,
      impersonation: { actorId: admin, impersonationId, expiresAt },
    });
    assert.equal(tokens.expiresIn, 300, "the impersonation window caps the token");
    const me = await (await app.request("/profile/me", { headers: bearer(tokens.accessToken) })).json();
    assert.equal(me.id, userId);
    assert.deepEqual(me.impersonation, {
      impersonationId,
      actor: { id: admin, email: `${admin}@example.test`, displayName: null },
      expiresAt: expiresAt.toISOString(),
    });
    const refreshed = await (await app.request("/auth/refresh", json({ refreshToken: tokens.refreshToken })))
      .json();
    const payload = JSON.parse(
      atob(refreshed.accessToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
    );
    assert.deepEqual(payload.act, { sub: admin, imp: impersonationId });
    clock.advance(5 * 60_000);
    assert.equal(
      (await app.request("/auth/refresh", json({ refreshToken: refreshed.refreshToken }))).status,
      401,
      "no refresh past the impersonation window",
    );
  });

  await t.step("JWKS: default realm and per realm, with cache headers; unknown realm 404", async () => {
    let res = await app.request("/.well-known/jwks.json");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Cache-Control"), "public, max-age=300");
    const etag = res.headers.get("ETag")!;
    const jwks = await res.json();
    const primary = await bed.auth.keys.signingKey(realmId);
    assert.deepEqual(jwks.keys, [primary.publicJwk]);
    assert.equal(jwks.keys[0].d, undefined, "never a private member");
    res = await app.request(`/realms/${realmId}/.well-known/jwks.json`);
    assert.deepEqual(await res.json(), jwks);
    res = await app.request("/.well-known/jwks.json", { headers: { "If-None-Match": etag } });
    assert.equal(res.status, 304);
    assert.equal((await app.request(`/realms/${uuid()}/.well-known/jwks.json`)).status, 404);
    assert.equal((await app.request(`/realms/..%2F..%2Fetc/.well-known/jwks.json`)).status, 404);

    const { retiredKid, primaryKid } = await bed.auth.keys.rotate(realmId);
    res = await app.request("/.well-known/jwks.json");
    assert.deepEqual((await res.json()).keys.map((k: { kid: string }) => k.kid), [primaryKid, retiredKid]);
  });

  await t.step("GET /readyz checks the key ring", async () => {
    let res = await app.request("/readyz");
    assert.deepEqual(
      await res.json(),
      { status: "ready", checks: ["key_ring"] },
      "names only without a token",
    );
    const metricsToken = "metrics-token-0123456789abcdef0123456789";
    const empty = await bed.appWith({ SVC_METRICS_TOKEN: metricsToken });
    await bed.database.db.deleteFrom("signing_keys").where("realm_id", "=", realmId).execute();
    res = await empty.app.request("/readyz", { headers: { Authorization: `Bearer ${metricsToken}` } });
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      status: "not_ready",
      checks: { key_ring: { status: "fail", error: "no primary signing key" } },
    });
    await bed.auth.keys.ensurePrimary(realmId);
    assert.equal((await empty.app.request("/readyz")).status, 200);
    assert.equal(await bed.auth.ensureKeys(), 0);
  });

  await t.step("API keys and service accounts are presented on requests", async () => {
    const { token, key } = await createApiKey(bed.storage.apiKeys, bed.random, {
      realmId,
      ownerKind: "User",
      ownerId: userId,
      name: "ci",
    });
    assert.match(token, /^sak_/);
    let res = await app.request("/profile/permissions", { headers: bearer(token) });
    assert.equal(res.status, 200, "an API key acts as its owner");
    assert.equal(
      (await app.request("/profile/me", { headers: bearer(token) })).status,
      403,
      "not a user session",
    );
    await bed.storage.apiKeys.revoke(key.id);
    res = await app.request("/profile/permissions", { headers: bearer(token) });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "invalid_token");

    const { secret, account } = await createServiceAccount(bed.storage.serviceAccounts, bed.random, {
      realmId,
      key: "deployer",
      displayName: "Deployer",
    });
    const basic = (user: string, pass: string) => ({ Authorization: `Basic ${btoa(`${user}:${pass}`)}` });
    res = await app.request("/profile/permissions", { headers: basic("deployer", secret) });
    // Service accounts are snapshot subjects (their own role assignments): none yet, nothing allowed.
    assert.equal(res.status, 200, "authenticated");
    assert.deepEqual((await res.json()).permissions, []);
    const realmName = (await bed.storage.realms.get(realmId))!.name;
    res = await app.request("/profile/permissions", { headers: basic(`${realmName}/deployer`, secret) });
    assert.equal(res.status, 200);
    res = await app.request("/profile/permissions", { headers: basic("deployer", "sas_wrong") });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "invalid_credentials");

    const rotated = await rotateServiceAccountSecret(
      bed.storage.serviceAccounts,
      bed.random,
      account.id,
      60_000,
    );
    assert.equal(
      (await app.request("/profile/permissions", { headers: basic("deployer", secret) })).status,
      200,
    );
    assert.equal(
      (await app.request("/profile/permissions", { headers: basic("deployer", rotated!.secret) })).status,
      200,
    );
    clock.advance(60_000);
    assert.equal(
      (await app.request("/profile/permissions", { headers: basic("deployer", secret) })).status,
      401,
    );
    assert.equal(
      (await app.request("/profile/permissions", { headers: basic("deployer", rotated!.secret) })).status,
      200,
    );
  });

  await bed.close();
});
