/**
 * The SAML plugin's admin routes on a plugin bed:
 *
 * - the fence matrix with the plugin's organization-scoped permissions: for every
 *   `/svc-admin/saml` route, no token 401; svc's own administrator and a plain member 403; the
 *   administrator of another organization (`saml:org:*` there) 404 (its list shows nothing); the
 *   organization's administrator (`saml:org:*`) and the realm's (`saml:global:*`) succeed; a
 *   successful mutation appends exactly one audit entry, a refusal none; an impersonating admin
 *   is refused (also to start a test sign-in); the OpenAPI document lists every route with its
 *   fence;
 * - validation: exactly one of metadata XML and URL, U+0000, metadata with a DTD, without a
 *   certificate; an identical PATCH writes no entry;
 * - metadata by URL goes through the outbound guard (a loopback URL is refused without a fetch)
 *   and is fetched when the guard allows it; `refreshMetadata` picks up a rolled-over
 *   certificate (both accepted);
 * - a certificate expiring within 30 days raises `saml.certificate_expiring` and shows
 *   `expiresSoon`.
 */
import { strict as assert } from "node:assert";
import { type PluginFenceCase, pluginFenceMatrix } from "../../support/plugin-fence.ts";
import { Validator } from "@seriousme/openapi-schema-validator";
import { samlPlugin } from "../../../plugins/saml/mod.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { fixture, testIdp } from "./idp.ts";

type Caller = "none" | "svcAdmin" | "plain" | "orgB" | "orgA" | "global";

const BASE = "/svc-admin/saml/connections";

