/** Admin route cases: credentials (service accounts, API keys, signing keys). */
import { createApiKey } from "../../../../core/credentials/api-keys.ts";
import { createServiceAccount } from "../../../../core/credentials/service-accounts.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

let serial = 0;
const uniqueKey = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++serial}`;

/** A fresh service account of the bed's realm (disabled when asked). */
export async function freshServiceAccount(admin: AdminBed, disabled = false): Promise<string> {
  const { account } = await createServiceAccount(admin.bed.storage.serviceAccounts, admin.bed.random, {
    realmId: admin.realmId,
    key: uniqueKey("sa"),
    displayName: "Fresh account",
  });
  if (disabled) await admin.bed.storage.serviceAccounts.setDisabled(account.id, true);
  return account.id;
}

/** A fresh API key of the `plain` caller (a member of organization A). */
export async function freshUserApiKey(admin: AdminBed): Promise<string> {
  const { key } = await createApiKey(admin.bed.storage.apiKeys, admin.bed.random, {
    realmId: admin.realmId,
    ownerKind: "User",
    ownerId: admin.users.plain,
    name: uniqueKey("key"),
  });
  return key.id;
}

const serviceAccountRoute = (
  route: string,
  status: number,
  mutates: boolean,
  path: (id: string) => string,
  options: { disabled?: boolean; body?: unknown } = {},
): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    const id = await freshServiceAccount(admin, options.disabled);
    return { path: path(id), body: options.body };
  },
});

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "GET /svc-admin/service-accounts",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/service-accounts?limit=5" }),
  },
  {
    route: "POST /svc-admin/service-accounts",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    prepare: () =>
      Promise.resolve({
        path: "/svc-admin/service-accounts",
        body: { key: uniqueKey("ci"), displayName: "CI pipeline" },
      }),
  },
  serviceAccountRoute(
    "GET /svc-admin/service-accounts/:serviceAccountId",
    200,
    false,
    (id) => `/svc-admin/service-accounts/${id}`,
  ),
  serviceAccountRoute(
    "POST /svc-admin/service-accounts/:serviceAccountId/rotate-secret",
    200,
    true,
    (id) => `/svc-admin/service-accounts/${id}/rotate-secret`,
    { body: { overlapSeconds: 60 } },
  ),
  serviceAccountRoute(
    "POST /svc-admin/service-accounts/:serviceAccountId/disable",
    200,
    true,
    (id) => `/svc-admin/service-accounts/${id}/disable`,
  ),
  serviceAccountRoute(
    "POST /svc-admin/service-accounts/:serviceAccountId/enable",
    200,
    true,
    (id) => `/svc-admin/service-accounts/${id}/enable`,
    { disabled: true },
  ),
  serviceAccountRoute(
    "DELETE /svc-admin/service-accounts/:serviceAccountId",
    204,
    true,
    (id) => `/svc-admin/service-accounts/${id}`,
  ),
  {
    route: "GET /svc-admin/api-keys",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    async prepare(admin) {
      await freshUserApiKey(admin);
      return { path: `/svc-admin/api-keys?ownerKind=User&ownerId=${admin.users.plain}` };
    },
  },
  {
    route: "POST /svc-admin/api-keys",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    async prepare(admin) {
      return {
        path: "/svc-admin/api-keys",
        body: {
          ownerKind: "ServiceAccount",
          ownerId: await freshServiceAccount(admin),
          name: "deploy",
          expiresAt: new Date(admin.bed.clock.now() + 86_400_000).toISOString(),
        },
      };
    },
  },
  {
    route: "POST /svc-admin/api-keys/:apiKeyId/revoke",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 204,
    async prepare(admin) {
      return { path: `/svc-admin/api-keys/${await freshUserApiKey(admin)}/revoke` };
    },
  },
  {
    route: "GET /svc-admin/signing-keys",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/signing-keys" }),
  },
  {
    route: "POST /svc-admin/signing-keys/rotate",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/signing-keys/rotate" }),
  },
];
