/** Admin route cases: workload federation trust policies (the `workload-federation` plugin). */
import { sha256Hex } from "../../../../core/digest.ts";
import { policyStore } from "../../../../plugins/workload-federation/policies-store.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

let serial = 0;
const unique = (what: string) => `${what}-${Date.now().toString(36)}-${++serial}`;

/** A fresh service account of the bed's realm; answers its id. */
async function freshServiceAccount(admin: AdminBed): Promise<string> {
  const account = await admin.bed.storage.serviceAccounts.create({
    realmId: admin.realmId,
    key: unique("wl"),
    displayName: "Workload",
    secretHash: sha256Hex(unique("secret")),
  });
  return account.id;
}

/** The body of a new policy for a fresh service account. */
async function policyBody(admin: AdminBed) {
  return {
    name: unique("policy"),
    issuer: "https://token.actions.githubusercontent.com",
    jwksUri: "https://token.actions.githubusercontent.com/.well-known/jwks",
    audience: "https://svc.example.test",
    requiredClaims: { repository: "acme/app" },
    serviceAccountId: await freshServiceAccount(admin),
  };
}

/** A fresh policy of the bed's realm (written through the plugin's store); answers its id. */
async function freshPolicy(admin: AdminBed): Promise<string> {
  const body = await policyBody(admin);
  const policy = await policyStore(admin.bed.storage.pluginSql).create(crypto.randomUUID(), admin.realmId, {
    ...body,
    jwks: null,
    enabled: true,
  }, new Date(admin.bed.clock.now()));
  return policy.id;
}

const itemRoute = (route: string, status: number, mutates: boolean, body?: unknown): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    return { path: `/svc-admin/workload/policies/${await freshPolicy(admin)}`, body };
  },
});

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "GET /svc-admin/workload/policies",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/workload/policies?limit=5" }),
  },
  {
    route: "POST /svc-admin/workload/policies",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    async prepare(admin) {
      return { path: "/svc-admin/workload/policies", body: await policyBody(admin) };
    },
  },
  itemRoute("GET /svc-admin/workload/policies/:policyId", 200, false),
  itemRoute("PATCH /svc-admin/workload/policies/:policyId", 200, true, { enabled: false }),
  itemRoute("DELETE /svc-admin/workload/policies/:policyId", 204, true),
];
