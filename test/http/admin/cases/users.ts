/**
 * Admin route cases: users. Every target is a fresh user who belongs to organization A only
 * (so the administrator of A may manage them and the administrator of B cannot see them).
 */
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

let sequence = 0;
const uniqueEmail = () => `matrix-${Date.now().toString(36)}-${(sequence++).toString(36)}@example.test`;

/** A fresh active user, member of organization A only. */
export async function memberOfA(admin: AdminBed): Promise<string> {
  const { storage } = admin.bed;
  const user = await storage.users.create({
    realmId: admin.realmId,
    email: uniqueEmail(),
    emailVerified: true,
  });
  await storage.organizations.addMember(admin.orgA, user.id);
  return user.id;
}

const userPath = async (admin: AdminBed, suffix = "") => ({
  path: `/svc-admin/users/${await memberOfA(admin)}${suffix}`,
});

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "POST /svc-admin/users",
    mutates: true,
    // Realm-wide only: an organization admin brings people in by invitation.
    orgAdmin: false,
    otherOrg: 403,
    status: 201,
    prepare: (admin) =>
      Promise.resolve({
        path: "/svc-admin/users",
        body: { email: uniqueEmail(), displayName: "Matrix", orgId: admin.orgA },
      }),
  },
  {
    route: "GET /svc-admin/users",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: (admin) => Promise.resolve({ path: `/svc-admin/users?orgId=${admin.orgA}&limit=5` }),
  },
  {
    route: "GET /svc-admin/users/:userId",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: (admin) => userPath(admin, "?expand=organizations"),
  },
  {
    route: "PATCH /svc-admin/users/:userId",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: async (admin) => ({
      ...await userPath(admin),
      body: { displayName: "Renamed", attributes: { a: 1 } },
    }),
  },
  {
    route: "POST /svc-admin/users/:userId/suspend",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: async (admin) => ({ ...await userPath(admin, "/suspend"), body: { reason: "matrix" } }),
  },
  {
    route: "POST /svc-admin/users/:userId/reactivate",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: async (admin) => {
      const userId = await memberOfA(admin);
      await admin.bed.storage.users.update(userId, { status: "Suspended" });
      return { path: `/svc-admin/users/${userId}/reactivate`, body: { reason: "matrix" } };
    },
  },
  {
    route: "GET /svc-admin/users/:userId/sessions",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: (admin) => userPath(admin, "/sessions"),
  },
  {
    route: "GET /svc-admin/users/:userId/security-events",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: (admin) => userPath(admin, "/security-events"),
  },
  {
    route: "DELETE /svc-admin/users/:userId/sessions/:sessionId",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 204,
    prepare: async (admin) => {
      const userId = await memberOfA(admin);
      const { session } = await admin.bed.auth.sessions.signIn({
        realmId: admin.realmId,
        userId,
        mfa: "Password",
      });
      return { path: `/svc-admin/users/${userId}/sessions/${session.id}` };
    },
  },
  {
    route: "DELETE /svc-admin/users/:userId/sessions",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: async (admin) => {
      const userId = await memberOfA(admin);
      await admin.bed.auth.sessions.signIn({ realmId: admin.realmId, userId, mfa: "Password" });
      return { path: `/svc-admin/users/${userId}/sessions` };
    },
  },
  {
    route: "POST /svc-admin/users/:userId/factors/reset",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    // The user has recovery codes: a reset that finds nothing to remove changes nothing (no entry).
    prepare: async (admin) => {
      const userId = await memberOfA(admin);
      await admin.bed.storage.recoveryCodes.replace(userId, [
        { id: crypto.randomUUID(), codeHash: "0".repeat(64) },
        { id: crypto.randomUUID(), codeHash: "1".repeat(64) },
      ]);
      return { path: `/svc-admin/users/${userId}/factors/reset`, body: { reason: "lost phone" } };
    },
  },
  {
    // The erasure route lives in http/routes/audit.ts; it is realm-wide only (`svc:global:users-erase`).
    route: "POST /svc-admin/users/:userId/erase",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: (admin) => userPath(admin, "/erase"),
  },
];
