/**
 * The statements of an OIDC refresh grant on Postgres (issues 26 and 29), counted where kysely
 * hands each statement to the driver (tracing spans; `BEGIN` and `COMMIT` included): once the
 * client is cached, a `refresh_token` grant through `/oidc/token` is one statement and no
 * transaction, like svc's own `/auth/refresh`: the token's realm, client and grant row, the
 * client's row version, the rotation, the session's touch, the user's status and the
 * `oidc.tokens_issued` webhook delivery. Before, it was 4 statements and a separate event write
 * (client read, refresh record read, grant resources read, rotation, subscribers read).
 *
 * Then what the cache must never do: honour a suspended client, a rotated secret or a deleted
 * client for one more grant (the statement checks the client's version), spend the token of a
 * client that no longer authenticates, or lose the event.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { sha256Hex } from "../../../core/digest.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { oidcProviderPlugin } from "../../../plugins/oidc-provider/mod.ts";
import { oidcAuthorizationCode, pluginBed } from "../../support/plugins.ts";
import { recordSpans, stopRecording } from "../../support/spans.ts";

const MAX_STATEMENTS = 1;
const MAX_TRANSACTIONS = 0;
const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

Deno.test("oidc refresh statements: one statement per refresh grant, the client's changes honoured at once", async (t) => {
  // The back-channel logout worker polls its outbox in the background; its statements would land in
  // the counted window on a slow machine, so this test runs without it (no session ends here).
  const plugin = oidcProviderPlugin({ backchannelWorker: false });
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" }, { postgres: true });
  try {
    const { bed, realmId } = beds.admin;
    (bed.random as { bytes: (length: number) => Uint8Array }).bytes = cryptoRandom.bytes;
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: {
        clientId: "lean",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        allowedScopes: ["openid", "offline_access"],
        tokenEndpointAuthMethod: "client_secret_basic",
      },
    });
    assert.equal(created.status, 201);
    const client = await created.json();
    let basic = `Basic ${btoa(`lean:${client.clientSecret}`)}`;
    const user = await bed.storage.users.create({ realmId, email: "lean@example.test" });
    await bed.storage.webhooks.createEndpoint({
      realmId,
      url: "https://hooks.example.test/svc",
      secret: "whsec_test_secret_for_the_statement_test",
      eventPatterns: ["oidc.*"],
    });
    // `%` is a literal character in a pattern (only `*` is a wildcard), as everywhere deliveries
    // are matched: this endpoint hears nothing, so each grant queues exactly one delivery.
    await bed.storage.webhooks.createEndpoint({
      realmId,
      url: "https://hooks.example.test/literal",
      secret: "whsec_test_secret_for_the_literal_pattern",
      eventPatterns: ["oidc.%"],
    });

    const chain = async (): Promise<string> => {
      const { code } = await oidcAuthorizationCode(beds, {
        userId: user.id,
        clientId: "lean",
        redirectUri: REDIRECT,
      });
      const tokens = await beds.app.request("/oidc/token", {
        method: "POST",
        headers: { ...FORM, Authorization: basic },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT })
          .toString(),
      });
      assert.equal(tokens.status, 200);
      return (await tokens.json()).refresh_token;
    };
    const refresh = (token: string) =>
      beds.app.request("/oidc/token", {
        method: "POST",
        headers: { ...FORM, Authorization: basic },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token }).toString(),
      });
    const payloads = async () =>
      (await sql<{ payload: string }>`SELECT payload FROM webhook_deliveries
        WHERE event_kind = 'oidc.tokens_issued'`.execute(bed.database.db)).rows.map((row) => row.payload);
    const deliveries = async () => (await payloads()).length;

    let token = await chain();
    const warm = await refresh(token); // the client is cached from here
    assert.equal(warm.status, 200);
    token = (await warm.json()).refresh_token;

    await t.step("a refresh grant is one statement, its event written by it", async () => {
      // The warm-up's events may still be on their way: they must not fall into this step's window.
      await bed.settled();
      const earlier = new Set(await payloads());
      const before = earlier.size;
      bed.events.length = 0;
      const spans = recordSpans();
      let statements;
      let body;
      try {
        const res = await refresh(token);
        assert.equal(res.status, 200);
        body = await res.json();
        statements = spans.filter((s) => s.attributes["db.system.name"] === "postgresql");
      } finally {
        stopRecording();
      }
      const list = statements.map((s) => `${s.name} ${String(s.attributes["db.query.text"]).slice(0, 70)}`)
        .join("\n");
      assert.ok(statements.length <= MAX_STATEMENTS, `${statements.length} statements:\n${list}`);
      assert.ok(statements.filter((s) => s.name === "BEGIN").length <= MAX_TRANSACTIONS, list);
      assert.ok(body.id_token, "the ID token is answered by default");
      token = body.refresh_token;
      assert.equal(await deliveries(), before + 1, "the webhook delivery was queued by the statement");
      const [payload] = (await payloads()).filter((text) => !earlier.has(text));
      const parsed = JSON.parse(payload);
      assert.equal(parsed.kind, "oidc.tokens_issued");
      assert.equal(parsed.userId, user.id);
      assert.deepEqual(parsed.data, {
        clientId: "lean",
        grantType: "refresh_token",
        refresh: true,
        scopes: ["openid", "offline_access"],
      });
      const announced = bed.events.filter((e) => e.kind === "oidc.tokens_issued");
      assert.equal(announced.length, 1, "announced once, after the statement");
      assert.deepEqual(announced[0].data, parsed.data);
    });

    await t.step("a suspended client is refused at once, and its token is not spent", async () => {
      await bed.storage.clients.update(client.id, { suspended: true });
      const refused = await refresh(token);
      assert.equal(refused.status, 401);
      assert.equal((await refused.json()).error, "invalid_client");
      await bed.storage.clients.update(client.id, { suspended: false });
      const again = await refresh(token);
      assert.equal(again.status, 200, "the token was not spent by the refused request");
      token = (await again.json()).refresh_token;
    });

    await t.step("an unknown token from a suspended (cached) client is invalid_client", async () => {
      await bed.storage.clients.update(client.id, { suspended: true });
      const res = await refresh("srt_" + "x".repeat(43));
      assert.equal(res.status, 401);
      await res.body?.cancel();
      await bed.storage.clients.update(client.id, { suspended: false });
    });

    await t.step("a rotated secret: the old one is refused at once, the new one works", async () => {
      const fresh = "soc_rotated_secret_of_the_statement_test_0123456789";
      await bed.storage.clients.update(client.id, {
        secretHash: sha256Hex(fresh),
        secretAlgorithm: "sha256",
      });
      const old = await refresh(token);
      assert.equal(old.status, 401);
      await old.body?.cancel();
      basic = `Basic ${btoa(`lean:${fresh}`)}`;
      const res = await refresh(token);
      assert.equal(res.status, 200, "the refused request did not spend the token");
      token = (await res.json()).refresh_token;
    });

    await t.step("20 concurrent refreshes of one token: one wins, the replays end the family", async () => {
      const results = await Promise.all(Array.from({ length: 20 }, () => refresh(token)));
      const bodies = await Promise.all(results.map((res) => res.json()));
      const won = results.filter((res) => res.status === 200);
      assert.equal(won.length, 1, JSON.stringify(bodies.filter((b) => b.error !== "invalid_grant")));
      assert.ok(results.every((res) => res.status === 200 || res.status === 400));
      const successor = bodies.find((b) => b.refresh_token !== undefined).refresh_token as string;
      // Reuse detection ran: the winner's successor is revoked with the family.
      const after = await refresh(successor);
      assert.equal(after.status, 400);
      assert.equal((await after.json()).error, "invalid_grant");
      token = await chain();
    });

    await t.step("idTokenOnRefresh: false answers no ID token on refresh", async () => {
      const other = await beds.request("POST", "/svc-admin/oidc/clients", {
        body: {
          clientId: "lean-no-id",
          clientType: "confidential",
          redirectUris: [REDIRECT],
          allowedScopes: ["openid", "offline_access"],
          idTokenOnRefresh: false,
        },
      });
      assert.equal(other.status, 201);
      const json = await other.json();
      assert.equal(json.idTokenOnRefresh, false);
      basic = `Basic ${btoa(`lean-no-id:${json.clientSecret}`)}`;
      const browser = await bed.auth.sessions.signIn({
        realmId,
        userId: user.id,
        orgId: null,
        mfa: "Password",
      });
      const query = new URLSearchParams({
        response_type: "code",
        client_id: "lean-no-id",
        redirect_uri: REDIRECT,
        scope: "openid offline_access",
        state: "s",
      });
      const res = await beds.app.request(`/oidc/authorize?${query}`, {
        headers: { Cookie: `svc_at=${browser.tokens.accessToken}` },
      });
      const code = new URL(res.headers.get("Location")!).searchParams.get("code")!;
      const exchanged = await beds.app.request("/oidc/token", {
        method: "POST",
        headers: { ...FORM, Authorization: basic },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT })
          .toString(),
      });
      const first = await exchanged.json();
      assert.ok(first.id_token, "the code exchange still answers the ID token");
      const refreshed = await refresh(first.refresh_token);
      assert.equal(refreshed.status, 200);
      const body = await refreshed.json();
      assert.equal(body.id_token, undefined);
      assert.ok(body.access_token);
    });

    await t.step("a deleted client's token is refused (unknown client)", async () => {
      basic = `Basic ${btoa("lean:soc_rotated_secret_of_the_statement_test_0123456789")}`;
      await bed.storage.clients.delete(client.id);
      const res = await refresh(token);
      assert.equal(res.status, 401);
      await res.body?.cancel();
    });
  } finally {
    await beds.close();
  }
});
