/**
 * Admin route cases: upstream identity providers (the `federation` plugin). The matrix's
 * organization administrators hold svc's `svc:org:*` only, not `federation:org:*`, so they get 403
 * here; the plugin's own matrix (`test/plugins/federation/admin_fence_test.ts`) covers the
 * organization-scoped permissions.
 */
import type { PluginContext } from "../../../../mod.ts";
import { ProviderStore } from "../../../../plugins/federation/providers.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

const BASE = "/svc-admin/federation/providers";

/** A new provider's body, for organization A of the bed. */
function providerBody(admin: AdminBed) {
  return {
    orgId: admin.orgA,
    issuer: "https://idp.example.test",
    clientId: `svc-${crypto.randomUUID()}`,
    clientSecret: "an upstream client secret",
  };
}

/** A fresh provider of organization A, written through the plugin's store; answers its id. */
async function freshProvider(admin: AdminBed): Promise<string> {
  // The store needs a clock, a random source and the storage: the bed's, as a plugin gets them.
  const context = { clock: admin.bed.clock, random: admin.bed.random, storage: admin.bed.storage };
  const store = new ProviderStore(context as unknown as PluginContext<unknown>);
  const provider = await store.create({
    realmId: admin.realmId,
    ...providerBody(admin),
    scopes: ["openid", "email"],
    claimMapping: { email: "email", name: "name", attributes: {} },
    allowJitProvisioning: false,
    enabled: true,
  });
  return provider.id;
}

const itemRoute = (route: string, status: number, mutates: boolean, body?: unknown): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: false,
  otherOrg: 403,
  status,
  async prepare(admin) {
    return { path: `${BASE}/${await freshProvider(admin)}`, body };
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
    prepare: (admin) => Promise.resolve({ path: BASE, body: providerBody(admin) }),
  },
  itemRoute(`GET ${BASE}/:providerId`, 200, false),
  itemRoute(`PATCH ${BASE}/:providerId`, 200, true, { enabled: false, clientSecret: "a new secret" }),
  itemRoute(`DELETE ${BASE}/:providerId`, 204, true),
];
