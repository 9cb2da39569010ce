/** Admin route cases: the mail outbox (issue 14). */
import type { AdminBed } from "../../../support/admin.ts";
import { seeder } from "../../../support/seed.ts";
import type { AdminRouteCase } from "../case.ts";

/** A message in the outbox to a fresh user of the realm; returns its id. */
async function messageToUser(bed: AdminBed): Promise<string> {
  const userId = await seeder(bed.bed.database.db).user(bed.realmId);
  const user = await bed.bed.storage.users.get(userId);
  const message = await bed.bed.storage.mailOutbox.add({
    realmId: bed.realmId,
    userId,
    kind: "password_reset",
    to: user!.email,
    from: "no-reply@localhost",
    subject: "Reset your password",
    text: "https://id.example.com/account/reset-password?token=t",
    html: "<p>reset</p>",
  });
  return message.id;
}

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "GET /svc-admin/mail",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    async prepare(bed) {
      await messageToUser(bed);
      return { path: "/svc-admin/mail?status=pending&limit=5" };
    },
  },
  {
    route: "GET /svc-admin/mail/:id",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    async prepare(bed) {
      return { path: `/svc-admin/mail/${await messageToUser(bed)}` };
    },
  },
];
