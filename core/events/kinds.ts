/**
 * Every event kind svc itself emits (core and the HTTP routes), with when it is emitted and the
 * fields of its `data`. This table is the one place a kind of svc is declared: the catalog
 * (`catalog.ts`), the generated event reference and the payload check of the test beds read it.
 *
 * A new kind: add an entry here (or, for a plugin, to its `events` with a `payload`) before the
 * code that emits it; a test that emits an undeclared kind or field fails. A kind is
 * `<family>.<name>` (see `EVENT_FAMILIES`); a kind outside the families also needs a name in
 * `EVENT_KINDS`. Kinds are stable: never rename one or change a field's meaning; add a field as
 * optional when old emitters may lack it.
 *
 * @module
 */
import { eventField as f, type EventPayload } from "./payload.ts";

/** A kind svc emits: when, and its payload. */
export interface CoreEventKind {
  /** When it is emitted. */
  readonly when: string;
  /** The fields of its `data`. */
  readonly payload: EventPayload;
}

const scimConnection = f.string("the SCIM connection, when the SCIM plugin made the change", {
  optional: true,
});
const viaScim = f.string("`scim` when the SCIM plugin made the change", { optional: true });
const actor = {
  actorId: f.string("who acted (a user, service account or API key id, or a component's name)"),
  actorKind: f.string(
    "what kind of principal acted: `User`, `ServiceAccount`, `ApiKey`, `System` or `BreakGlass`",
  ),
};
const roleFields = {
  roleId: f.string("the role"),
  key: f.string("the role's key"),
};
const grantFields = {
  grantId: f.string("the grant"),
  pattern: f.string("the grant's permission pattern"),
};
const policyFields = {
  policyId: f.string("the policy"),
  name: f.string("the policy's name"),
  principalKind: f.string("who the policy applies to: `User`, `ServiceAccount`, `Group` or `Team`"),
  principalId: f.string("the principal's id"),
};
const assignmentFields = {
  id: f.string("the role assignment"),
  roleId: f.string("the role assigned"),
  roleKey: f.string("the role's key (empty when the role is gone)"),
  principalKind: f.string("who holds it: `User`, `ServiceAccount`, `Group` or `Team`"),
  principalId: f.string("the principal's id"),
  orgId: f.string("the organization the assignment is scoped to; null for realm-wide", { nullable: true }),
};
const domainFields = {
  domainId: f.string("the domain"),
  kind: f.string("what the domain is used for (`email`, …)"),
  value: f.string("the domain name"),
};
const serviceAccountFields = {
  serviceAccountId: f.string("the service account"),
  key: f.string("the service account's key"),
};
const apiKeyFields = {
  apiKeyId: f.string("the API key"),
  ownerKind: f.string("who owns it: `User` or `ServiceAccount`"),
  ownerId: f.string("the owner's id"),
  name: f.string("the key's name"),
};
const impersonationFields = {
  impersonationId: f.string("the impersonation"),
  actorId: f.string("the administrator impersonating"),
  reason: f.string("the reason the administrator gave"),
};
const oidcClientFields = {
  id: f.string("the client's record id"),
  clientId: f.string("the OAuth `client_id`"),
};

