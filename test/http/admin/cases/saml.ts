/**
 * Admin route cases: SAML connections (the `saml` plugin). The matrix's organization
 * administrators hold svc's `svc:org:*` only, not `saml:org:*`, so they get 403 here; the plugin's
 * own matrix (`test/plugins/saml/admin_fence_test.ts`) covers the organization-scoped permissions.
 */
import type { PluginContext } from "../../../../mod.ts";
import { ConnectionStore } from "../../../../plugins/saml/connections.ts";
import { SpKeyStore } from "../../../../plugins/saml/sp-keys.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

const BASE = "/svc-admin/saml/connections";
const CERT = Deno.readTextFileSync(new URL("../../../plugins/saml/fixtures/idp.crt", import.meta.url))
  .replace(/-----[A-Z ]+-----|\s+/g, "");

/** An IdP's metadata document with the test IdP's certificate. */
export function idpMetadata(entityId = "https://idp.example.test/saml"): string {
  return `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">` +
    `<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
    `<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>` +
    `<ds:X509Certificate>${CERT}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.test/sso"/>` +
    `</md:IDPSSODescriptor></md:EntityDescriptor>`;
}

/** A new connection's body, for organization A of the bed. */
function connectionBody(admin: AdminBed) {
  return { orgId: admin.orgA, displayName: "Acme IdP", idpMetadataXml: idpMetadata() };
}

/** A fresh connection of organization A, written through the plugin's store; answers its id. */
async function freshConnection(admin: AdminBed): Promise<string> {
  const context = { clock: admin.bed.clock, random: admin.bed.random, storage: admin.bed.storage };
  const store = new ConnectionStore(context as unknown as PluginContext<unknown>);
  const connection = await store.create({
    realmId: admin.realmId,
    orgId: admin.orgA,
    displayName: "Acme IdP",
    idpEntityId: "https://idp.example.test/saml",
    idpSsoUrl: "https://idp.example.test/sso",
    idpCertificates: [CERT],
    idpMetadataUrl: null,
    metadataFetchedAt: null,
    attributeMapping: { email: null, name: null, attributes: {} },
    jitProvisioning: false,
    allowIdpInitiated: false,
    requireEncryptedAssertions: false,
    enabled: true,
  });
  return connection.id;
}

/** A fresh SP encryption key of a fresh connection; answers the key's path. */
async function freshKey(admin: AdminBed): Promise<string> {
  const connectionId = await freshConnection(admin);
  const context = { clock: admin.bed.clock, random: admin.bed.random, storage: admin.bed.storage };
  const key = await new SpKeyStore(context as unknown as PluginContext<unknown>).create(connectionId);
  return `${BASE}/${connectionId}/encryption-keys/${key.id}`;
}

const itemRoute = (route: string, status: number, mutates: boolean, body?: unknown): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    return { path: `${BASE}/${await freshConnection(admin)}`, body };
  },
});

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: `GET ${BASE}`,
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: `${BASE}?limit=5` }),
  },
  {
    route: `POST ${BASE}`,
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    prepare: (admin) => Promise.resolve({ path: BASE, body: connectionBody(admin) }),
  },
  itemRoute(`GET ${BASE}/:connectionId`, 200, false),
  itemRoute(`PATCH ${BASE}/:connectionId`, 200, true, { enabled: false, displayName: "Renamed" }),
  itemRoute(`DELETE ${BASE}/:connectionId`, 204, true),
  {
    route: `GET ${BASE}/:connectionId/encryption-keys`,
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    async prepare(admin) {
      return { path: `${BASE}/${await freshConnection(admin)}/encryption-keys` };
    },
  },
  {
    route: `POST ${BASE}/:connectionId/encryption-keys`,
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    async prepare(admin) {
      return { path: `${BASE}/${await freshConnection(admin)}/encryption-keys`, body: {} };
    },
  },
  {
    route: `DELETE ${BASE}/:connectionId/encryption-keys/:keyId`,
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 204,
    async prepare(admin) {
      return { path: await freshKey(admin) };
    },
  },
  // Starting a test sign-in stores a short-lived flow record (like a sign-in in flight), not a change
  // of anything an administrator manages: no audit entry, as for reads.
  {
    route: `POST ${BASE}/:connectionId/test-sign-in`,
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    async prepare(admin) {
      return {
        path: `${BASE}/${await freshConnection(admin)}/test-sign-in`,
        body: { returnTo: `${admin.bed.config.server.baseUrl}/svc-admin/ui/` },
      };
    },
  },
  {
    route: `GET ${BASE}/:connectionId/test-sign-in`,
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    async prepare(admin) {
      return { path: `${BASE}/${await freshConnection(admin)}/test-sign-in` };
    },
  },
];
