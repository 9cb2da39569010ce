/**
 * An initial access token's uses are a limit under concurrency, on real Postgres connections:
 *
 * - 20 concurrent registrations with a token of one use give exactly one client (201); the
 *   others get 401 `invalid_token`; the token shows one use, and the realm's audit chain one entry;
 * - the conditional statement alone, without the realm's audit lock that registrations also take:
 *   20 concurrent takes of a token of three uses succeed exactly three times;
 * - RFC 7592: 20 concurrent identical changes of a registration write one audit entry and emit one
 *   event; 20 concurrent deletions delete once (204, one entry), the others get 401.
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

    // RFC 7592 under concurrency.
    const client = bodies.find((body) => body.client_id !== undefined);
    const path = new URL(client.registration_client_uri).pathname;
    const manage = (method: string, body?: unknown) =>
      beds.app.request(path, {
        method,
        headers: {
          Authorization: `Bearer ${client.registration_access_token}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const change = {
      client_id: client.client_id,
      redirect_uris: [REDIRECT, `${REDIRECT}2`],
      client_name: "changed",
    };
    let before = await beds.admin.chainLength();
    let events = bed.events.length;
    const puts = await Promise.all(Array.from({ length: RACERS }, () => manage("PUT", change)));
    assert.deepEqual(puts.map((res) => res.status), Array(RACERS).fill(200));
    await Promise.all(puts.map((res) => res.body?.cancel()));
    assert.equal(await beds.admin.chainLength() - before, 1, "one entry for 20 identical changes");
    assert.equal(bed.events.slice(events).filter((event) => event.kind === "oidc.client_updated").length, 1);
    before = await beds.admin.chainLength();
    events = bed.events.length;
    const deletes = await Promise.all(Array.from({ length: RACERS }, () => manage("DELETE")));
    assert.deepEqual(deletes.map((res) => res.status).sort(), [204, ...Array(RACERS - 1).fill(401)]);
    await Promise.all(deletes.map((res) => res.body?.cancel()));
    assert.equal(await beds.admin.chainLength() - before, 1, "one entry for 20 deletions");
    assert.equal(bed.events.slice(events).filter((event) => event.kind === "oidc.client_deleted").length, 1);
    assert.equal((await bed.storage.adminAudit.verify(realmId)).valid, true);
  } finally {
    await beds.close();
  }
});
