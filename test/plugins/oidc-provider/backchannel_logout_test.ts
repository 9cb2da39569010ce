/**
 * OIDC Back-Channel Logout 1.0: each way a session ends sends a logout token to the clients that
 * had tokens in it, through the provider's outbox and svc's outbound guard, to a receiver on
 * loopback that verifies the token with jose against the provider's published JWKS (as an RP
 * would); retries after a failure; discovery and registration.
 */
import { strict as assert } from "node:assert";
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { oidcProviderPlugin } from "../../../plugins/oidc-provider/mod.ts";
import { BACKCHANNEL_LOGOUT_EVENT, SWEEP_OVERLAP_MS } from "../../../plugins/oidc-provider/backchannel.ts";
import { oidcAuthorizationCode, pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

/** A relying party's back-channel endpoint on loopback; answers `next` statuses, then 200. */
function receiver() {
  const received: string[] = [];
  const statuses: number[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const form = new URLSearchParams(await req.text());
    received.push(form.get("logout_token") ?? "");
    const status = statuses.shift() ?? 200;
    return new Response(null, { status, headers: { "Cache-Control": "no-store" } });
  });
  const url = (path: string) => `http://127.0.0.1:${server.addr.port}${path}`;
  return { received, statuses, url, close: () => server.shutdown() };
}

