/**
 * The federation plugin's own tables on a real Postgres server: a sign-in state is consumed once
 * when 50 callbacks race on separate connections, never after its TTL (the injected clock), and
 * its PKCE verifier and nonce are derived again on consumption (never stored); a provider's
 * client secret is stored sealed (not in clear), opens for the callback, and is unrecoverable once
 * the provider is deleted.
 */
import { strict as assert } from "node:assert";
import { createSqlStorage, cryptoRandom, ManualClock, type PluginContext } from "../../../mod.ts";
import { ensurePluginTables, pluginSql } from "../../../plugins/host.ts";
import { federationPlugin } from "../../../plugins/federation/mod.ts";
import { ProviderStore } from "../../../plugins/federation/providers.ts";
import { StateStore } from "../../../plugins/federation/states.ts";
import { freshPostgres } from "../../support/db.ts";

async function bed() {
  const database = await freshPostgres({ maxConnections: 20 });
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const storage = createSqlStorage(database, { clock, random: cryptoRandom });
  const sql = pluginSql(database.db);
  await ensurePluginTables(database.db, [federationPlugin()]);
  const ctx = { clock, random: cryptoRandom, storage, sql } as unknown as PluginContext<unknown>;
  return { database, clock, storage, sql, ctx };
}

Deno.test("federation states: single-use under 50 racing connections, TTL from the clock", async () => {
  const { database, clock, sql, ctx } = await bed();
  try {
    const states = new StateStore(ctx, 600_000);
    const providerId = crypto.randomUUID();
    const started = await states.start(providerId, "https://app.example.test/", null);
    const stored = await sql.query<Record<string, unknown>>("SELECT * FROM federation_states");
    assert.equal(stored.length, 1);
    assert.ok(!JSON.stringify(stored).includes(started.state), "only the state's hash is stored");

    const results = await Promise.all(Array.from({ length: 50 }, () => states.consume(started.state)));
    const winners = results.filter((r) => r !== null);
    assert.equal(winners.length, 1);
    assert.equal(winners[0]!.providerId, providerId);
    assert.equal(winners[0]!.returnTo, "https://app.example.test/");
    assert.equal(winners[0]!.nonce, started.nonce);
    const challenge = btoa(String.fromCharCode(
      ...new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode(winners[0]!.codeVerifier)),
      ),
    )).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    assert.equal(challenge, started.codeChallenge, "the verifier matches the challenge sent upstream");

    const late = await states.start(providerId, "https://app.example.test/", null);
    clock.advance(600_000);
    assert.equal(await states.consume(late.state), null, "expired at its TTL");
    assert.equal(await states.consume("not a state"), null);
  } finally {
    await database.close();
  }
});

Deno.test("federation providers: the client secret is sealed, opens, and dies with the provider", async () => {
  const { database, storage, sql, ctx } = await bed();
  try {
    const realm = await storage.realms.create({ name: "main", displayName: "Main" });
    const org = await storage.organizations.create({ realmId: realm.id, name: "acme", displayName: "Acme" });
    const providers = new ProviderStore(ctx);
    const secret = "a very secret upstream value";
    const created = await providers.create({
      realmId: realm.id,
      orgId: org.id,
      issuer: "https://idp.example.test",
      clientId: "svc",
      clientSecret: secret,
      scopes: ["openid", "email"],
      claimMapping: { email: "email", name: "name", attributes: { team: "groups" } },
      allowJitProvisioning: true,
      enabled: true,
    });
    const raw = await sql.query<Record<string, unknown>>("SELECT * FROM federation_providers");
    assert.ok(!JSON.stringify(raw).includes(secret));
    assert.ok(!JSON.stringify(raw).includes(btoa(secret)));
    assert.equal(await providers.clientSecret(created.id), secret);
    assert.deepEqual((await providers.get(created.id))!.claimMapping.attributes, { team: "groups" });

    await providers.update(created.id, { clientSecret: "rotated", enabled: false });
    assert.equal(await providers.clientSecret(created.id), "rotated");
    assert.equal((await providers.get(created.id))!.enabled, false);

    assert.equal(await providers.delete(created.id), true);
    assert.equal(await storage.subjectKeys.get(created.id), null, "the provider's key is destroyed");
    assert.equal(await providers.get(created.id), null);
  } finally {
    await database.close();
  }
});
