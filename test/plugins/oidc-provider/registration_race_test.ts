/**
 * An initial access token's uses are a limit under concurrency, on real Postgres connections:
 *
 * - 20 concurrent registrations with a token of one use give exactly one client (201); the
 *   others get 401 `invalid_token`; the token shows one use, and the realm's audit chain one entry;
 * - the conditional statement alone, without the realm's audit lock that registrations also take:
 *   20 concurrent takes of a token of three uses succeed exactly three times.
 */
import { strict as assert } from "node:assert";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { initialAccessTokenStore } from "../../../plugins/oidc-provider/initial-access-tokens.ts";
import { pluginBed } from "../../support/plugins.ts";

const REDIRECT = "https://rp.example.test/cb";
const RACERS = 20;

Deno.test("oidc-provider: 20 concurrent registrations with a one-use token give one client (Postgres)", async () => {
  const plugin = builtinPlugins().find((candidate) => candidate.name === "oidc-provider")!;
  const beds = await pluginBed(
    [plugin],
    { SVC_PLUGINS: "oidc-provider", SVC_OIDC_REGISTRATION: "initial-token" },
    { postgres: true },
  );
  try {
    const { bed, realmId } = beds.admin;
    const minted = await beds.request("POST", "/svc-admin/oidc/initial-access-tokens", {
      body: { maxUses: 1 },
    });
    assert.equal(minted.status, 201);
    const { id, token } = await minted.json();
    const chain = await beds.admin.chainLength();
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        beds.app.request("/oidc/register", {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
          body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: `racer ${i}` }),
        })),
    );
    const statuses = answers.map((res) => res.status).sort();
    const bodies = await Promise.all(answers.map((res) => res.json()));
    assert.deepEqual(statuses, [201, ...Array(RACERS - 1).fill(401)], JSON.stringify(bodies));
    for (const body of bodies) if (body.error !== undefined) assert.equal(body.error, "invalid_token");
    const registered = (await bed.storage.clients.list(realmId)).filter((client) =>
      client.dynamicallyRegistered
    );
    assert.equal(registered.length, 1);
    const view = await (await beds.request("GET", `/svc-admin/oidc/initial-access-tokens/${id}`)).json();
    assert.equal(view.uses, 1);
    assert.equal(view.status, "spent");
    assert.equal(await beds.admin.chainLength() - chain, 1, "one audit entry");
    const report = await bed.storage.adminAudit.verify(realmId);
    assert.equal(report.valid, true);

    // The statement itself, on concurrent connections, without the audit lock.
    const store = initialAccessTokenStore(bed.storage.pluginSql);
    const limited = await store.create(
      crypto.randomUUID(),
      realmId,
      "soi_three-uses",
      { name: null, maxUses: 3, expiresAt: null },
      new Date(bed.clock.now()),
    );
    const now = new Date(bed.clock.now());
    const taken = await Promise.all(Array.from({ length: RACERS }, () => store.take(limited.id, now)));
    assert.equal(taken.filter(Boolean).length, 3);
    assert.equal((await store.get(realmId, limited.id))?.uses, 3);
  } finally {
    await beds.close();
  }
});