Deno.test("oidc-provider: back-channel logout on every way a session ends", async (t) => {
  const rp = receiver();
  const plugin = oidcProviderPlugin({ backchannelWorker: false, backchannel: { retryDelaysMs: [1_000] } });
  const beds = await pluginBed([plugin], {
    SVC_PLUGINS: "oidc-provider",
    SVC_OUTBOUND_ALLOW_PRIVATE: "127.0.0.1",
  });
  try {
    const { bed, realmId } = beds.admin;
    const outbox = plugin.backchannelLogout()!;
    const register = async (clientId: string, body: Record<string, unknown>) => {
      const res = await beds.request("POST", "/svc-admin/oidc/clients", {
        body: {
          clientId,
          clientType: "confidential",
          redirectUris: [REDIRECT],
          allowedScopes: ["openid", "offline_access"],
          ...body,
        },
      });
      assert.equal(res.status, 201, await res.clone().text());
      return await res.json() as { clientSecret: string; id: string } & Record<string, unknown>;
    };
    const app = await register("rp", {
      backchannelLogoutUri: rp.url("/bcl"),
      backchannelLogoutSessionRequired: true,
    });
    assert.equal(app.backchannelLogoutUri, rp.url("/bcl"));
    assert.equal(app.backchannelLogoutSessionRequired, true);
    // A client without a back-channel URI gets nothing.
    const quiet = await register("quiet", {});

    await t.step("discovery advertises back-channel logout with sid", async () => {
      const meta = await (await beds.app.request("/.well-known/openid-configuration")).json();
      assert.equal(meta.backchannel_logout_supported, true);
      assert.equal(meta.backchannel_logout_session_supported, true);
    });

    await t.step("registration refuses an unguarded or malformed URI", async () => {
      for (const uri of ["http://10.1.2.3/bcl", "https://rp.example.test/bcl#x", "not a url"]) {
        const res = await beds.request("POST", "/svc-admin/oidc/clients", {
          body: {
            clientId: "bad",
            clientType: "confidential",
            redirectUris: [REDIRECT],
            backchannelLogoutUri: uri,
          },
        });
        assert.equal(res.status, 400, uri);
      }
    });

    const jwks = createLocalJWKSet(
      await (await beds.app.request("/.well-known/jwks.json")).json() as JSONWebKeySet,
    );
    let users = 0;
    /** A new user signed in (browser session), with tokens for `rp` and `quiet` from that session. */
    const signedIn = async () => {
      const user = await bed.storage.users.create({ realmId, email: `bcl${users++}@example.test` });
      const browser = await bed.auth.sessions.signIn({
        realmId,
        userId: user.id,
        orgId: null,
        mfa: "Password",
      });
      const cookie = `svc_at=${browser.tokens.accessToken}`;
      const tokens: Record<string, { refresh_token: string; id_token: string }> = {};
      for (const [clientId, secret] of [["rp", app.clientSecret], ["quiet", quiet.clientSecret]]) {
        const query = new URLSearchParams({
          response_type: "code",
          client_id: clientId,
          redirect_uri: REDIRECT,
          scope: "openid offline_access",
          state: "s",
          nonce: "n",
          prompt: "consent",
        });
        const res = await beds.app.request(`/oidc/authorize?${query}`, { headers: { Cookie: cookie } });
        assert.equal(res.status, 303, await res.clone().text());
        const code = new URL(res.headers.get("Location")!).searchParams.get("code");
        assert.ok(code, res.headers.get("Location")!);
        const exchanged = await beds.app.request("/oidc/token", {
          method: "POST",
          headers: FORM,
          body: new URLSearchParams({
            grant_type: "authorization_code",
            code,
            redirect_uri: REDIRECT,
            client_id: clientId,
            client_secret: secret,
          }).toString(),
        });
        assert.equal(exchanged.status, 200, await exchanged.clone().text());
        tokens[clientId] = await exchanged.json();
      }
      const idToken = JSON.parse(
        atob(tokens.rp.id_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
      );
      assert.equal(idToken.sid, browser.session.id);
      return { userId: user.id, browser, tokens };
    };

    /** Delivers the outbox; the receiver must have got exactly one valid token for (user, sid). */
    const expectLogout = async (userId: string, sid: string) => {
      const before = rp.received.length;
      const attempts = await outbox.drain();
      assert.equal(attempts.length, 1, JSON.stringify(attempts));
      assert.equal(attempts[0].status, "delivered");
      assert.equal(rp.received.length, before + 1);
      const token = rp.received.at(-1)!;
      assert.equal(decodeProtectedHeader(token).typ, "logout+jwt");
      const { payload } = await jwtVerify(token, jwks, {
        issuer: bed.config.server.baseUrl,
        audience: "rp",
        typ: "logout+jwt",
        currentDate: new Date(bed.clock.now()),
        requiredClaims: ["iat", "exp", "jti"],
      });
      assert.equal(payload.sub, userId);
      assert.equal(payload.sid, sid);
      assert.deepEqual(payload.events, { [BACKCHANNEL_LOGOUT_EVENT]: {} });
      assert.equal("nonce" in payload, false);
      assert.ok(payload.exp! - payload.iat! <= 120);
      // Ending more sessions of the same sid later sends nothing again.
      assert.equal((await outbox.drain()).length, 0);
    };

    await t.step("user logout (POST /auth/logout)", async () => {
      const { userId, browser } = await signedIn();
      const res = await beds.app.request("/auth/logout", {
        method: "POST",
        headers: { Authorization: `Bearer ${browser.tokens.accessToken}` },
      });
      assert.equal(res.status, 204);
      await expectLogout(userId, browser.session.id);
    });

    await t.step("RP-initiated logout with an id_token_hint", async () => {
      const { userId, browser, tokens } = await signedIn();
      const res = await beds.app.request(
        `/oidc/logout?${new URLSearchParams({ id_token_hint: tokens.rp.id_token })}`,
      );
      assert.ok(res.status === 200 || res.status === 303, String(res.status));
      await expectLogout(userId, browser.session.id);
    });

    await t.step("password reset", async () => {
      const { userId, browser } = await signedIn();
      const stamp = await bed.storage.users.credentialStamp(userId);
      const { token } = await bed.auth.tokens.mint("pwreset+svc", {
        realm: realmId,
        sub: userId,
        stamp: stamp!,
      });
      const res = await beds.app.request("/auth/password/reset", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token, password: "a new long passphrase 42" }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      await expectLogout(userId, browser.session.id);
    });

    await t.step("suspension by an administrator", async () => {
      const { userId, browser } = await signedIn();
      const res = await beds.request("POST", `/svc-admin/users/${userId}/suspend`, {
        body: { reason: "test" },
      });
      assert.equal(res.status, 200, await res.clone().text());
      await expectLogout(userId, browser.session.id);
    });

    await t.step("an administrator ends the client's session", async () => {
      const { userId, browser, tokens } = await signedIn();
      const record = await bed.auth.sessions.refreshRecord(tokens.rp.refresh_token);
      const res = await beds.request("DELETE", `/svc-admin/users/${userId}/sessions/${record!.sessionId}`);
      assert.equal(res.status, 204, await res.clone().text());
      await expectLogout(userId, browser.session.id);
    });

    await t.step("an administrator ends the browser session", async () => {
      const { userId, browser } = await signedIn();
      const res = await beds.request("DELETE", `/svc-admin/users/${userId}/sessions/${browser.session.id}`);
      assert.equal(res.status, 204, await res.clone().text());
      await expectLogout(userId, browser.session.id);
    });

    await t.step("refresh token reuse detection", async () => {
      const { userId, browser, tokens } = await signedIn();
      const refresh = (token: string) =>
        beds.app.request("/oidc/token", {
          method: "POST",
          headers: FORM,
          body: new URLSearchParams({
            grant_type: "refresh_token",
            refresh_token: token,
            client_id: "rp",
            client_secret: app.clientSecret,
          }).toString(),
        });
      assert.equal((await refresh(tokens.rp.refresh_token)).status, 200);
      assert.equal((await outbox.drain()).length, 0);
      assert.equal((await refresh(tokens.rp.refresh_token)).status, 400);
      await expectLogout(userId, browser.session.id);
    });

    await t.step("erasure", async () => {
      const { userId, browser } = await signedIn();
      const res = await beds.request("POST", `/svc-admin/users/${userId}/erase`, { body: {} });
      assert.equal(res.status, 200, await res.clone().text());
      await expectLogout(userId, browser.session.id);
    });

    await t.step("a failed delivery is retried on schedule, then the next attempt delivers", async () => {
      const { userId, browser } = await signedIn();
      rp.statuses.push(503);
      await bed.auth.sessions.logout(browser.session.id);
      const first = await outbox.drain();
      assert.deepEqual(first.map((a) => [a.status, a.statusCode]), [["pending", 503]]);
      assert.equal((await outbox.drain()).length, 0, "not due before its delay");
      bed.clock.advance(1_000);
      await expectLogout(userId, browser.session.id);
    });

    await t.step("after the last retry the delivery is dead", async () => {
      const { browser } = await signedIn();
      rp.statuses.push(500, 500);
      await bed.auth.sessions.logout(browser.session.id);
      assert.equal((await outbox.drain())[0].status, "pending");
      bed.clock.advance(1_000);
      assert.equal((await outbox.drain())[0].status, "dead");
      bed.clock.advance(10_000);
      assert.equal((await outbox.drain()).length, 0);
      assert.ok(bed.events.some((e) => e.kind === "oidc.backchannel_logout_failed"));
    });

    await t.step("an end the listener never heard (a crash after the commit) is swept up", async () => {
      const { userId, browser } = await signedIn();
      // The ending transaction without its announcement: what a process that died right after
      // the commit leaves behind.
      assert.equal(await bed.storage.sessions.revoke(browser.session.id), true);
      assert.equal((await outbox.drain()).length, 0, "nothing queued until the next sweep");
      bed.clock.advance(60_000);
      await expectLogout(userId, browser.session.id);
    });

    await t.step("ends while no worker ran are caught up from the watermark after a restart", async () => {
      await outbox.stop();
      const { userId, browser } = await signedIn();
      await bed.auth.sessions.logout(browser.session.id);
      // Longer down than the sweep's overlap: only the stored watermark reaches back to the end.
      bed.clock.advance(SWEEP_OVERLAP_MS + 5 * 60_000);
      outbox.start(false);
      await expectLogout(userId, browser.session.id);
      // The watermark moved: a later sweep queues nothing more.
      bed.clock.advance(60_000);
      assert.equal(await outbox.sweep(), 0);
    });
  } finally {
    await beds.close();
    await rp.close();
  }
});

/**
 * A Postgres bed with a client `rp` whose back-channel URI is `rp`'s receiver, and one user signed
 * in `count` times, each browser session with tokens for `rp`: the browser session ids.
 */
async function postgresBrowsers(rp: ReturnType<typeof receiver>, email: string, count: number) {
  const plugin = oidcProviderPlugin({ backchannelWorker: false });
  const beds = await pluginBed(
    [plugin],
    { SVC_PLUGINS: "oidc-provider", SVC_OUTBOUND_ALLOW_PRIVATE: "127.0.0.1" },
    { postgres: true },
  );
  try {
    const { bed, realmId } = beds.admin;
    const outbox = plugin.backchannelLogout()!;
    // The realm's first sweep sets its watermark (before any session ends).
    assert.equal(await outbox.sweep(), 0);
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: {
        clientId: "rp",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        backchannelLogoutUri: rp.url("/bcl"),
      },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const secret = (await created.json()).clientSecret as string;
    const user = await bed.storage.users.create({ realmId, email });
    const browsers: string[] = [];
    for (let i = 0; i < count; i++) {
      const { code, browserSessionId } = await oidcAuthorizationCode(beds, {
        userId: user.id,
        clientId: "rp",
        redirectUri: REDIRECT,
        scope: "openid",
      });
      const exchanged = await beds.app.request("/oidc/token", {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "rp",
          client_secret: secret,
        }).toString(),
      });
      assert.equal(exchanged.status, 200);
      browsers.push(browserSessionId);
    }
    return { beds, bed, outbox, userId: user.id, browsers };
  } catch (err) {
    await beds.close();
    throw err;
  }
}

