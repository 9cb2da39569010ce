/**
 * The `svc:` permissions of the mail outbox (issue 14). Mail is realm-level and carries the
 * one secret each message delivers (a code, a reset or invitation link), so reading it is a
 * global permission only: an administrator sees the messages sent to addresses of the realm's users.
 *
 * @module
 */
import type { PermissionDefinition } from "../permission-definition.ts";

/** Reading the mail outbox of the realm (subjects, delivery state, and bodies with their links). */
export const MAIL_READ_GLOBAL = "svc:global:mail-read";

/** The permissions of this area, in catalog order. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  {
    id: MAIL_READ_GLOBAL,
    description:
      "Read the mail sent to the realm's users: subjects, delivery state, and bodies (which hold codes and links).",
  },
];
