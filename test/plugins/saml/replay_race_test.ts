/**
 * Each assertion id is consumed once under concurrency, on real Postgres connections: 30
 * concurrent posts of one samlify-signed assertion to the ACS open exactly one session; the 29
 * others see the one neutral page and `saml.refused` with the reason `assertion replayed`. The
 * mark is the spec's consumed-assertion record `{connectionId}:{assertionId}`, kept until the
 * assertion expires (then the sweeper may prune it: the assertion is refused as expired anyway).
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { samlPlugin } from "../../../plugins/saml/mod.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { testIdp } from "./idp.ts";

Deno.test("SAML: 30 concurrent posts of one assertion open exactly one session (Postgres)", async () => {
  const plugged = await pluginBed([samlPlugin()], {}, { postgres: true });
  try {
    const { bed } = plugged.admin;
    const realmId = bed.realmId;
    const seed = seeder(bed.database.db);
    const samlAdmin = await seed.user(realmId);
    const role = await seed.role(realmId, "saml-admin", [{ pattern: "saml:global:*" }]);
    await seed.assign(realmId, role, { kind: "User", id: samlAdmin });
    await bed.snapshots.invalidateAll();
    const { accessToken } =
      (await bed.auth.sessions.signIn({ realmId, userId: samlAdmin, orgId: null, mfa: "MultiFactor" }))
        .tokens;
    const org = await bed.storage.organizations.create({ realmId, name: "acme", displayName: "Acme" });
    await bed.storage.organizations.addDomain({
      orgId: org.id,
      kind: "EmailDomain",
      value: "acme.test",
      verified: true,
    });
    const idp = testIdp(undefined, undefined, undefined, () => bed.clock.now());
    const created = await plugged.app.request("/svc-admin/saml/connections", {
      method: "POST",
      headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        orgId: org.id,
        displayName: "Acme",
        idpMetadataXml: idp.metadata(),
        jitProvisioning: true,
        allowIdpInitiated: true,
      }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const connection = await created.json();
    const xml = await idp.respond(
      { entityId: connection.spEntityId, acsUrl: connection.acsUrl },
      { requestId: null, nameId: "racer@acme.test" },
    );
    const body = new URLSearchParams({ SAMLResponse: btoa(xml) }).toString();
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async (): Promise<number> => {
        const res = await plugged.app.request(new URL(connection.acsUrl).pathname, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body,
        });
        await res.body?.cancel();
        return res.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 303).length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 403).length, 29, JSON.stringify(statuses));
    const user = await bed.storage.users.findByEmail(realmId, "racer@acme.test");
    assert.ok(user);
    const { rows } = await sql<
      { n: string | number }
    >`SELECT count(*) AS n FROM sessions WHERE user_id = ${user.id}`
      .execute(bed.database.db);
    assert.equal(Number(rows[0].n), 1);
    const marks = await sql<{ n: string | number }>`SELECT count(*) AS n FROM consumed_saml_assertions
      WHERE assertion_id LIKE ${`${connection.id}:%`}`.execute(bed.database.db);
    assert.equal(Number(marks.rows[0].n), 1);
    for (let i = 0; i < 200; i++) {
      if (bed.events.filter((e) => e.kind === "saml.refused").length === 29) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const reasons = bed.events.filter((e) => e.kind === "saml.refused").map((e) => e.data.reason);
    assert.deepEqual(new Set(reasons), new Set(["assertion replayed"]));
    assert.equal(reasons.length, 29);
  } finally {
    await plugged.close();
  }
});
