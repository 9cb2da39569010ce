/** Admin route cases: directory (realms, organizations, domains, members, teams, groups). */
import { EMAIL_DOMAIN } from "../../../../core/storage/organizations.ts";
import type { AdminBed } from "../../../support/admin.ts";
import type { AdminRouteCase } from "../case.ts";

let sequence = 0;
/** A name unique in this run. */
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence++).toString(36)}`;

/** A fresh user of the bed's realm, a member of organization A when asked. */
async function freshUser(bed: AdminBed, memberOfA = false): Promise<string> {
  const storage = bed.bed.storage;
  const user = await storage.users.create({ realmId: bed.realmId, email: `${unique("u")}@example.test` });
  if (memberOfA) await storage.organizations.addMember(bed.orgA, user.id);
  return user.id;
}

const freshTeam = async (bed: AdminBed) =>
  (await bed.bed.storage.teams.create({ orgId: bed.orgA, name: unique("team") })).id;
const freshGroup = async (bed: AdminBed) =>
  (await bed.bed.storage.groups.create({
    realmId: bed.realmId,
    orgId: bed.orgA,
    key: unique("group"),
    displayName: "G",
  })).id;

/** A route of organization A that its admin may use (B's admin: 404). */
const inOrgA = { orgAdmin: true, otherOrg: 404 } as const;
/** A realm-wide route (organization admins: 403). */
const realmWide = { orgAdmin: false, otherOrg: 403 } as const;

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  // ---- realms (callers of the default realm) ----
  {
    route: "GET /svc-admin/realms",
    mutates: false,
    ...realmWide,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/realms?limit=5" }),
  },
  {
    route: "POST /svc-admin/realms",
    mutates: true,
    ...realmWide,
    status: 201,
    prepare: () =>
      Promise.resolve({ path: "/svc-admin/realms", body: { name: unique("realm"), displayName: "R" } }),
  },
  {
    route: "GET /svc-admin/realms/:realmId",
    mutates: false,
    ...realmWide,
    status: 200,
    prepare: (bed) => Promise.resolve({ path: `/svc-admin/realms/${bed.realmId}` }),
  },
  {
    route: "PATCH /svc-admin/realms/:realmId",
    mutates: true,
    ...realmWide,
    status: 200,
    prepare: async (bed) => {
      const realm = await bed.bed.storage.realms.create({ name: unique("realm"), displayName: "Before" });
      return { path: `/svc-admin/realms/${realm.id}`, body: { displayName: "After" } };
    },
  },

  // ---- organizations ----
  {
    route: "POST /svc-admin/organizations",
    mutates: true,
    ...realmWide,
    status: 201,
    prepare: () =>
      Promise.resolve({
        path: "/svc-admin/organizations",
        body: { name: unique("org"), displayName: "Org" },
      }),
  },
  {
    route: "GET /svc-admin/organizations",
    mutates: false,
    ...realmWide,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/organizations?search=org&limit=10" }),
  },
  {
    route: "GET /svc-admin/organizations/:orgId",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: (bed) => Promise.resolve({ path: `/svc-admin/organizations/${bed.orgA}` }),
  },
  {
    route: "PATCH /svc-admin/organizations/:orgId",
    mutates: true,
    ...inOrgA,
    status: 200,
    prepare: (bed) =>
      Promise.resolve({ path: `/svc-admin/organizations/${bed.orgA}`, body: { displayName: unique("A") } }),
  },
  {
    route: "DELETE /svc-admin/organizations/:orgId",
    mutates: true,
    ...realmWide,
    status: 204,
    prepare: async (bed) => {
      const org = await bed.bed.storage.organizations.create({
        realmId: bed.realmId,
        name: unique("doomed"),
        displayName: "Doomed",
      });
      return { path: `/svc-admin/organizations/${org.id}` };
    },
  },

  // ---- domains ----
  {
    route: "GET /svc-admin/organizations/:orgId/domains",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: (bed) => Promise.resolve({ path: `/svc-admin/organizations/${bed.orgA}/domains` }),
  },
  {
    route: "POST /svc-admin/organizations/:orgId/domains",
    mutates: true,
    ...inOrgA,
    status: 201,
    prepare: (bed) =>
      Promise.resolve({
        path: `/svc-admin/organizations/${bed.orgA}/domains`,
        body: { kind: EMAIL_DOMAIN, value: `${unique("d")}.example` },
      }),
  },
  {
    route: "DELETE /svc-admin/organizations/:orgId/domains/:domainId",
    mutates: true,
    ...inOrgA,
    status: 204,
    prepare: async (bed) => {
      const domain = await bed.bed.storage.organizations.addDomain({
        orgId: bed.orgA,
        kind: EMAIL_DOMAIN,
        value: `${unique("d")}.example`,
      });
      return { path: `/svc-admin/organizations/${bed.orgA}/domains/${domain.id}` };
    },
  },
  {
    // The override (no DNS here) is the realm administrator's alone: A's admin gets 403, B's 404.
    route: "POST /svc-admin/organizations/:orgId/domains/:domainId/verify",
    mutates: true,
    orgAdmin: false,
    otherOrg: 404,
    status: 200,
    prepare: async (bed) => {
      const domain = await bed.bed.storage.organizations.addDomain({
        orgId: bed.orgA,
        kind: EMAIL_DOMAIN,
        value: `${unique("d")}.example`,
        verificationToken: "token",
      });
      return {
        path: `/svc-admin/organizations/${bed.orgA}/domains/${domain.id}/verify`,
        body: { override: true, reason: "verified by phone with the customer's IT" },
      };
    },
  },

  // ---- members ----
  {
    route: "GET /svc-admin/organizations/:orgId/members",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: (bed) =>
      Promise.resolve({ path: `/svc-admin/organizations/${bed.orgA}/members?offset=0&limit=2` }),
  },
  {
    // Organization admins bring people in by invitation, never by adding an account directly.
    route: "POST /svc-admin/organizations/:orgId/members",
    mutates: true,
    ...realmWide,
    status: 201,
    prepare: async (bed) => ({
      path: `/svc-admin/organizations/${bed.orgA}/members`,
      body: { userId: await freshUser(bed) },
    }),
  },
  {
    route: "DELETE /svc-admin/organizations/:orgId/members/:userId",
    mutates: true,
    ...inOrgA,
    status: 204,
    prepare: async (bed) => ({
      path: `/svc-admin/organizations/${bed.orgA}/members/${await freshUser(bed, true)}`,
    }),
  },

  // ---- teams ----
  {
    route: "POST /svc-admin/organizations/:orgId/teams",
    mutates: true,
    ...inOrgA,
    status: 201,
    prepare: (bed) =>
      Promise.resolve({ path: `/svc-admin/organizations/${bed.orgA}/teams`, body: { name: unique("team") } }),
  },
  {
    route: "GET /svc-admin/organizations/:orgId/teams",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: (bed) => Promise.resolve({ path: `/svc-admin/organizations/${bed.orgA}/teams` }),
  },
  {
    route: "GET /svc-admin/teams/:teamId",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: async (bed) => ({ path: `/svc-admin/teams/${await freshTeam(bed)}` }),
  },
  {
    route: "PATCH /svc-admin/teams/:teamId",
    mutates: true,
    ...inOrgA,
    status: 200,
    prepare: async (bed) => ({
      path: `/svc-admin/teams/${await freshTeam(bed)}`,
      body: { name: unique("renamed") },
    }),
  },
  {
    route: "DELETE /svc-admin/teams/:teamId",
    mutates: true,
    ...inOrgA,
    status: 204,
    prepare: async (bed) => ({ path: `/svc-admin/teams/${await freshTeam(bed)}` }),
  },
  {
    route: "GET /svc-admin/teams/:teamId/members",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: async (bed) => ({ path: `/svc-admin/teams/${await freshTeam(bed)}/members` }),
  },
  {
    route: "POST /svc-admin/teams/:teamId/members",
    mutates: true,
    ...inOrgA,
    status: 201,
    prepare: async (bed) => ({
      path: `/svc-admin/teams/${await freshTeam(bed)}/members`,
      body: { userId: await freshUser(bed, true) },
    }),
  },
  {
    route: "DELETE /svc-admin/teams/:teamId/members/:userId",
    mutates: true,
    ...inOrgA,
    status: 204,
    prepare: async (bed) => {
      const team = await freshTeam(bed);
      const user = await freshUser(bed, true);
      await bed.bed.storage.teams.addMember(team, user);
      return { path: `/svc-admin/teams/${team}/members/${user}` };
    },
  },

  // ---- groups (organization-level in A) ----
  {
    route: "POST /svc-admin/groups",
    mutates: true,
    ...inOrgA,
    status: 201,
    prepare: (bed) =>
      Promise.resolve({
        path: "/svc-admin/groups",
        body: { key: unique("group"), displayName: "G", orgId: bed.orgA },
      }),
  },
  {
    route: "GET /svc-admin/groups",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: (bed) => Promise.resolve({ path: `/svc-admin/groups?orgId=${bed.orgA}` }),
  },
  {
    route: "GET /svc-admin/groups/:groupId",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: async (bed) => ({ path: `/svc-admin/groups/${await freshGroup(bed)}` }),
  },
  {
    route: "PATCH /svc-admin/groups/:groupId",
    mutates: true,
    ...inOrgA,
    status: 200,
    prepare: async (bed) => ({
      path: `/svc-admin/groups/${await freshGroup(bed)}`,
      body: { displayName: "New" },
    }),
  },
  {
    route: "DELETE /svc-admin/groups/:groupId",
    mutates: true,
    ...inOrgA,
    status: 204,
    prepare: async (bed) => ({ path: `/svc-admin/groups/${await freshGroup(bed)}` }),
  },
  {
    route: "GET /svc-admin/groups/:groupId/members",
    mutates: false,
    ...inOrgA,
    status: 200,
    prepare: async (bed) => ({ path: `/svc-admin/groups/${await freshGroup(bed)}/members` }),
  },
  {
    route: "POST /svc-admin/groups/:groupId/members",
    mutates: true,
    ...inOrgA,
    status: 201,
    prepare: async (bed) => ({
      path: `/svc-admin/groups/${await freshGroup(bed)}/members`,
      body: { userId: await freshUser(bed, true) },
    }),
  },
  {
    route: "DELETE /svc-admin/groups/:groupId/members/:userId",
    mutates: true,
    ...inOrgA,
    status: 204,
    prepare: async (bed) => {
      const group = await freshGroup(bed);
      const user = await freshUser(bed, true);
      await bed.bed.storage.groups.addMember(group, user);
      return { path: `/svc-admin/groups/${group}/members/${user}` };
    },
  },
];
