/**
 * Admin route cases: SCIM connections (the `scim` plugin). The matrix's organization
 * administrators hold svc's `svc:org:*` only, not `scim:org:*`, so they get 403 here; the plugin's
 * own matrix (`test/plugins/scim/admin_fence_test.ts`) covers the organization-scoped permissions.
 */
import { connectionStore } from "../../../../plugins/scim/store.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

const BASE = "/svc-admin/scim/connections";

/** A fresh connection of organization A, written through the plugin's store; answers its id. */
async function freshConnection(admin: AdminBed): Promise<string> {
  const id = crypto.randomUUID();
  await connectionStore(admin.bed.storage.pluginSql).create({
    id,
    realmId: admin.realmId,
    orgId: admin.orgA,
    displayName: "Okta",
    tokenHash: crypto.randomUUID().replaceAll("-", ""),
    deleteMode: "remove_membership",
    groupRoles: {},
    now: new Date(admin.bed.clock.now()),
  });
  return id;
}

const itemRoute = (
  route: string,
  status: number,
  mutates: boolean,
  suffix = "",
  body?: unknown,
): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    return { path: `${BASE}/${await freshConnection(admin)}${suffix}`, body };
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
    prepare: (admin) => Promise.resolve({ path: BASE, body: { orgId: admin.orgA, displayName: "Entra ID" } }),
  },
  itemRoute(`GET ${BASE}/:connectionId`, 200, false),
  itemRoute(`PATCH ${BASE}/:connectionId`, 200, true, "", { displayName: "Renamed", deleteMode: "erase" }),
  itemRoute(`POST ${BASE}/:connectionId/rotate`, 200, true, "/rotate", { overlapSeconds: 60 }),
  itemRoute(`DELETE ${BASE}/:connectionId`, 204, true),
  itemRoute(`GET ${BASE}/:connectionId/log`, 200, false, "/log"),
];
