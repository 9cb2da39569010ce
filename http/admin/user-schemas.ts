/**
 * The request and answer schemas of the admin user routes (`http/admin/users.ts`), and the
 * views that turn records into answers. The handlers validate with these constants and the
 * OpenAPI document is generated from the same ones.
 *
 * @module
 */
import * as v from "valibot";
import { RESETTABLE_FACTORS } from "../../core/accounts/factor-reset.ts";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "../../core/accounts/flows.ts";
import { UUID_PATTERN } from "../../core/ids.ts";
import type { Organization } from "../../core/storage/organizations.ts";
import type { SessionRecord } from "../../core/storage/sessions.ts";
import type { User } from "../../core/storage/users.ts";
import { InviteUserSchema } from "../routes/account.ts";
import { listSchema, PAGE_QUERY_ENTRIES } from "./kit.ts";

/** An email address (the invitation route's rule: trimmed, at most 320 characters, one `@`). */
const EmailSchema = InviteUserSchema.entries.email;

const displayName = v.pipe(
  v.string("displayName must be a string"),
  v.trim(),
  v.minLength(1, "displayName must not be empty"),
  v.maxLength(200, "displayName must have at most 200 characters"),
);

/** The ABAC attribute bag: a JSON object (keys of 1–100 characters). */
const AttributesSchema = v.pipe(
  v.record(
    v.pipe(v.string(), v.minLength(1, "attribute names must not be empty"), v.maxLength(100)),
    v.unknown(),
  ),
  v.description("The user's ABAC attribute bag (a JSON object), evaluated by grant conditions."),
);

const reason = v.pipe(
  v.string("reason must be a string"),
  v.trim(),
  v.minLength(1, "reason must not be empty"),
  v.maxLength(500, "reason must have at most 500 characters"),
  v.description("Why (kept in the audit entry; not shown to the user)."),
);

/** The body of `POST /svc-admin/users`. */
export const CreateUserSchema = v.strictObject({
  email: EmailSchema,
  displayName: v.optional(v.nullable(displayName)),
  password: v.optional(
    v.pipe(
      v.string("password must be a string"),
      v.minLength(MIN_PASSWORD_LENGTH, `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`),
      v.maxLength(MAX_PASSWORD_LENGTH, `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`),
      v.description("Stored as one argon2id credential. Absent: a password-less user, invitable."),
    ),
  ),
  emailVerified: v.optional(v.boolean("emailVerified must be true or false")),
  attributes: v.optional(AttributesSchema),
  orgId: v.optional(
    v.pipe(
      v.string("orgId must be a string"),
      v.regex(UUID_PATTERN, "orgId must be a UUID"),
      v.description("Makes the user a member of this organization (an org admin's own by default)."),
    ),
  ),
});

/** The body of `PATCH /svc-admin/users/{userId}`: at least one field. */
export const UpdateUserSchema = v.pipe(
  v.strictObject({
    displayName: v.optional(v.nullable(displayName)),
    attributes: v.optional(
      v.pipe(AttributesSchema, v.description("Replaces the whole attribute bag (not merged).")),
    ),
    email: v.optional(
      v.pipe(
        EmailSchema,
        v.description(
          "A new address: `emailVerified` becomes false and a verification link is mailed to it.",
        ),
      ),
    ),
  }),
  v.check(
    (body) => Object.values(body).some((value) => value !== undefined),
    "Give at least one of displayName, attributes, email.",
  ),
);

/** The query of `GET /svc-admin/users`. */
export const ListUsersQuerySchema = v.strictObject({
  q: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(320),
      v.description("Case-insensitive prefix of the email or of the display name."),
    ),
  ),
  status: v.optional(v.picklist(["Active", "Suspended"], "status must be Active or Suspended")),
  orgId: v.optional(
    v.pipe(
      v.string(),
      v.description("Only members of this organization (for an org admin: its own, the default)."),
    ),
  ),
  ...PAGE_QUERY_ENTRIES,
});

/** The query of `GET /svc-admin/users/{userId}`. */
export const ReadUserQuerySchema = v.strictObject({
  expand: v.optional(
    v.pipe(
      v.picklist(["organizations"], "expand must be organizations"),
      v.description("`organizations`: add the user's organizations (an org admin sees only its own)."),
    ),
  ),
});

/** The body of `POST /svc-admin/users/{userId}/suspend`. */
export const SuspendUserSchema = v.strictObject({ reason });

/** The body of `POST /svc-admin/users/{userId}/reactivate` (optional). */
export const ReactivateUserSchema = v.strictObject({ reason: v.optional(reason) });

