/**
 * Admin route cases of the routes that predate the admin API: webhooks (targets in
 * organization A, so A's administrator manages them and B's sees 404), the audit chain and
 * retention (global only), erasure (global only), invitations and authorization inspection
 * (organization A named in the request).
 */
import { randomToken } from "../../../../core/random.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

const MOUNT = "/svc-admin/webhooks";
let serial = 0;

/** A fresh webhook endpoint of organization A. */
async function freshEndpoint(admin: AdminBed): Promise<string> {
  const endpoint = await admin.bed.storage.webhooks.createEndpoint({
    realmId: admin.realmId,
    orgId: admin.orgA,
    url: "https://hooks.example.com/svc",
    secret: `whsec_${randomToken(admin.bed.random, 32)}`,
    eventPatterns: ["user.*"],
  });
  return endpoint.id;
}

/** A fresh endpoint of organization A with one dead-lettered delivery. */
async function deadLetter(admin: AdminBed): Promise<{ endpointId: string; deliveryId: string }> {
  const endpointId = await freshEndpoint(admin);
  const webhooks = admin.bed.storage.webhooks;
  const delivery = await webhooks.enqueue(endpointId, "webhook.test", "{}");
  const claimed = await webhooks.claimDue({ limit: 1000 });
  if (!claimed.some((c) => c.delivery.id === delivery.id)) {
    throw new Error("the fresh delivery was not claimed");
  }
  await webhooks.markFailed(delivery.id, { error: "boom", statusCode: 500 }, { retryDelaysMs: [] });
  return { endpointId, deliveryId: delivery.id };
}

const endpointRoute = (
  route: string,
  status: number,
  mutates: boolean,
  suffix = "",
  body?: unknown,
): AdminRouteCase => ({
  route,
  mutates,
  orgAdmin: true,
  otherOrg: 404,
  status,
  async prepare(admin) {
    return { path: `${MOUNT}/${await freshEndpoint(admin)}${suffix}`, body };
  },
});

const globalOnly = (
  route: string,
  status: number,
  mutates: boolean,
  prepare: AdminRouteCase["prepare"],
): AdminRouteCase => ({ route, mutates, orgAdmin: false, otherOrg: 403, status, prepare });

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: `GET ${MOUNT}`,
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: (admin) => Promise.resolve({ path: `${MOUNT}?orgId=${admin.orgA}` }),
  },
  {
    route: `POST ${MOUNT}`,
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 201,
    prepare: (admin) =>
      Promise.resolve({
        path: MOUNT,
        body: { url: "https://hooks.example.com/svc", eventPatterns: ["user.*"], orgId: admin.orgA },
      }),
  },
  endpointRoute(`GET ${MOUNT}/:endpointId`, 200, false),
  endpointRoute(`PATCH ${MOUNT}/:endpointId`, 200, true, "", { description: "changed" }),
  endpointRoute(`DELETE ${MOUNT}/:endpointId`, 204, true),
  endpointRoute(`POST ${MOUNT}/:endpointId/rotate-secret`, 200, true, "/rotate-secret", {
    overlapSeconds: 60,
  }),
  endpointRoute(`POST ${MOUNT}/:endpointId/test`, 202, true, "/test"),
  endpointRoute(`GET ${MOUNT}/:endpointId/deliveries`, 200, false, "/deliveries"),
  {
    route: `POST ${MOUNT}/:endpointId/deliveries/:deliveryId/replay`,
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 202,
    async prepare(admin) {
      const { endpointId, deliveryId } = await deadLetter(admin);
      return { path: `${MOUNT}/${endpointId}/deliveries/${deliveryId}/replay` };
    },
  },
  globalOnly(
    "GET /svc-admin/audit/entries",
    200,
    false,
    () => Promise.resolve({ path: "/svc-admin/audit/entries?limit=5" }),
  ),
  globalOnly(
    "GET /svc-admin/audit/verify",
    200,
    false,
    () => Promise.resolve({ path: "/svc-admin/audit/verify" }),
  ),
  globalOnly(
    "POST /svc-admin/audit/retention",
    200,
    true,
    // One security event older than the cutoff: a run that finds nothing old enough changes nothing.
    // (Its id is not drawn from the bed's seeded random source, whose UUIDs repeat after 4095.)
    async (admin) => {
      await admin.bed.database.db.insertInto("security_events").values({
        id: crypto.randomUUID(),
        realm_id: admin.realmId,
        user_id: admin.users.plain,
        kind: "login.succeeded",
        occurred_at: new Date(admin.bed.clock.now() - 3651 * 86_400_000),
        data_json: null,
        ip_address: null,
        device_description: null,
      }).execute();
      return { path: "/svc-admin/audit/retention", body: { securityEventsOlderThanDays: 3650 } };
    },
  ),
  // POST /svc-admin/users/:userId/erase: its case is with the other user routes (cases/users.ts).
  {
    route: "POST /svc-admin/users/invite",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 201,
    prepare: (admin) =>
      Promise.resolve({
        path: "/svc-admin/users/invite",
        body: { email: `invitee-${++serial}-${Date.now()}@example.test`, orgId: admin.orgA },
      }),
  },
  {
    route: "POST /svc-admin/authz/inspect",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: (admin) =>
      Promise.resolve({
        path: "/svc-admin/authz/inspect",
        body: { userId: admin.users.plain, orgId: admin.orgA, check: { permission: "docs:org:read" } },
      }),
  },
];
