/** Admin route cases: OIDC clients. */
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
];
