/**
 * The refresh grace window raced through `/oidc/token` on real Postgres (separate connections),
 * for a client registered with `refreshTokenGraceSeconds` (issue 26), as a fast-check property:
 * any number of concurrent presentations of one refresh token (2 to 20, always 20 in the
 * examples), whether it is still unused (the racers rotate it) or was rotated up to the window's
 * length before, all answer 200 with the same successor; the family has one rotation (two rows),
 * stays alive and its successor is active. Every answer issued tokens, so every answer records an
 * `oidc.tokens_issued` event and webhook delivery: the rotation's own statement writes the one of
 * the rotation, the grace answers emit theirs (`refreshGrant`: no event came back from the
 * statement). Presented after the window, every racer is refused, the family is revoked once (the
 * `token.refresh_reuse_detected` events, one per detected replay, revoke its two tokens between
 * them), its session ends, no tokens are issued and the successor is refused.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { sql } from "kysely";
import { oidcProviderPlugin } from "../../../plugins/oidc-provider/mod.ts";
import { oidcAuthorizationCode, pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://app.example.test/cb";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const GRACE_SECONDS = 30;
const MAX_RACERS = 20;

Deno.test("oidc-provider: concurrent refreshes within and after a client's grace window (Postgres)", async () => {
  const beds = await pluginBed([oidcProviderPlugin({ backchannelWorker: false })], {
    SVC_PLUGINS: "oidc-provider",
  }, { postgres: true });
  try {
    const { bed, realmId } = beds.admin;
    const created = await beds.request("POST", "/svc-admin/oidc/clients", {
      body: {
        clientId: "tabs",
        clientType: "confidential",
        redirectUris: [REDIRECT],
        allowedScopes: ["openid", "offline_access"],
        refreshTokenGraceSeconds: GRACE_SECONDS,
      },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const secret = (await created.json()).clientSecret as string;
    await bed.storage.webhooks.createEndpoint({
      realmId,
      url: "https://hooks.example.test/svc",
      secret: "whsec_test_secret_for_the_grace_race_test",
      eventPatterns: ["oidc.*", "token.*"],
    });
    const user = await bed.storage.users.create({ realmId, email: "racer@example.test" });

    const token = (fields: Record<string, string>) =>
      beds.app.request("/oidc/token", {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ ...fields, client_id: "tabs", client_secret: secret }).toString(),
      });
    const refresh = (refreshToken: string) =>
      token({ grant_type: "refresh_token", refresh_token: refreshToken });
    const introspect = async (presented: string) => {
      const res = await beds.app.request("/oidc/introspect", {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ token: presented, client_id: "tabs", client_secret: secret }).toString(),
      });
      assert.equal(res.status, 200);
      return (await res.json()).active as boolean;
    };
    /** A code flow for the user: the refresh token of its exchange. */
    const start = async (): Promise<string> => {
      const { code } = await oidcAuthorizationCode(beds, {
        userId: user.id,
        clientId: "tabs",
        redirectUri: REDIRECT,
      });
      const exchanged = await token({ grant_type: "authorization_code", code, redirect_uri: REDIRECT });
      assert.equal(exchanged.status, 200, await exchanged.clone().text());
      return (await exchanged.json()).refresh_token as string;
    };
    const family = async (presented: string) => {
      const familyId = (await bed.auth.sessions.refreshRecord(presented))!.familyId;
      return await bed.database.db.selectFrom("refresh_tokens").selectAll().where("family_id", "=", familyId)
        .execute();
    };
    /** Events and webhook deliveries so far, once every fire-and-forget event was recorded. */
    const counts = async () => {
      await bed.settled();
      const rows = (await sql<{ event_kind: string; n: string }>`SELECT event_kind, count(*) AS n
        FROM webhook_deliveries GROUP BY event_kind`.execute(bed.database.db)).rows;
      const delivered = (kind: string) => Number(rows.find((row) => row.event_kind === kind)?.n ?? 0);
      return {
        issued: bed.events.filter((e) => e.kind === "oidc.tokens_issued").length,
        issuedDeliveries: delivered("oidc.tokens_issued"),
        reuse: bed.events.filter((e) => e.kind === "token.refresh_reuse_detected"),
        reuseDeliveries: delivered("token.refresh_reuse_detected"),
      };
    };

    type Phase = "unused" | "inside" | "outside";
    const windowMs = GRACE_SECONDS * 1000;
    const scenario = fc.oneof(
      fc.record({
        phase: fc.constant<Phase>("unused"),
        racers: fc.integer({ min: 2, max: MAX_RACERS }),
        delayMs: fc.constant(0),
      }),
      fc.record({
        phase: fc.constant<Phase>("inside"),
        racers: fc.integer({ min: 2, max: MAX_RACERS }),
        // The window includes its last millisecond (`now - usedAt > window` is outside).
        delayMs: fc.integer({ min: 0, max: windowMs }),
      }),
      fc.record({
        phase: fc.constant<Phase>("outside"),
        racers: fc.integer({ min: 2, max: MAX_RACERS }),
        delayMs: fc.integer({ min: windowMs + 1, max: 4 * windowMs }),
      }),
    );

    await fc.assert(
      fc.asyncProperty(scenario, async ({ phase, racers, delayMs }) => {
        const first = await start();
        let successor: string | null = null;
        if (phase !== "unused") {
          const rotated = await refresh(first);
          assert.equal(rotated.status, 200);
          successor = (await rotated.json()).refresh_token;
          bed.clock.advance(delayMs);
        }
        const before = await counts();
        const answers = await Promise.all(
          Array.from({ length: racers }, async () => {
            const res = await refresh(first);
            return { status: res.status, body: await res.json() };
          }),
        );
        const after = await counts();
        const outcome = JSON.stringify(
          answers.map((a) => a.status === 200 ? 200 : `${a.status} ${a.body.error}`),
        );
        const rows = await family(first);
        const records = await Promise.all(rows.map((row) => bed.storage.sessions.getActive(row.session_id)));

        if (phase !== "outside") {
          assert.deepEqual(answers.map((a) => a.status), Array(racers).fill(200), outcome);
          const successors = new Set(answers.map((a) => a.body.refresh_token));
          assert.equal(successors.size, 1, "one successor for every racer");
          const [answered] = successors;
          if (successor !== null) assert.equal(answered, successor, "the successor of the earlier rotation");
          assert.notEqual(answered, first);
          assert.ok(answers.every((a) => a.body.access_token && a.body.id_token));
          assert.equal(rows.length, 2, "one rotation: the presented token and its successor");
          assert.ok(rows.every((row) => row.revoked_at === null), "the family is alive");
          assert.ok(records.every((session) => session !== null), "its session too");
          assert.equal(await introspect(answered), true, "the successor is active");
          assert.equal(await introspect(answers[0].body.access_token), true);
          // One event and one delivery per answer: each issued an access token and an ID token.
          assert.equal(after.issued - before.issued, racers);
          assert.equal(after.issuedDeliveries - before.issuedDeliveries, racers);
          assert.equal(after.reuse.length, before.reuse.length, "no reuse detected");
          // The successor still rotates (and is then spent, so the family is left to the sweeper).
          const next = await refresh(answered);
          assert.equal(next.status, 200, await next.clone().text());
          assert.notEqual((await next.json()).refresh_token, answered);
        } else {
          assert.ok(answers.every((a) => a.status === 400 && a.body.error === "invalid_grant"), outcome);
          assert.equal(rows.length, 2, "nothing rotated after the window");
          assert.ok(rows.every((row) => row.revoked_at !== null), "the family is revoked");
          assert.ok(records.every((session) => session === null), "its session ended");
          assert.equal(after.issued, before.issued, "no tokens issued");
          assert.equal(after.issuedDeliveries, before.issuedDeliveries);
          // Every racer's presentation is a detected replay; the family was revoked once between
          // them: their `revoked` counts add up to its two tokens.
          const detected = after.reuse.slice(before.reuse.length);
          assert.equal(detected.length, racers);
          assert.equal(after.reuseDeliveries - before.reuseDeliveries, racers);
          const familyId = rows[0].family_id;
          assert.ok(detected.every((e) => e.data.familyId === familyId));
          assert.equal(detected.reduce((sum, e) => sum + Number(e.data.revoked), 0), 2);
          assert.equal(await introspect(successor!), false, "the successor is inactive");
          const late = await refresh(successor!);
          assert.equal(late.status, 400, "the successor is refused");
          assert.equal((await late.json()).error, "invalid_grant");
        }
      }),
      {
        numRuns: 15,
        examples: [
          [{ phase: "unused", racers: MAX_RACERS, delayMs: 0 }],
          [{ phase: "inside", racers: MAX_RACERS, delayMs: windowMs - 1_000 }],
          [{ phase: "inside", racers: MAX_RACERS, delayMs: windowMs }],
          [{ phase: "outside", racers: MAX_RACERS, delayMs: windowMs + 1 }],
          [{ phase: "outside", racers: MAX_RACERS, delayMs: windowMs + 1_000 }],
        ],
      },
    );
  } finally {
    await beds.close();
  }
});
