/**
 * The statements of a `client_credentials` grant on Postgres (issue 29), counted where kysely hands
 * each statement to the driver (tracing spans; `BEGIN` and `COMMIT` included): once the service
 * account is cached, a grant is one statement and no transaction: the presented secret checked on
 * the stored account (enabled, its current secret or its previous one inside the overlap) and the
 * `oidc.client_credentials_issued` webhook delivery. Before, it was two (the account read, then the
 * event's own statement).
 *
 * Then what the cache must never do: honour a disabled account, a secret rotated out (past its
 * overlap) or a deleted account for one more grant, refuse a new secret, or lose the event.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { sha256Hex } from "../../../core/digest.ts";
import { cryptoRandom } from "../../../core/random.ts";
import { oidcProviderPlugin } from "../../../plugins/oidc-provider/mod.ts";
import { pluginBed } from "../../support/plugins.ts";
import { recordSpans, stopRecording } from "../../support/spans.ts";

const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const KIND = "oidc.client_credentials_issued";

Deno.test("client_credentials statements: one per grant once cached, the account's changes honoured at once", async (t) => {
  // The back-channel logout worker polls its outbox in the background; its statements would land in
  // the counted window on a slow machine, so this test runs without it.
  const plugin = oidcProviderPlugin({ backchannelWorker: false });
  const beds = await pluginBed([plugin], { SVC_PLUGINS: "oidc-provider" }, { postgres: true });
  try {
    const { bed, realmId } = beds.admin;
    (bed.random as { bytes: (length: number) => Uint8Array }).bytes = cryptoRandom.bytes;
    const created = await beds.request("POST", "/svc-admin/service-accounts", {
      body: { key: "nightly", displayName: "Nightly" },
    });
    assert.equal(created.status, 201);
    const account = await created.json() as { id: string; secret: string };
    await bed.storage.webhooks.createEndpoint({
      realmId,
      url: "https://hooks.example.test/svc",
      secret: "whsec_test_secret_for_the_statement_test",
      eventPatterns: ["oidc.*"],
    });
    const grant = (secret: string, key = "nightly") =>
      beds.app.request("/oidc/token", {
        method: "POST",
        headers: { ...FORM, Authorization: `Basic ${btoa(`${key}:${secret}`)}` },
        body: new URLSearchParams({ grant_type: "client_credentials", scope: "reports.read" }).toString(),
      });
    const payloads = async () =>
      (await sql<{ payload: string }>`SELECT payload FROM webhook_deliveries
        WHERE event_kind = ${KIND}`.execute(bed.database.db)).rows.map((row) => row.payload);
    /** A grant with `secret` answered `status` (and, for 200, its token's subject is the account). */
    const expect = async (secret: string, status: number) => {
      const res = await grant(secret);
      const body = await res.json();
      assert.equal(res.status, status, JSON.stringify(body));
      if (status === 200) {
        const claims = JSON.parse(
          atob(body.access_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
        );
        assert.equal(claims.sub, account.id);
        assert.equal(claims.client_id, "nightly");
      } else assert.equal(body.error, "invalid_client");
    };

    await expect(account.secret, 200); // the account is cached from here

    await t.step("a grant is one statement, its event written by it", async () => {
      // The warm-up's event may still be on its way: it must not fall into this step's window.
      await bed.settled();
      const earlier = new Set(await payloads());
      bed.events.length = 0;
      const spans = recordSpans();
      let statements;
      try {
        const res = await grant(account.secret);
        assert.equal(res.status, 200);
        assert.equal((await res.json()).scope, "reports.read");
        statements = spans.filter((s) => s.attributes["db.system.name"] === "postgresql");
      } finally {
        stopRecording();
      }
      const list = statements.map((s) => `${s.name} ${String(s.attributes["db.query.text"]).slice(0, 70)}`)
        .join("\n");
      assert.equal(statements.length, 1, `${statements.length} statements:\n${list}`);
      assert.equal(statements.filter((s) => s.name === "BEGIN").length, 0, list);
      await bed.settled();
      const added = (await payloads()).filter((text) => !earlier.has(text));
      assert.equal(added.length, 1, "the webhook delivery was queued by the statement");
      const parsed = JSON.parse(added[0]);
      assert.equal(parsed.kind, KIND);
      assert.equal(parsed.realmId, realmId);
      assert.equal(parsed.userId, null);
      assert.deepEqual(parsed.data, {
        serviceAccountId: account.id,
        key: "nightly",
        scopes: ["reports.read"],
      });
      const announced = bed.events.filter((e) => e.kind === KIND);
      assert.equal(announced.length, 1, "announced once, after the statement");
      assert.deepEqual(announced[0].data, parsed.data);
    });

    await t.step("a disabled account is refused at once, and no event is recorded for it", async () => {
      await bed.settled();
      const before = (await payloads()).length;
      bed.events.length = 0;
      await bed.storage.serviceAccounts.setDisabled(account.id, true);
      await expect(account.secret, 401);
      await bed.settled();
      assert.equal((await payloads()).length, before, "no delivery for a refused grant");
      assert.equal(bed.events.filter((e) => e.kind === KIND).length, 0);
      assert.equal(bed.events.filter((e) => e.kind === "oidc.token_refused").length, 1);
      await bed.storage.serviceAccounts.setDisabled(account.id, false);
      await expect(account.secret, 200);
    });

    await t.step("a rotated secret: the new one works, the old one until its overlap ends", async () => {
      const next = "sas_rotated_secret_of_the_statement_test_0123456789";
      await bed.storage.serviceAccounts.rotateSecret(account.id, sha256Hex(next), 60_000);
      await expect(account.secret, 200); // the cached copy is stale; the statement accepts the overlap
      await expect(next, 200); // the cached copy does not know it: read afresh
      await expect(account.secret, 200);
      bed.clock.advance(61_000);
      await expect(account.secret, 401);
      await expect(next, 200);
      account.secret = next;
    });

    await t.step("a secret rotated out while cached is refused on the next grant", async () => {
      await expect(account.secret, 200); // cached with this secret current
      // Rotated with no overlap behind the cache's back (another instance, or the admin API).
      await bed.storage.serviceAccounts.rotateSecret(account.id, sha256Hex("sas_other"), 0);
      await expect(account.secret, 401);
      await expect("sas_other", 200);
      account.secret = "sas_other";
    });

    await t.step("a deleted account is refused (unknown client)", async () => {
      await expect(account.secret, 200);
      await bed.storage.serviceAccounts.delete(account.id);
      await expect(account.secret, 401);
    });

    await t.step("an account deleted and created again under its key: the new one only", async () => {
      const again = await beds.request("POST", "/svc-admin/service-accounts", {
        body: { key: "nightly", displayName: "Nightly again" },
      });
      assert.equal(again.status, 201);
      const renewed = await again.json() as { id: string; secret: string };
      account.id = renewed.id;
      await expect(renewed.secret, 200);
      await expect("sas_other", 401);
      await expect(renewed.secret, 200);
    });
  } finally {
    await beds.close();
  }
});
