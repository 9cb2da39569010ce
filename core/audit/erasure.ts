/**
 * Erasure of a user and ledger retention (spec 6).
 *
 * Erasure, in one transaction: the user's security events are redacted in place (data, IP
 * address and device description nulled; kind and timestamp kept); admin audit payloads where
 * the user is actor or target are nulled (digests and hashes untouched, so the chain still
 * verifies); every authenticator (passwords, passkeys, TOTP, recovery codes), known device and
 * linked identity is deleted; sessions and refresh tokens are revoked; the user is anonymized;
 * and the per-subject key is destroyed, which makes anything encrypted under it unrecoverable.
 * A `user.erased` security event (kind and time only) and an admin audit entry record it.
 *
 * Retention deletes security events older than one cutoff and redacts admin audit payloads
 * older than another.
 *
 * @module
 */
import { NotFoundError } from "../errors.ts";
import type { Clock } from "../clock.ts";
import type { Storage } from "../../storage/storage.ts";
import { EVENT_KINDS } from "../events/catalog.ts";
import type { EventPublisher } from "../events/publisher.ts";
import { type AuditActor, runAdminMutation } from "./mutation.ts";

/** What erasing a user removed. */
export interface ErasureReport {
  readonly userId: string;
  readonly securityEventsRedacted: number;
  readonly auditEntriesRedacted: number;
  readonly passwordCredentialsDeleted: number;
  readonly passkeysDeleted: number;
  readonly totpDeleted: boolean;
  readonly emailOtpEnrollmentDeleted: boolean;
  readonly recoveryCodesDeleted: number;
  readonly federatedIdentitiesDeleted: number;
  readonly knownDevicesDeleted: number;
  readonly sessionsRevoked: number;
  readonly refreshTokensRevoked: number;
  readonly subjectKeyDestroyed: boolean;
}

/**
 * Erases a user (see the module documentation). NotFoundError when the user does not exist or
 * belongs to another realm than `realmId`.
 */
export async function eraseUser(
  deps: { readonly storage: Storage; readonly clock: Clock; readonly publisher?: EventPublisher },
  realmId: string,
  userId: string,
  actor: AuditActor,
): Promise<ErasureReport> {
  const { value } = await runAdminMutation(deps, realmId, actor, async ({ tx, emit }) => {
    const user = await tx.users.get(userId);
    if (user === null || user.realmId !== realmId.toLowerCase()) throw new NotFoundError("No such user.");
    const id = user.id;
    const securityEventsRedacted = await tx.securityEvents.redactForUser(id);
    const auditEntriesRedacted = await tx.adminAudit.redactForSubject(id);
    const recoveryCodesDeleted = await tx.recoveryCodes.countRemaining(id);
    await tx.recoveryCodes.replace(id, []);
    const report: ErasureReport = {
      userId: id,
      securityEventsRedacted,
      auditEntriesRedacted,
      passwordCredentialsDeleted: await tx.passwordCredentials.deleteAllForUser(id),
      passkeysDeleted: await tx.passkeyCredentials.deleteAllForUser(id),
      totpDeleted: await tx.totpEnrollments.delete(id),
      emailOtpEnrollmentDeleted: await tx.emailOtpEnrollments.remove(id),
      recoveryCodesDeleted,
      federatedIdentitiesDeleted: await tx.federatedIdentities.deleteAllForUser(id),
      knownDevicesDeleted: await tx.knownDevices.deleteAllForUser(id),
      sessionsRevoked: await tx.sessions.revokeAllForUser(id),
      refreshTokensRevoked: await tx.refreshTokens.revokeAllForUser(id),
      subjectKeyDestroyed: await tx.subjectKeys.delete(id),
    };
    await tx.users.anonymize(id);
    // Kind and time only: the ledger tells the (former) user that erasure happened, nothing more.
    await tx.securityEvents.append({ realmId: user.realmId, userId: id, kind: EVENT_KINDS.userErased });
    await emit({
      kind: EVENT_KINDS.userErased,
      occurredAt: deps.clock.now(),
      realmId: user.realmId,
      orgId: null,
      userId: null,
      data: { userId: id },
    });
    return {
      value: report,
      // No payloads: an entry that names the erased user carries nothing about them.
      audit: { action: "user.erase", target: id, before: null, after: null },
    };
  });
  return value;
}

/** What a retention run removed. */
export interface RetentionReport {
  readonly securityEventsDeleted: number;
  readonly auditPayloadsRedacted: number;
}

/**
 * Applies retention to one realm: deletes security events older than
 * `securityEventsBefore` and redacts admin audit payloads older than `auditPayloadsBefore`
 * (either may be omitted). The run itself is an audited admin mutation.
 */
export async function applyRetention(
  deps: { readonly storage: Storage; readonly publisher?: EventPublisher },
  realmId: string,
  cutoffs: { readonly securityEventsBefore?: Date; readonly auditPayloadsBefore?: Date },
  actor: AuditActor,
): Promise<RetentionReport> {
  const { value } = await runAdminMutation(deps, realmId, actor, async ({ tx }) => {
    const report: RetentionReport = {
      securityEventsDeleted: cutoffs.securityEventsBefore
        ? await tx.securityEvents.deleteOlderThan(cutoffs.securityEventsBefore, { realmId })
        : 0,
      auditPayloadsRedacted: cutoffs.auditPayloadsBefore
        ? await tx.adminAudit.redactOlderThan(cutoffs.auditPayloadsBefore, { realmId })
        : 0,
    };
    return {
      value: report,
      audit: {
        action: "audit.retention",
        after: {
          securityEventsBefore: cutoffs.securityEventsBefore?.toISOString() ?? null,
          auditPayloadsBefore: cutoffs.auditPayloadsBefore?.toISOString() ?? null,
          ...report,
        },
      },
    };
  });
  return value;
}
