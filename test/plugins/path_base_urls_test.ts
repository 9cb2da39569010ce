/**
 * Absolute URLs under a path base: with `SVC_BASE_URL` written with the path base and without it,
 * every URL svc hands out holds the path base once (`publicRoot`): the OpenAPI document's server,
 * a SCIM connection's base URL, a SAML connection's entity id, ACS and metadata URLs.
 */
import { strict as assert } from "node:assert";
import { samlPlugin } from "../../plugins/saml/mod.ts";
import { scimPlugin } from "../../plugins/scim/mod.ts";
import { pluginBed } from "../support/plugins.ts";
import { seeder } from "../support/seed.ts";
import { testIdp } from "./saml/idp.ts";

for (const baseUrl of ["http://localhost:8080", "http://localhost:8080/idp", "http://localhost:8080/idp/"]) {
  Deno.test(`path base /idp with SVC_BASE_URL=${baseUrl}: every URL holds /idp once`, async () => {
    const beds = await pluginBed([samlPlugin(), scimPlugin()], {
      SVC_PLUGINS: "saml,scim",
      SVC_BASE_URL: baseUrl,
      SVC_PATH_BASE: "/idp",
    });
    try {
      const { bed, realmId } = beds.admin;
      const root = "http://localhost:8080/idp";
      const once = (url: string) => {
        assert.ok(url.startsWith(`${root}/`), url);
        assert.equal(url.split("/idp").length - 1, 1, url);
      };
      const openapi = await (await beds.app.request("/idp/openapi.json")).json();
      assert.equal(openapi.servers[0].url, root);

      const seed = seeder(bed.database.db);
      const orgId = await seed.org(realmId, []);
      // The plugins' own permissions, for an administrator of both.
      const admin = await seed.user(realmId);
      const role = await seed.role(realmId, "sso-admin", [{ pattern: "scim:global:*" }, {
        pattern: "saml:global:*",
      }]);
      await seed.assign(realmId, role, { kind: "User", id: admin });
      await bed.snapshots.invalidateAll();
      const token =
        (await bed.auth.sessions.signIn({ realmId, userId: admin, orgId: null, mfa: "MultiFactor" }))
          .tokens.accessToken;
      const post = (path: string, body: unknown) =>
        beds.app.request(path, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
      const scim = await post("/idp/svc-admin/scim/connections", { orgId, displayName: "Directory" });
      assert.equal(scim.status, 201, await scim.clone().text());
      const connection = await scim.json();
      assert.equal(connection.baseUrl, `${root}/scim/v2/${connection.id}`);

      const saml = await post("/idp/svc-admin/saml/connections", {
        orgId,
        displayName: "Acme IdP",
        idpMetadataXml: testIdp().metadata(),
      });
      assert.equal(saml.status, 201, await saml.clone().text());
      const sp = await saml.json();
      for (const url of [sp.spEntityId, sp.acsUrl, sp.metadataUrl]) once(url);
      // The metadata is served where it says it is, and names the same URLs.
      const metadata = await beds.app.request(new URL(sp.metadataUrl).pathname);
      assert.equal(metadata.status, 200);
      const xml = await metadata.text();
      assert.ok(xml.includes(`entityID="${sp.spEntityId}"`), xml.slice(0, 300));
      assert.ok(xml.includes(`Location="${sp.acsUrl}"`), xml.slice(0, 600));
    } finally {
      await beds.close();
    }
  });
}
