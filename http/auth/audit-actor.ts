/**
 * The audit actor of an HTTP caller: the one place where a request's principal becomes the
 * actor of the admin audit entries its mutations append (spec 2.7). Every route that calls
 * `runAdminMutation` passes `auditActor(principal)`.
 *
 * | Caller | `actorKind` | `actorId` | `onBehalfOf` |
 * |---|---|---|---|
 * | a user's access token | `User` | the user | null |
 * | an access token under impersonation (`act`) | `User` | the impersonating administrator | the impersonated user |
 * | an API key | `ApiKey` | the key | the key's owner (user or service account) |
 * | a service account (Basic) | `ServiceAccount` | the account | null |
 * | a break-glass login's access token (`mfa` `BreakGlass`) | `BreakGlass` | the break-glass account | null |
 *
 * The accountable party is always the actor: under impersonation that is the administrator
 * who started it, not the user whose session it borrows.
 *
 * @module
 */
import type { AuditActor } from "../../core/audit/mutation.ts";
import { MFA_LEVEL_BREAK_GLASS } from "../../core/break-glass/kinds.ts";
import type { Principal } from "./principal.ts";

/** The audit actor of a caller (see the module documentation). */
export function auditActor(principal: Principal): AuditActor {
  switch (principal.kind ?? "User") {
    case "ApiKey":
      if (principal.credentialId === undefined) throw new TypeError("An API key principal names its key.");
      return { id: principal.credentialId, kind: "ApiKey", onBehalfOf: principal.userId };
    case "ServiceAccount":
      return { id: principal.credentialId ?? principal.userId, kind: "ServiceAccount", onBehalfOf: null };
    case "User":
      if (principal.mfa === MFA_LEVEL_BREAK_GLASS && !principal.act) {
        return { id: principal.userId, kind: "BreakGlass", onBehalfOf: null };
      }
      return principal.act
        ? { id: principal.act.actorId, kind: "User", onBehalfOf: principal.userId }
        : { id: principal.userId, kind: "User", onBehalfOf: null };
  }
}
