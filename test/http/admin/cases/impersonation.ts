/** Admin route cases: impersonation and break-glass. */
import { createBreakGlassAccount, rotateBreakGlassPassword } from "../../../../core/break-glass/account.ts";
import type { Impersonation } from "../../../../core/storage/impersonations.ts";
import type { AdminBed, AdminCaller } from "../../../support/admin.ts";
import { seeder, uuid } from "../../../support/seed.ts";
import type { AdminRouteCase } from "../case.ts";

type Caller = AdminCaller | null;

/** A fresh user, member of organization A. */
async function memberOfA(bed: AdminBed): Promise<string> {
  const userId = await seeder(bed.bed.database.db).user(bed.realmId);
  await bed.bed.storage.organizations.addMember(bed.orgA, userId);
  return userId;
}

/** Ends the caller's current impersonation, so that it may start another. */
async function endCurrent(bed: AdminBed, as: Caller): Promise<void> {
  if (as === null) return;
  const current = await bed.bed.storage.impersonations.current(bed.users[as]);
  if (current !== null) await bed.bed.storage.impersonations.end(current.id);
}

/** An impersonation record of a target in organization A (by `actorId`, default a fresh user). */
async function record(
  bed: AdminBed,
  options: { actorId?: string; targetId?: string; consent?: boolean; orgId?: string | null } = {},
): Promise<Impersonation> {
  return await bed.bed.storage.impersonations.create({
    id: uuid(),
    realmId: bed.realmId,
    actorId: options.actorId ?? await seeder(bed.bed.database.db).user(bed.realmId),
    targetId: options.targetId ?? await memberOfA(bed),
    orgId: options.orgId ?? null,
    reason: "fence matrix",
    consentRequired: options.consent ?? false,
    expiresAt: new Date(bed.bed.clock.now() + 30 * 60_000),
  });
}

const passwords = new WeakMap<AdminBed, string>();

/** Makes sure the realm has a break-glass account; returns its current password. */
async function breakGlassPassword(bed: AdminBed): Promise<string> {
  const core = {
    storage: bed.bed.storage,
    passwords: bed.bed.login.passwords,
    random: bed.bed.random,
    clock: bed.bed.clock,
  };
  const actor = { id: "test", kind: "System" as const };
  const { password } = await bed.bed.storage.breakGlass.account(bed.realmId) === null
    ? await createBreakGlassAccount(core, { realmId: bed.realmId, actor })
    : await rotateBreakGlassPassword(core, { realmId: bed.realmId, actor });
  passwords.set(bed, password);
  return password;
}

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "POST /svc-admin/impersonation",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 201,
    async prepare(bed, as) {
      await endCurrent(bed, as);
      return {
        path: "/svc-admin/impersonation",
        body: { targetUserId: await memberOfA(bed), reason: "ticket 1" },
      };
    },
  },
  {
    route: "GET /svc-admin/impersonation",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    async prepare(bed) {
      const { targetId } = await record(bed);
      return { path: `/svc-admin/impersonation?targetUserId=${targetId}&state=current` };
    },
  },
  {
    route: "GET /svc-admin/impersonation/:id",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    async prepare(bed) {
      return { path: `/svc-admin/impersonation/${(await record(bed)).id}` };
    },
  },
  {
    route: "POST /svc-admin/impersonation/:id/token",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    async prepare(bed, as) {
      await endCurrent(bed, as);
      const pending = await record(bed, {
        actorId: as === null ? undefined : bed.users[as],
        consent: true,
        orgId: as === "orgA" ? bed.orgA : null,
      });
      await bed.bed.storage.impersonations.approveConsent(pending.id);
      return { path: `/svc-admin/impersonation/${pending.id}/token` };
    },
  },
  {
    route: "POST /svc-admin/impersonation/:id/end",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    async prepare(bed) {
      return { path: `/svc-admin/impersonation/${(await record(bed)).id}/end` };
    },
  },
  {
    // The fence of approval is "the caller is the target": the realm and org A administrators
    // approve requests addressed to them; a token addressed to someone else is 403.
    route: "POST /svc-admin/impersonation/consent/approve",
    mutates: true,
    orgAdmin: true,
    otherOrg: 403,
    status: 200,
    async prepare(bed, as) {
      const own = as === "global" || as === "orgA";
      const targetId = own ? bed.users[as] : await memberOfA(bed);
      const pending = await record(bed, { targetId, consent: true });
      const { token } = await bed.bed.auth.tokens.mint("impconsent+svc", {
        realm: bed.realmId,
        sub: targetId,
        act: { sub: pending.actorId, imp: pending.id },
      });
      return { path: "/svc-admin/impersonation/consent/approve", body: { token } };
    },
  },
  {
    route: "GET /svc-admin/impersonation/consent",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/impersonation/consent" }),
  },
  {
    route: "PUT /svc-admin/impersonation/consent",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    // The opposite of the current mode: setting the mode it has changes nothing (no entry).
    prepare: async (bed) => ({
      path: "/svc-admin/impersonation/consent",
      body: {
        consentRequired: !(await bed.bed.storage.impersonations.consentSetting(bed.realmId, null))
          .consentRequired,
      },
    }),
  },
  {
    route: "GET /svc-admin/impersonation/consent/organizations/:orgId",
    mutates: false,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: (bed) => Promise.resolve({ path: `/svc-admin/impersonation/consent/organizations/${bed.orgA}` }),
  },
  {
    route: "PUT /svc-admin/impersonation/consent/organizations/:orgId",
    mutates: true,
    orgAdmin: true,
    otherOrg: 404,
    status: 200,
    prepare: async (bed) => ({
      path: `/svc-admin/impersonation/consent/organizations/${bed.orgA}`,
      body: {
        consentRequired: !(await bed.bed.storage.impersonations.consentSetting(bed.realmId, bed.orgA))
          .consentRequired,
      },
    }),
  },
  {
    route: "GET /svc-admin/break-glass/status",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/break-glass/status" }),
  },
  {
    route: "POST /svc-admin/break-glass/drill",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    async prepare(bed) {
      const password = passwords.get(bed) ?? await breakGlassPassword(bed);
      return { path: "/svc-admin/break-glass/drill", body: { password } };
    },
  },
  {
    route: "POST /svc-admin/break-glass/rotate",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    async prepare(bed) {
      if (passwords.get(bed) === undefined) await breakGlassPassword(bed);
      // The rotation answers a new password; the drill case reads the current one.
      passwords.delete(bed);
      return { path: "/svc-admin/break-glass/rotate" };
    },
  },
];