/** The body of `POST /svc-admin/users/{userId}/factors/reset`. */
export const ResetFactorsSchema = v.strictObject({
  factors: v.optional(
    v.pipe(
      v.array(v.picklist(RESETTABLE_FACTORS, `factors: each one of ${RESETTABLE_FACTORS.join(", ")}`)),
      v.minLength(1, "factors must not be empty (omit it to reset every factor)"),
      v.maxLength(RESETTABLE_FACTORS.length),
      v.description("The factors to remove; absent: all of them."),
    ),
  ),
  reason,
});

/** A user as the admin API shows it. */
export const AdminUserSchema = v.pipe(
  v.object({
    id: v.string(),
    email: v.string(),
    emailVerified: v.boolean(),
    displayName: v.nullable(v.string()),
    status: v.picklist(["Active", "Suspended"]),
    attributes: v.record(v.string(), v.unknown()),
    isBreakGlass: v.boolean(),
    anonymizedAt: v.nullable(v.string()),
    createdAt: v.string(),
    updatedAt: v.string(),
    version: v.pipe(v.number(), v.description('Also the `ETag` (`"<version>"`).')),
    organizations: v.optional(
      v.array(v.object({ id: v.string(), name: v.string(), displayName: v.string() })),
    ),
    invitationPending: v.optional(
      v.pipe(
        v.boolean(),
        v.description(
          "In lists and `GET /svc-admin/users/{userId}`: true for an invited user who has not accepted (no password, no passkey, address not verified).",
        ),
      ),
    ),
  }),
  v.title("AdminUser"),
);

/** A page of users. */
export const AdminUserListSchema = v.pipe(listSchema(AdminUserSchema), v.title("AdminUserList"));

/** A session of a user. */
export const AdminSessionSchema = v.pipe(
  v.object({
    id: v.string(),
    createdAt: v.string(),
    lastSeenAt: v.string(),
    idleExpiresAt: v.string(),
    absoluteExpiresAt: v.string(),
    mfa: v.string(),
    ipAddress: v.nullable(v.string()),
    deviceDescription: v.nullable(v.string()),
    impersonation: v.boolean(),
  }),
  v.title("AdminUserSession"),
);

/** A page of a user's active sessions. */
export const AdminSessionListSchema = v.pipe(listSchema(AdminSessionSchema), v.title("AdminUserSessionList"));

/** The answer of ending every session of a user. */
export const SessionsEndedSchema = v.pipe(
  v.object({ userId: v.string(), sessionsEnded: v.number(), refreshTokensRevoked: v.number() }),
  v.title("AdminUserSessionsEnded"),
);

/** The answer of a suspension. */
export const SuspensionSchema = v.pipe(
  v.object({
    userId: v.string(),
    wasSuspended: v.boolean(),
    sessionsEnded: v.number(),
    refreshTokensRevoked: v.number(),
    apiKeysRevoked: v.number(),
  }),
  v.title("AdminUserSuspension"),
);

/** The answer of a factor reset. */
export const FactorResetSchema = v.pipe(
  v.object({
    userId: v.string(),
    factors: v.array(v.picklist(RESETTABLE_FACTORS)),
    removed: v.object({
      totp: v.boolean(),
      emailOtp: v.boolean(),
      passkeys: v.number(),
      recoveryCodes: v.number(),
    }),
  }),
  v.title("AdminUserFactorReset"),
);

/** A user as the admin API shows it (never a credential, hash or stamp). */
export function adminUserView(user: User, organizations?: readonly Organization[]) {
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    displayName: user.displayName,
    status: user.status,
    attributes: user.attributes,
    isBreakGlass: user.isBreakGlass,
    anonymizedAt: user.anonymizedAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
    version: user.version,
    ...(organizations === undefined ? {} : {
      organizations: organizations.map((o) => ({ id: o.id, name: o.name, displayName: o.displayName })),
    }),
  };
}

/** The fields of a user an audit entry records before and after a change. */
export function userAuditView(user: User) {
  return {
    email: user.email,
    emailVerified: user.emailVerified,
    displayName: user.displayName,
    status: user.status,
    attributes: user.attributes,
    version: user.version,
  };
}

/** A session as the admin API shows it. */
export function adminSessionView(s: SessionRecord) {
  return {
    id: s.id,
    createdAt: s.createdAt.toISOString(),
    lastSeenAt: s.lastSeenAt.toISOString(),
    idleExpiresAt: s.idleExpiresAt.toISOString(),
    absoluteExpiresAt: s.absoluteExpiresAt.toISOString(),
    mfa: s.mfa,
    ipAddress: s.ipAddress,
    deviceDescription: s.deviceDescription,
    impersonation: s.impersonationId !== null,
  };
}