/** The `sid`s of the logout tokens `rp` received. */
const receivedSids = (rp: ReturnType<typeof receiver>) =>
  rp.received.map((token) => JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).sid);

Deno.test("postgres: concurrent workers deliver each logout token once", async () => {
  const rp = receiver();
  const { beds, bed, outbox, userId, browsers } = await postgresBrowsers(rp, "race@example.test", 24);
  try {
    // One logout-all ends the 24 browser sessions and the 24 client sessions: 24 deliveries.
    assert.equal(await bed.auth.sessions.logoutAll(userId), 48);
    // Six workers claim at once on separate connections.
    const attempts = (await Promise.all(Array.from({ length: 6 }, () => outbox.runOnce()))).flat();
    attempts.push(...await outbox.drain());
    assert.equal(attempts.length, 24, "each delivery attempted once");
    assert.ok(attempts.every((a) => a.status === "delivered"));
    assert.equal(rp.received.length, 24);
    assert.deepEqual([...new Set(receivedSids(rp))].sort(), [...browsers].sort());
  } finally {
    await beds.close();
    await rp.close();
  }
});

Deno.test("postgres: concurrent sweeps queue each unheard end once", async () => {
  const rp = receiver();
  const { beds, bed, outbox, userId, browsers } = await postgresBrowsers(rp, "sweep@example.test", 12);
  try {
    // Ended in storage only (no announcement): 12 browser and 12 client sessions.
    assert.equal((await bed.storage.sessions.revokeAllForUser(userId)).length, 24);
    // Six instances' sweeps at once, on separate connections: each end queued once.
    const added = await Promise.all(Array.from({ length: 6 }, () => outbox.sweep()));
    assert.equal(added.reduce((a, b) => a + b, 0), 12, JSON.stringify(added));
    const attempts = await outbox.drain();
    assert.equal(attempts.length, 12);
    assert.ok(attempts.every((a) => a.status === "delivered"));
    assert.equal(rp.received.length, 12);
    assert.deepEqual([...new Set(receivedSids(rp))].sort(), [...browsers].sort());
  } finally {
    await beds.close();
    await rp.close();
  }
});
