/**
 * Admin route cases: OIDC clients, and the OIDC provider plugin's resources (APIs) and initial
 * access tokens (dynamic client registration).
 */
import { initialAccessTokenStore } from "../../../../plugins/oidc-provider/initial-access-tokens.ts";
import { resourceStore } from "../../../../plugins/oidc-provider/resources.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

let serial = 0;
const uniqueId = () => `app-${Date.now().toString(36)}-${++serial}`;

/** A fresh confidential client of the bed's realm; answers its row id. */
export async function freshOidcClient(admin: AdminBed): Promise<string> {
  const client = await admin.bed.storage.clients.create(admin.realmId, uniqueId(), {
    clientType: "confidential",
    redirectUris: ["https://app.example.test/callback"],
    allowedScopes: ["openid"],
  });
  return client.id;
}

const itemRoute = (
  route: string,
  status: number,
  mutates: boolean,
  body?: unknown,
): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    return { path: `/svc-admin/oidc/clients/${await freshOidcClient(admin)}`, body };
  },
});

/** A fresh resource of the bed's realm (written through the plugin's store); answers its id. */
async function freshResource(admin: AdminBed): Promise<string> {
  const resource = await resourceStore(admin.bed.storage.pluginSql).create(
    crypto.randomUUID(),
    admin.realmId,
    {
      identifier: `https://${uniqueId()}.example.test/api`,
      name: null,
      scopes: ["read"],
      accessTokenTtlSeconds: 600,
    },
    new Date(admin.bed.clock.now()),
  );
  return resource.id;
}

const resourceRoute = (route: string, status: number, mutates: boolean, body?: unknown): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    return { path: `/svc-admin/oidc/resources/${await freshResource(admin)}`, body };
  },
});

/** A fresh initial access token of the bed's realm (written through the plugin's store); answers its id. */
async function freshInitialAccessToken(admin: AdminBed): Promise<string> {
  const token = await initialAccessTokenStore(admin.bed.storage.pluginSql).create(
    crypto.randomUUID(),
    admin.realmId,
    `soi_${crypto.randomUUID()}`,
    { name: uniqueId(), maxUses: null, expiresAt: null },
    new Date(admin.bed.clock.now()),
  );
  return token.id;
}

const tokenRoute = (route: string, status: number, mutates: boolean): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    return { path: `/svc-admin/oidc/initial-access-tokens/${await freshInitialAccessToken(admin)}` };
  },
});

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "GET /svc-admin/oidc/clients",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/oidc/clients?limit=5" }),
  },
  {
    route: "POST /svc-admin/oidc/clients",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    prepare: () =>
      Promise.resolve({
        path: "/svc-admin/oidc/clients",
        body: {
          clientId: uniqueId(),
          clientType: "confidential",
          redirectUris: ["https://app.example.test/callback"],
        },
      }),
  },
  itemRoute("GET /svc-admin/oidc/clients/:clientRowId", 200, false),
  itemRoute("PATCH /svc-admin/oidc/clients/:clientRowId", 200, true, { suspended: true }),
  itemRoute("DELETE /svc-admin/oidc/clients/:clientRowId", 204, true),
  {
    route: "GET /svc-admin/oidc/resources",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/oidc/resources?limit=5" }),
  },
  {
    route: "POST /svc-admin/oidc/resources",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    prepare: () =>
      Promise.resolve({
        path: "/svc-admin/oidc/resources",
        body: { identifier: `https://${uniqueId()}.example.test/api`, scopes: ["read"] },
      }),
  },
  resourceRoute("GET /svc-admin/oidc/resources/:resourceId", 200, false),
  resourceRoute("PATCH /svc-admin/oidc/resources/:resourceId", 200, true, { accessTokenTtlSeconds: 900 }),
  resourceRoute("DELETE /svc-admin/oidc/resources/:resourceId", 204, true),
  {
    route: "GET /svc-admin/oidc/initial-access-tokens",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/oidc/initial-access-tokens?limit=5" }),
  },
  {
    route: "POST /svc-admin/oidc/initial-access-tokens",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    prepare: () =>
      Promise.resolve({
        path: "/svc-admin/oidc/initial-access-tokens",
        body: { name: uniqueId(), maxUses: 3 },
      }),
  },
  tokenRoute("GET /svc-admin/oidc/initial-access-tokens/:tokenId", 200, false),
  tokenRoute("DELETE /svc-admin/oidc/initial-access-tokens/:tokenId", 204, true),
];