/** Every kind svc emits, by kind. */
export const CORE_EVENT_KINDS: Readonly<Record<string, CoreEventKind>> = {
  // login.*
  "login.succeeded": {
    when: "a user signed in (every factor passed, a session was opened)",
    payload: {
      sessionId: f.string("the session opened"),
      mfa: f.string("the assurance reached: `Password`, `MultiFactor` or `BreakGlass`"),
      factors: f.strings("the factors that passed (`password`, `totp`, `passkey`…)"),
      audience: f.string("the audience the tokens were issued for", { nullable: true }),
      newDevice: f.boolean("whether the device was seen for the first time"),
      risk: f.object("the risk gate's `outcome` and `score`, when it ran", { nullable: true }),
    },
  },
  "login.failed": {
    when: "a sign-in attempt was refused (the caller only sees a generic failure)",
    payload: {
      reason: f.string("why: `invalid_credentials`, `user_suspended`, `risk_blocked`…"),
      score: f.number("the risk score, for `risk_blocked`", { optional: true }),
      signals: f.strings("the risk signals that fired, for `risk_blocked`", { optional: true }),
    },
  },
  "login.new_device": {
    when: "a user signed in from a device not seen before (an alert mail is sent)",
    payload: {
      fingerprintHash: f.string("a hash of the device fingerprint"),
      description: f.string("the device, as described from its user agent, when it sent one", {
        nullable: true,
      }),
      ip: f.string("the client IP address", { nullable: true }),
      country: f.string("the country of the IP address, when known", { nullable: true }),
    },
  },
  // mfa.*
  "mfa.challenged": {
    when: "the password passed and a second factor is asked for",
    payload: {
      factors: f.strings(
        "the second factors the user may answer with (`totp`, `email_otp`, `passkey`, `recovery_code`)",
      ),
      reason: f.string("why: `totp_enrolled` or `risk_step_up`"),
      riskScore: f.number("the risk score"),
      rehashed: f.boolean("whether the password hash was upgraded on the way"),
    },
  },
  "mfa.succeeded": {
    when: "a second factor passed",
    payload: {
      factor: f.string("the factor: `totp`, `email_otp` or `recovery_code`"),
      recoveryCodesRemaining: f.integer("how many recovery codes are left, when one was spent", {
        optional: true,
      }),
    },
  },
  "mfa.failed": {
    when: "a second factor was refused",
    payload: {
      factor: f.string("the factor tried"),
      reason: f.string("why: `invalid`, `replayed`, `expired`…"),
    },
  },
  "mfa.totp_enabled": {
    when: "a user confirmed a TOTP enrollment: TOTP is now their second factor",
    payload: {},
  },
  "mfa.totp_disabled": { when: "a user removed their TOTP enrollment", payload: {} },
  "mfa.recovery_codes_generated": {
    when: "a user generated a new set of recovery codes (the previous set stops working)",
    payload: { count: f.integer("how many codes the new set holds") },
  },
  // passkey.*
  "passkey.registered": {
    when: "a user registered a passkey",
    payload: {
      passkeyId: f.string("the passkey"),
      userVerificationCapable: f.boolean("whether the authenticator verified the user"),
      backupEligible: f.boolean("whether the passkey may be synced (multi-device)"),
    },
  },
  "passkey.login": {
    when: "a passkey signed a user in, as the first or the second factor",
    payload: {
      passkeyId: f.string("the passkey"),
      factor: f.string("`first` or `second`"),
      userVerified: f.boolean("whether the authenticator verified the user"),
    },
  },
  "passkey.removed": {
    when: "a user removed one of their passkeys",
    payload: { passkeyId: f.string("the passkey") },
  },
  "passkey.renamed": {
    when: "a user renamed one of their passkeys",
    payload: { passkeyId: f.string("the passkey") },
  },
  "passkey.signcount_regression": {
    when:
      "a passkey presented a sign count not above the stored one (a possible clone); the login is refused",
    payload: {
      passkeyId: f.string("the passkey"),
      storedSignCount: f.integer("the sign count stored"),
      presentedSignCount: f.integer("the sign count presented"),
    },
  },
  // risk.*, abuse.*
  "risk.evaluated": {
    when: "the risk gate decided on a sign-in",
    payload: {
      outcome: f.string("`Allow`, `StepUp` or `Block`"),
      score: f.number("the final score"),
      builtInScore: f.number("the score of the built-in signals alone"),
      signals: f.objects("the signals that fired: `name`, `weight` and their details"),
      failedProviders: f.strings("the signal providers that failed"),
      ip: f.string("the client IP address", { nullable: true }),
      country: f.string("the country of the IP address, when known", { nullable: true }),
    },
  },
  "abuse.blocked": {
    when: "the abuse gate refused an attempt (rate limit, lockout, or a failed-closed counter store)",
    payload: {
      layers: f.strings("the layers that blocked"),
      failClosed: f.strings("the layers that blocked because their counter store was down"),
      ip: f.string("the client IP address"),
    },
  },
  "abuse.counter_store_unavailable": {
    when: "the abuse counter store failed; each layer fails open or closed as configured",
    payload: {
      operation: f.string("what failed: `check`, `record`, `release`, `throttle`…"),
      layers: f.objects("the layers affected, each with `layer` and `failMode`", { optional: true }),
      throttle: f.string("the request throttle affected", { optional: true }),
      error: f.string("the store's error message"),
    },
  },
  // token.*, authz.*
  "token.refresh_reuse_detected": {
    when: "a rotated refresh token was replayed: its family is revoked and its session ended",
    payload: {
      familyId: f.string("the refresh token family"),
      sessionId: f.string("the session ended"),
      revoked: f.integer("how many refresh tokens were revoked"),
    },
  },
  "authz.shadow_divergence": {
    when: "in shadow mode, svc's decision differed from the legacy system's",
    payload: {
      permission: f.string("the permission checked"),
      resource: f.object(
        "the resource checked (`orgId`, `ownerId`, `teamIds`, `attributes`), when there was one",
        {
          nullable: true,
        },
      ),
      legacyDecision: f.string("`Allowed` or `Denied`"),
      svcDecision: f.string("svc's decision"),
      trace: f.objects("each grant considered: `pattern`, `effect`, `source`, `outcome`"),
    },
  },
  "authz.invalid_grants_skipped": {
    when: "a subject snapshot skipped grant rows that do not parse (reported; sign-in continues)",
    payload: {
      skipped: f.objects(
        "the rows skipped: `source` (`role:<key>`…), `pattern`, the error's `code` and `message`",
      ),
    },
  },
  // breakglass.*
  "breakglass.login": {
    when: "any break-glass login",
    payload: {
      lastUseAt: f.string("the previous break-glass use (ISO 8601)", { nullable: true }),
      via: f.string("how the session was used, when not at the login itself", { optional: true }),
      sessionId: f.string("the session, when not at the login itself", { optional: true }),
    },
  },
  "breakglass.rotation_required": {
    when: "after a break-glass login, then as a reminder, until the password is rotated",
    payload: {
      lastUseAt: f.string("the last break-glass use (ISO 8601)", { nullable: true }),
      reason: f.string("`login` or `reminder`"),
    },
  },
  "breakglass.account_created": { when: "the CLI created a realm's break-glass account", payload: actor },
  "breakglass.rotated": {
    when: "the break-glass password was rotated (its sessions, tokens and keys end)",
    payload: {
      ...actor,
      sessionsEnded: f.integer("sessions ended"),
      refreshTokensRevoked: f.integer("refresh tokens revoked"),
      apiKeysRevoked: f.integer("API keys revoked"),
      factorsRemoved: f.strings("the factors removed"),
    },
  },
  "breakglass.drill_recorded": { when: "a drill verified the break-glass password", payload: actor },
  // impersonation.*
  "impersonation.consent_requested": {
    when: "an administrator asked to impersonate a user who must consent first",
    payload: {
      ...impersonationFields,
      expiresAt: f.string("when the impersonation would end (ISO 8601)"),
      durationSeconds: f.integer("the length asked for"),
    },
  },
  "impersonation.approved": {
    when: "the user consented to an impersonation",
    payload: { ...impersonationFields, expiresAt: f.string("when the impersonation ends (ISO 8601)") },
  },
  "impersonation.started": {
    when: "an impersonation started (at once, or on consent)",
    payload: { ...impersonationFields, expiresAt: f.string("when the impersonation ends (ISO 8601)") },
  },
  "impersonation.ended": {
    when: "an impersonation was ended (its sessions end)",
    payload: { ...impersonationFields, endedBy: f.string("who ended it") },
  },
  // user.*
  "user.created": {
    when: "a user was created by an administrator or by SCIM",
    payload: {
      orgId: f.string("the organization the user joined, if any", { nullable: true, optional: true }),
      passwordless: f.boolean("whether the user was created without a password", { optional: true }),
      via: viaScim,
      scimConnectionId: scimConnection,
    },
  },
  "user.updated": {
    when: "a user's profile fields were changed by an administrator or by SCIM",
    payload: { fields: f.strings("the fields changed"), via: viaScim, scimConnectionId: scimConnection },
  },
  "user.suspended": {
    when: "a user was suspended (sessions ended, API keys revoked)",
    payload: {
      sessionsEnded: f.integer("sessions ended"),
      apiKeysRevoked: f.integer("API keys revoked"),
    },
  },
  "user.reactivated": {
    when: "a user was reactivated",
    payload: { wasSuspended: f.boolean("whether the user was suspended before") },
  },
  "user.erased": {
    when: "a user was erased (personal data redacted, authenticators deleted)",
    payload: { userId: f.string("the user erased (the event names no user, so it is in no ledger)") },
  },
  "user.sessions_ended": {
    when: "an administrator ended one or all of a user's sessions",
    payload: {
      sessionsEnded: f.integer("how many sessions ended"),
      sessionIds: f.strings("the sessions ended"),
    },
  },
  "user.factors_reset": {
    when: "an administrator reset some of a user's factors",
    payload: {
      factors: f.strings("the factors asked to reset"),
      removed: f.object(
        "what was removed: `totp`, `emailOtp` (booleans), `passkeys`, `recoveryCodes` (counts)",
      ),
    },
  },
  "user.password_reset_requested": { when: "a password reset link was mailed", payload: {} },
  "user.password_reset": {
    when: "a user reset their password through a mailed link",
    payload: {
      sessionsEnded: f.integer("sessions ended"),
      refreshTokensRevoked: f.integer("refresh tokens revoked"),
    },
  },
  "user.email_verification_requested": { when: "an address verification link was mailed", payload: {} },
  "user.email_verified": { when: "a user verified their address", payload: {} },
  "user.email_change_requested": {
    when: "an address change was asked for (pending until the new address confirms)",
    payload: {},
  },
  "user.email_changed": { when: "a pending address change was confirmed", payload: {} },
  "user.sign_up_requested": { when: "a self sign-up link was mailed", payload: {} },
  "user.invited": {
    when: "a user was invited to an organization",
    payload: { invitedBy: f.string("the inviting user") },
  },
  "user.invitation_accepted": {
    when: "an invitation was accepted",
    payload: {
      invitedBy: f.string("the inviting user"),
      credential: f.string("`passkey` when the invitee chose a passkey rather than a password", {
        optional: true,
      }),
    },
  },
  "user.org_joined": {
    when: "a user became a member of an organization",
    payload: { orgId: f.string("the organization"), scimConnectionId: scimConnection },
  },
  "user.org_left": {
    when: "a user stopped being a member of an organization",
    payload: { orgId: f.string("the organization"), scimConnectionId: scimConnection },
  },
  "user.role_assigned": {
    when: "a role was assigned to a user (also emitted as `role.assigned`)",
    payload: assignmentFields,
  },
  "user.role_unassigned": {
    when: "a user's role assignment was removed (also emitted as `role.unassigned`)",
    payload: assignmentFields,
  },
  // webhook.*
  "webhook.endpoint_disabled": {
    when: "a webhook endpoint reached its consecutive-failure limit and was disabled",
    payload: {
      endpointId: f.string("the endpoint"),
      url: f.string("the endpoint's URL: origin and path only (no user info, query or fragment)"),
      consecutiveFailures: f.integer("the failures in a row that disabled it"),
      lastError: f.string("the last delivery's error"),
    },
  },
  "webhook.test": {
    when: "an administrator fired a signed test delivery at an endpoint",
    payload: { endpointId: f.string("the endpoint"), message: f.string("a fixed text") },
  },
  // organization.*
  "organization.created": { when: "an organization was created", payload: { name: f.string("its name") } },
  "organization.updated": {
    when: "an organization was changed",
    payload: { displayName: f.string("its display name"), status: f.string("its status") },
  },
  "organization.deleted": {
    when: "an organization was deleted",
    payload: { name: f.string("its name"), members: f.integer("how many members it had") },
  },
  "organization.domain_added": { when: "a domain was added to an organization", payload: domainFields },
  "organization.domain_removed": { when: "a domain was removed from an organization", payload: domainFields },
  "organization.domain_verified": {
    when: "an organization's domain was verified",
    payload: { ...domainFields, method: f.string("how it was verified") },
  },
  // group.*
  "group.created": {
    when: "a group was created (by an administrator or by SCIM)",
    payload: {
      groupId: f.string("the group"),
      key: f.string("its key", { optional: true }),
      via: viaScim,
      scimConnectionId: scimConnection,
    },
  },
  "group.updated": {
    when: "a group was changed (by an administrator or by SCIM)",
    payload: {
      groupId: f.string("the group"),
      displayName: f.string("its display name", { optional: true }),
      added: f.integer("members added, for a SCIM change", { optional: true }),
      removed: f.integer("members removed, for a SCIM change", { optional: true }),
      via: viaScim,
      scimConnectionId: scimConnection,
    },
  },
  "group.deleted": {
    when: "a group was deleted (by an administrator or by SCIM)",
    payload: {
      groupId: f.string("the group"),
      key: f.string("its key", { optional: true }),
      members: f.integer("how many members it had", { optional: true }),
      via: viaScim,
      scimConnectionId: scimConnection,
    },
  },
  "group.member_added": {
    when: "a user was added to a group",
    payload: { groupId: f.string("the group"), scimConnectionId: scimConnection },
  },
  "group.member_removed": {
    when: "a user was removed from a group",
    payload: { groupId: f.string("the group"), scimConnectionId: scimConnection },
  },
  // team.*
  "team.created": {
    when: "a team was created",
    payload: { teamId: f.string("the team"), name: f.string("its name") },
  },
  "team.updated": {
    when: "a team was changed",
    payload: { teamId: f.string("the team"), name: f.string("its name") },
  },
  "team.deleted": {
    when: "a team was deleted",
    payload: {
      teamId: f.string("the team"),
      name: f.string("its name"),
      members: f.integer("how many members it had"),
    },
  },
  "team.member_added": { when: "a user was added to a team", payload: { teamId: f.string("the team") } },
  "team.member_removed": {
    when: "a user was removed from a team",
    payload: { teamId: f.string("the team") },
  },
  // realm.*
  "realm.created": {
    when: "a realm was created",
    payload: { name: f.string("its name"), isDefault: f.boolean("whether it is the default realm") },
  },
  "realm.updated": {
    when: "a realm was changed (or made the default)",
    payload: {
      displayName: f.string("its display name"),
      isDefault: f.boolean("whether it is the default realm"),
      selfSignUp: f.boolean("whether self sign-up is open"),
      branding: f.object("its branding of the hosted pages and mail (a null field: the server's)"),
    },
  },
  // role.*
  "role.created": {
    when: "a role was created",
    payload: { ...roleFields, grants: f.integer("how many grants it was created with") },
  },
  "role.updated": {
    when: "a role was changed",
    payload: { ...roleFields, displayName: f.string("its display name") },
  },
  "role.deleted": { when: "a role was deleted", payload: roleFields },
  "role.grant_added": { when: "a grant was added to a role", payload: { ...roleFields, ...grantFields } },
  "role.grant_removed": {
    when: "a grant was removed from a role",
    payload: { ...roleFields, ...grantFields },
  },
  "role.assigned": { when: "a role was assigned to a principal", payload: assignmentFields },
  "role.unassigned": { when: "a role assignment was removed", payload: assignmentFields },
  "role.policy_created": {
    when: "a policy (grants held directly by a principal) was created",
    payload: { ...policyFields, grants: f.integer("how many grants it was created with") },
  },
  "role.policy_deleted": { when: "a policy was deleted", payload: policyFields },
  "role.policy_grant_added": {
    when: "a grant was added to a policy",
    payload: { ...policyFields, ...grantFields },
  },
  "role.policy_grant_removed": {
    when: "a grant was removed from a policy",
    payload: { ...policyFields, ...grantFields },
  },
  // service_account.*
  "service_account.created": { when: "a service account was created", payload: serviceAccountFields },
  "service_account.secret_rotated": {
    when: "a service account's secret was rotated",
    payload: {
      ...serviceAccountFields,
      previousSecretExpiresAt: f.string("until when the previous secret still works (ISO 8601)", {
        nullable: true,
      }),
    },
  },
  "service_account.disabled": { when: "a service account was disabled", payload: serviceAccountFields },
  "service_account.enabled": { when: "a service account was enabled again", payload: serviceAccountFields },
  "service_account.deleted": { when: "a service account was deleted", payload: serviceAccountFields },
  // api_key.*
  "api_key.created": { when: "an API key was created", payload: apiKeyFields },
  "api_key.revoked": { when: "an API key was revoked", payload: apiKeyFields },
  // signing_key.*
  "signing_key.rotated": {
    when: "a realm's token signing key was rotated",
    payload: {
      primaryKid: f.string("the new primary key"),
      retiredKid: f.string("the key it replaced", { nullable: true }),
      retiredKeyPublishedUntil: f.string("until when the retired key is still published (ISO 8601)", {
        nullable: true,
      }),
    },
  },
  // oidc.* (admin routes of svc; the provider's own kinds are the oidc-provider plugin's)
  "oidc.client_created": {
    when:
      "an OIDC client was registered (by an administrator, or by itself at the provider's registration endpoint)",
    payload: {
      ...oidcClientFields,
      clientType: f.string("`confidential` or `public`"),
      dynamicallyRegistered: f.boolean("true when the client registered itself (RFC 7591)", {
        optional: true,
      }),
    },
  },
  "oidc.client_updated": {
    when: "an OIDC client was changed",
    payload: {
      ...oidcClientFields,
      changed: f.strings("the settings changed"),
      suspended: f.boolean("whether the client is suspended"),
    },
  },
  "oidc.client_deleted": {
    when: "an OIDC client was deleted (its sessions end)",
    payload: { ...oidcClientFields, sessionsEnded: f.integer("sessions ended") },
  },
};