Deno.test("saml admin routes: fence matrix, validation, metadata by URL, certificate expiry", async (t) => {
  const plugged = await pluginBed([samlPlugin()], { SVC_OUTBOUND_ALLOW_PRIVATE: "127.0.0.2" });
  try {
    const bed = plugged.admin.bed;
    const app = plugged.app;
    const realmId = bed.realmId;
    const seed = seeder(bed.database.db);
    const svcAdmin = plugged.admin.users.global;
    const [globalUser, orgAUser, orgBUser, plainUser] = [
      await seed.user(realmId),
      await seed.user(realmId),
      await seed.user(realmId),
      await seed.user(realmId),
    ];
    const orgA = await seed.org(realmId, [orgAUser, plainUser]);
    const orgB = await seed.org(realmId, [orgBUser]);
    const globalRole = await seed.role(realmId, "saml-admin", [{ pattern: "saml:global:*" }]);
    await seed.assign(realmId, globalRole, { kind: "User", id: globalUser });
    for (const [orgId, userId] of [[orgA, orgAUser], [orgB, orgBUser]]) {
      const role = await seed.role(realmId, `saml-${orgId.slice(0, 8)}`, [{ pattern: "saml:org:*" }], orgId);
      await seed.assign(realmId, role, { kind: "User", id: userId }, orgId);
    }
    await bed.snapshots.invalidateAll();
    const sign = async (userId: string, orgId: string | null) =>
      (await bed.auth.sessions.signIn({ realmId, userId, orgId, mfa: "MultiFactor" })).tokens.accessToken;
    const tokens: Record<Exclude<Caller, "none">, string> = {
      svcAdmin: await sign(svcAdmin, null),
      plain: await sign(plainUser, orgA),
      orgB: await sign(orgBUser, orgB),
      orgA: await sign(orgAUser, orgA),
      global: await sign(globalUser, null),
    };
    const request = (method: string, path: string, as: Caller, body?: unknown) =>
      app.request(path, {
        method,
        headers: {
          ...(as === "none" ? {} : { Authorization: `Bearer ${tokens[as]}` }),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const chainLength = async () => (await bed.storage.adminAudit.list(realmId)).length;
    const idp = testIdp();
    const body = { orgId: orgA, displayName: "Acme IdP", idpMetadataXml: idp.metadata() };
    const newConnection = async () => {
      const res = await request("POST", BASE, "global", body);
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()).id as string;
    };

    const newKey = async (connectionId: string) => {
      const res = await request("POST", `${BASE}/${connectionId}/encryption-keys`, "global", {});
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()).id as string;
    };

    const cases: PluginFenceCase[] = [
      {
        route: `GET ${BASE}`,
        status: 200,
        mutation: false,
        otherOrg: 200,
        prepare: () => Promise.resolve({ path: BASE }),
      },
      {
        route: `POST ${BASE}`,
        status: 201,
        mutation: true,
        otherOrg: 404,
        prepare: () => Promise.resolve({ path: BASE, body }),
      },
      {
        route: `GET ${BASE}/:connectionId`,
        status: 200,
        mutation: false,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}` }),
      },
      {
        route: `PATCH ${BASE}/:connectionId`,
        status: 200,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}`, body: { jitProvisioning: true } }),
      },
      {
        route: `GET ${BASE}/:connectionId/test-sign-in`,
        status: 200,
        mutation: false,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}/test-sign-in` }),
      },
      {
        // A test sign-in changes no configuration: no audit entry.
        route: `POST ${BASE}/:connectionId/test-sign-in`,
        status: 201,
        mutation: false,
        otherOrg: 404,
        prepare: async () => ({
          path: `${BASE}/${await newConnection()}/test-sign-in`,
          body: { returnTo: "/svc-admin/ui/" },
        }),
      },
      {
        route: `DELETE ${BASE}/:connectionId`,
        status: 204,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}` }),
      },
      {
        route: `GET ${BASE}/:connectionId/encryption-keys`,
        status: 200,
        mutation: false,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}/encryption-keys` }),
      },
      {
        route: `POST ${BASE}/:connectionId/encryption-keys`,
        status: 201,
        mutation: true,
        otherOrg: 404,
        prepare: async () => ({ path: `${BASE}/${await newConnection()}/encryption-keys`, body: {} }),
      },
      {
        route: `DELETE ${BASE}/:connectionId/encryption-keys/:keyId`,
        status: 204,
        mutation: true,
        otherOrg: 404,
        prepare: async () => {
          const id = await newConnection();
          return { path: `${BASE}/${id}/encryption-keys/${await newKey(id)}` };
        },
      },
    ];

    await pluginFenceMatrix(t, {
      routes: app.routes,
      prefix: "/svc-admin/saml",
      listPath: BASE,
      cases,
      request,
      chainLength,
    });

    await t.step("an impersonating administrator changes nothing", async () => {
      const id = await newConnection();
      // svc's administrator (who holds saml:* nowhere) may not impersonate an org's SAML admin;
      // the realm's SAML administrator impersonates orgA's and tries a change through the token.
      const started = await plugged.request("POST", "/svc-admin/impersonation", {
        as: "global",
        body: { targetUserId: plainUser, reason: "support ticket", durationSeconds: 300 },
      });
      assert.equal(started.status, 201, await started.clone().text());
      const { accessToken } = await started.json();
      const before = await chainLength();
      const res = await app.request(`${BASE}/${id}`, {
        method: "PATCH",
        headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({ enabled: false }),
      });
      assert.equal(res.status, 403, await res.clone().text());
      const test = await app.request(`${BASE}/${id}/test-sign-in`, {
        method: "POST",
        headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({ returnTo: "/svc-admin/ui/" }),
      });
      assert.equal(test.status, 403, await test.clone().text());
      assert.equal(await chainLength(), before);
      for (
        const [method, path] of [["POST", `${BASE}/${id}/encryption-keys`], [
          "GET",
          `${BASE}/${id}/encryption-keys`,
        ]]
      ) {
        const keyRes = await app.request(path, {
          method,
          headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
        });
        assert.equal(keyRes.status, 403, `${method} ${path}: ${await keyRes.clone().text()}`);
      }
      assert.equal(await chainLength(), before);
    });

    await t.step("validation refusals write nothing", async () => {
      const before = await chainLength();
      const refusals: [unknown, RegExp][] = [
        [{ orgId: orgA, displayName: "x" }, /exactly one of idpMetadataXml and idpMetadataUrl/],
        [{ ...body, idpMetadataUrl: "https://idp.example.test/m" }, /exactly one/],
        [{ ...body, displayName: "a\u0000b" }, /U\+0000/],
        [{
          ...body,
          idpMetadataXml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${body.idpMetadataXml}`,
        }, /DTD/],
        [{
          ...body,
          idpMetadataXml:
            '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><md:IDPSSODescriptor/></md:EntityDescriptor>',
        }, /no signing certificate/],
        [{ ...body, extra: 1 }, /./],
      ];
      for (const [payload, message] of refusals) {
        const res = await request("POST", BASE, "global", payload);
        const text = await res.text();
        assert.equal(res.status, 400, text);
        assert.match(text, message);
      }
      const id = await newConnection();
      const mark = await chainLength();
      const same = await request("PATCH", `${BASE}/${id}`, "global", {
        displayName: "Acme IdP",
        enabled: true,
      });
      assert.equal(same.status, 200);
      assert.equal(await chainLength(), mark, "an identical PATCH writes no entry");
      assert.equal(mark, before + 1);
    });

    await t.step(
      "metadata by URL goes through the outbound guard; refresh rolls certificates over",
      async () => {
        let metadata = idp.metadata();
        let internalHits = 0;
        const internal = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
          internalHits++;
          return new Response(metadata);
        });
        const server = Deno.serve(
          { hostname: "127.0.0.2", port: 0, onListen() {} },
          (req) =>
            new URL(req.url).pathname === "/metadata"
              ? new Response(metadata, { headers: { "Content-Type": "application/samlmetadata+xml" } })
              : new Response("no", { status: 404 }),
        );
        try {
          // The loopback is not allowed to the guard: refused without a request reaching it.
          const inward = await request("POST", BASE, "orgA", {
            orgId: orgA,
            displayName: "Inward",
            idpMetadataUrl: `http://127.0.0.1:${internal.addr.port}/metadata`,
          });
          assert.equal(inward.status, 400);
          assert.equal((await inward.json()).error.code, "saml_metadata_unavailable");
          assert.equal(internalHits, 0);
          const url = `http://127.0.0.2:${server.addr.port}/metadata`;
          const res = await request("POST", BASE, "orgA", {
            orgId: orgA,
            displayName: "By URL",
            idpMetadataUrl: url,
          });
          assert.equal(res.status, 201, await res.clone().text());
          const created = await res.json();
          assert.equal(created.idpMetadataUrl, url);
          assert.ok(created.metadataFetchedAt);
          assert.equal(created.certificates.length, 1);
          const missing = await request("POST", BASE, "orgA", {
            orgId: orgA,
            displayName: "Missing",
            idpMetadataUrl: `http://127.0.0.2:${server.addr.port}/nothing`,
          });
          assert.equal(missing.status, 400);
          assert.equal((await missing.json()).error.code, "saml_metadata_unavailable");
          // The IdP announces its next certificate next to the current one.
          const next = testIdp(idp.entityId, fixture("idp2")).metadata();
          const nextCert = /<ds:X509Certificate>([^<]+)</.exec(next)![1];
          metadata = metadata.replace(
            "</KeyDescriptor>",
            `</KeyDescriptor><KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${nextCert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></KeyDescriptor>`,
          );
          const refreshed = await request("PATCH", `${BASE}/${created.id}`, "orgA", {
            refreshMetadata: true,
          });
          assert.equal(refreshed.status, 200, await refreshed.clone().text());
          assert.equal((await refreshed.json()).certificates.length, 2);
        } finally {
          await server.shutdown();
          await internal.shutdown();
        }
      },
    );

    await t.step("a certificate expiring within 30 days raises an event and shows expiresSoon", async () => {
      const soon = testIdp("https://soon.example.test", fixture("soon"));
      // Move the clock to 10 days before the certificate's end.
      const res0 = await request("POST", BASE, "global", { ...body, idpMetadataXml: soon.metadata() });
      assert.equal(res0.status, 201);
      const notAfter = Date.parse((await res0.json()).certificates[0].notAfter);
      bed.clock.set(notAfter - 10 * 24 * 3600_000);
      tokens.global = await sign(globalUser, null);
      bed.events.length = 0;
      const res = await request("POST", BASE, "global", { ...body, idpMetadataXml: soon.metadata() });
      assert.equal(res.status, 201);
      const created = await res.json();
      assert.equal(created.certificates[0].expiresSoon, true);
      for (let i = 0; i < 200 && !bed.events.some((e) => e.kind === "saml.certificate_expiring"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const event = bed.events.find((e) => e.kind === "saml.certificate_expiring");
      assert.ok(event, "saml.certificate_expiring");
      assert.equal(event.data.connectionId, created.id);
      // A certificate far from its end raises nothing.
      bed.events.length = 0;
      const fine = await request("POST", BASE, "global", body);
      assert.equal((await fine.json()).certificates[0].expiresSoon, false);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(!bed.events.some((e) => e.kind === "saml.certificate_expiring"));
    });

    await t.step("the chain verifies; the OpenAPI document lists the routes with their fences", async () => {
      const report = await bed.storage.adminAudit.verify(realmId);
      assert.equal(report.valid, true, JSON.stringify(report));
      const doc = await (await app.request("/openapi.json")).json();
      for (
        const path of [
          BASE,
          `${BASE}/{connectionId}`,
          `${BASE}/{connectionId}/test-sign-in`,
          "/saml/{connectionId}/metadata",
          "/saml/{connectionId}/start",
          "/saml/{connectionId}/acs",
          `${BASE}/{connectionId}/encryption-keys`,
          `${BASE}/{connectionId}/encryption-keys/{keyId}`,
        ]
      ) {
        assert.ok(doc.paths[path], `${path} documented`);
      }
      assert.ok(doc.paths[BASE].post["x-svc-permissions"].includes("saml:org:connections-manage"));
      assert.ok(
        doc.paths[`${BASE}/{connectionId}/encryption-keys`].post["x-svc-permissions"].includes(
          "saml:org:connections-manage",
        ),
      );
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    });
  } finally {
    await plugged.close();
  }
});
