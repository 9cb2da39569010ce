/**
 * Test sign-in (`plugins/saml/test-sign-in.ts`) against samlify on a plugin bed:
 *
 * - the admin API answers a single-use start URL (no-store); the round trip through the IdP
 *   comes back to `returnTo` with no session cookie, nobody provisioned or linked, no event;
 * - the result shows the NameID, the attributes (bounded: 50 names, 10 values, 256 characters)
 *   and the mapping: `would_provision` for a new email in a verified domain, `existing_user` for a
 *   linked NameID, `refused` with the reason (an unverified domain, a response signed by another
 *   key); a disabled connection can be tested; the ticket works once;
 * - only the administrator who ran the test sees it; returnTo follows the origin rule; an
 *   impersonating administrator cannot start one.
 */
import { strict as assert } from "node:assert";
import { samlPlugin } from "../../../plugins/saml/mod.ts";
import { TEST_LIMITS } from "../../../plugins/saml/test-store.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { fixture, type KnownSp, testIdp } from "./idp.ts";

async function inflateRaw(base64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return await new Response(stream).text();
}

Deno.test("SAML test sign-in: shows the NameID, attributes and mapped user; changes nothing", async (t) => {
  const plugged = await pluginBed([samlPlugin({ maintenanceWorker: false })]);
  try {
    const { bed } = plugged.admin;
    const app = plugged.app;
    const realmId = bed.realmId;
    const seed = seeder(bed.database.db);
    const role = await seed.role(realmId, "saml-admin", [{ pattern: "saml:global:*" }]);
    const [tester, otherAdmin] = [await seed.user(realmId), await seed.user(realmId)];
    for (const id of [tester, otherAdmin]) await seed.assign(realmId, role, { kind: "User", id });
    await bed.snapshots.invalidateAll();
    const acme = await bed.storage.organizations.create({ realmId, name: "acme", displayName: "Acme" });
    await bed.storage.organizations.addDomain({
      orgId: acme.id,
      kind: "EmailDomain",
      value: "acme.test",
      verified: true,
    });
    const admin = async (method: string, path: string, body?: unknown, as = tester) => {
      const { accessToken } =
        (await bed.auth.sessions.signIn({ realmId, userId: as, orgId: null, mfa: "MultiFactor" }))
          .tokens;
      return app.request(path, {
        method,
        headers: {
          Authorization: `Bearer ${accessToken}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    };
    const idp = testIdp(undefined, undefined, undefined, () => bed.clock.now());
    const created = await admin("POST", "/svc-admin/saml/connections", {
      orgId: acme.id,
      displayName: "Acme Okta",
      idpMetadataXml: idp.metadata(),
      jitProvisioning: true,
      enabled: false,
      attributeMapping: { attributes: { department: "department" } },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const connection = await created.json();
    const sp: KnownSp = { entityId: connection.spEntityId, acsUrl: connection.acsUrl };
    const testPath = `/svc-admin/saml/connections/${connection.id}/test-sign-in`;
    const returnTo = `${bed.config.server.baseUrl}/svc-admin/ui/#/saml/${connection.id}`;
    const userCount = async () =>
      Number(
        (await bed.database.db.selectFrom("users").select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow())
          .n,
      );
    const usersBefore = await userCount();

    /** Starts a test, follows it to the IdP, posts the IdP's answer; answers the ACS response. */
    const roundTrip = async (
      respond: (requestId: string) => Promise<string>,
    ): Promise<{ acs: Response; startUrl: string }> => {
      const started = await admin("POST", testPath, { returnTo });
      assert.equal(started.status, 201, await started.clone().text());
      assert.equal(started.headers.get("Cache-Control"), "no-store");
      const { url } = await started.json();
      const start = await app.request(new URL(url).pathname + new URL(url).search);
      assert.equal(start.status, 303, await start.clone().text());
      const target = new URL(start.headers.get("Location")!);
      const requestId = /ID="([^"]+)"/.exec(await inflateRaw(target.searchParams.get("SAMLRequest")!))![1];
      const relayState = target.searchParams.get("RelayState")!;
      const cookie = start.headers.getSetCookie().find((c) => c.startsWith("svc_saml_relay="))!.split(";")[0];
      const acs = await app.request(new URL(connection.acsUrl).pathname, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
        body: new URLSearchParams({ SAMLResponse: btoa(await respond(requestId)), RelayState: relayState })
          .toString(),
      });
      return { acs, startUrl: url };
    };
    const latest = async (as = tester) => {
      const res = await admin("GET", testPath, undefined, as);
      assert.equal(res.status, 200);
      return (await res.json()).latest;
    };

    await t.step("a new email in a verified domain: would be provisioned; nothing is created", async () => {
      bed.events.length = 0;
      const many: Record<string, string> = { email: "jane@acme.test", department: "R&D" };
      for (let i = 0; i < 60; i++) many[`extra${i}`] = i === 0 ? "x".repeat(300) : `v${i}`;
      const { acs, startUrl } = await roundTrip((requestId) =>
        idp.respond(sp, { requestId, nameId: "jane@acme.test", attributes: many })
      );
      assert.equal(acs.status, 303, await acs.clone().text());
      assert.equal(acs.headers.get("Location"), returnTo);
      const cookies = acs.headers.getSetCookie().map((c) => c.split("=")[0]);
      assert.ok(!cookies.some((name) => name !== "svc_saml_relay"), `no session cookie: ${cookies}`);
      const test = await latest();
      assert.equal(test.status, "done");
      assert.equal(test.result.nameId, "jane@acme.test");
      assert.equal(test.result.attributes.length, TEST_LIMITS.attributes);
      assert.equal(test.result.attributesTruncated, true);
      const extra0 = test.result.attributes.find((a: { name: string }) => a.name === "extra0");
      assert.ok(extra0 === undefined || extra0.values[0].length <= TEST_LIMITS.chars + 1);
      assert.deepEqual(test.result.mapping, {
        outcome: "would_provision",
        wouldProvision: { email: "jane@acme.test", displayName: null, attributes: { department: "R&D" } },
      });
      assert.equal(await userCount(), usersBefore);
      assert.equal(await bed.storage.users.findByEmail(realmId, "jane@acme.test"), null);
      assert.deepEqual(bed.events.filter((e) => e.kind.startsWith("saml.")), []);
      // The ticket works once.
      const again = await app.request(new URL(startUrl).pathname + new URL(startUrl).search);
      assert.equal(again.status, 400);
      assert.match(await again.text(), /saml_test_unknown/);
    });

    await t.step("a linked NameID maps to the existing user", async () => {
      const jane = await seed.user(realmId);
      await bed.storage.federatedIdentities.link(jane, `urn:svc:saml:${connection.id}`, "jane-persistent");
      const { acs } = await roundTrip((requestId) =>
        idp.respond(sp, { requestId, nameId: "jane-persistent" })
      );
      assert.equal(acs.status, 303);
      const test = await latest();
      assert.equal(test.result.mapping.outcome, "existing_user");
      assert.equal(test.result.mapping.user.id, jane);
    });

    await t.step("refusals show their reason to the tester", async () => {
      const { acs } = await roundTrip((requestId) =>
        idp.respond(sp, {
          requestId,
          nameId: "bob@elsewhere.test",
          attributes: { email: "bob@elsewhere.test" },
        })
      );
      assert.equal(acs.status, 303);
      let test = await latest();
      assert.deepEqual(test.result.mapping, {
        outcome: "refused",
        reason: "email domain not verified by the organization",
      });
      const stranger = testIdp(idp.entityId, fixture("other"), undefined, () => bed.clock.now());
      const wrongKey = await roundTrip((requestId) =>
        stranger.respond(sp, { requestId, nameId: "jane@acme.test" })
      );
      assert.equal(wrongKey.acs.status, 303);
      test = await latest();
      assert.equal(test.result.mapping.outcome, "refused");
      assert.equal(test.result.nameId, null);
      assert.deepEqual(bed.events.filter((e) => e.kind.startsWith("saml.")), []);
    });

    await t.step("only the tester sees the test; returnTo and impersonation are refused", async () => {
      assert.equal(await latest(otherAdmin), null);
      const evil = await admin("POST", testPath, { returnTo: "https://evil.example/" });
      assert.equal(evil.status, 400);
      const nul = await admin("POST", testPath, { returnTo: "/a\u0000" });
      assert.equal(nul.status, 400);
      const none = await app.request(testPath, { method: "POST", body: "{}" });
      assert.equal(none.status, 401);
      const plain = await seed.user(realmId);
      const res = await admin("POST", testPath, { returnTo }, plain);
      assert.equal(res.status, 403);
      const missing = await admin("GET", `/svc-admin/saml/connections/${crypto.randomUUID()}/test-sign-in`);
      assert.equal(missing.status, 404);
      // The connection is still disabled: a plain sign-in through it is refused.
      const start = await app.request(new URL(connection.startUrl).pathname);
      assert.equal(start.status, 404);
    });
  } finally {
    await plugged.close();
  }
});
