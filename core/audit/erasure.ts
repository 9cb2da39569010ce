/**
 * Erasure of a user and ledger retention (spec 6).
 *
 * Erasure, in one transaction: the user's security events are redacted in place (data, IP
 * address and device description nulled; kind and timestamp kept); admin audit payloads where
 * the user is actor or target are nulled (digests and hashes untouched, so the chain still
 * verifies); every authenticator (passwords, passkeys, TOTP, recovery codes), known device and
 * linked identity is deleted; sessions end (announced to every instance after commit, so their
 * access tokens stop at once), refresh tokens and API keys are revoked; the user is anonymized;
 * and the per-subject key is destroyed, which makes anything encrypted under it unrecoverable.
 * Copies of the user's email and IP addresses outside their own rows go too (issue 19): the
 * sessions' recorded origins are cleared, outbox mail to the user is deleted and other mail that
 * mentions them is redacted, and webhook delivery payloads that mention them are redacted (the
 * `data` of the user's own events emptied). See `redaction.ts`.
 * A `user.erased` security event (kind and time only) and an admin audit entry record it. Erasing
 * an erased user again with nothing left to remove changes nothing: no entry, no event.
 *
 * Retention deletes security events older than one cutoff and redacts admin audit payloads
 * older than another; a run that finds nothing old enough writes no entry.
 *
 * @module
 */
import { NotFoundError } from "../errors.ts";
import type { Clock } from "../clock.ts";
import type { Storage } from "../../storage/storage.ts";
import { EVENT_KINDS } from "../events/catalog.ts";
import type { EventPublisher } from "../events/publisher.ts";
import { type AuditActor, runAdminMutation } from "./mutation.ts";
import { redaction } from "./redaction.ts";
import type { EndedSession, SessionEndAnnouncer } from "../sessions/ended.ts";
import { endAllSessionsOfUser } from "../sessions/service.ts";

/** What erasing a user removed. */
export interface ErasureReport {
  /** The erased (now anonymized) user's id. */
  readonly userId: string;
  /** Security events of the user redacted in place (data, IP address and device description nulled). */
  readonly securityEventsRedacted: number;
  /** Admin audit entries whose payloads were nulled because the user is their actor or target. */
  readonly auditEntriesRedacted: number;
  /** Password credentials deleted. */
  readonly passwordCredentialsDeleted: number;
  /** Passkey credentials deleted. */
  readonly passkeysDeleted: number;
  /** Whether a TOTP enrollment existed and was deleted. */
  readonly totpDeleted: boolean;
  /** Whether an email one-time-code enrollment existed and was removed. */
  readonly emailOtpEnrollmentDeleted: boolean;
  /** Unused recovery codes deleted. */
  readonly recoveryCodesDeleted: number;
  /** Linked federated identities deleted. */
  readonly federatedIdentitiesDeleted: number;
  /** Known devices of the user deleted. */
  readonly knownDevicesDeleted: number;
  /** Sessions ended. */
  readonly sessionsRevoked: number;
  /** Refresh tokens revoked. */
  readonly refreshTokensRevoked: number;
  /** API keys owned by the user revoked. */
  readonly apiKeysRevoked: number;
  /** Whether the per-subject key existed and was destroyed (data encrypted under it is now unrecoverable). */
  readonly subjectKeyDestroyed: boolean;
  /** Sessions whose IP address and device description were cleared. */
  readonly sessionOriginsCleared: number;
  /** Outbox messages to the user, deleted. */
  readonly mailDeleted: number;
  /** Other outbox messages that mentioned the user, redacted. */
  readonly mailRedacted: number;
  /** Webhook deliveries whose payload mentioned the user, redacted. */
  readonly webhookPayloadsRedacted: number;
}

/**
 * Erases a user (see the module documentation). NotFoundError when the user does not exist or
 * belongs to another realm than `realmId`.
 */
export async function eraseUser(
  deps: {
    readonly storage: Storage;
    readonly clock: Clock;
    readonly publisher?: EventPublisher;
    readonly sessions?: SessionEndAnnouncer;
  },
  realmId: string,
  userId: string,
  actor: AuditActor,
): Promise<ErasureReport> {
  let ended: EndedSession[] = [];
  const { value } = await runAdminMutation(deps, realmId, actor, async ({ tx, emit }) => {
    const user = await tx.users.get(userId);
    if (user === null || user.realmId !== realmId.toLowerCase()) throw new NotFoundError("No such user.");
    const id = user.id;
    // Collected before the ledger is redacted: the addresses it recorded are among those to find.
    const personal = await erasePersonalCopies(tx, id, user.email);
    const securityEventsRedacted = await tx.securityEvents.redactForUser(id);
    const auditEntriesRedacted = await tx.adminAudit.redactForSubject(id);
    const recoveryCodesDeleted = await tx.recoveryCodes.countRemaining(id);
    await tx.recoveryCodes.replace(id, []);
    const sessions = await endAllSessionsOfUser(tx, id, deps.clock.now());
    ended = sessions.sessions;
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
      sessionsRevoked: sessions.sessions.length,
      refreshTokensRevoked: sessions.refreshTokensRevoked,
      apiKeysRevoked: await tx.apiKeys.revokeAllForOwner("User", id),
      subjectKeyDestroyed: await tx.subjectKeys.delete(id),
      ...personal,
    };
    // Erased already and nothing left to remove: a repeat, which changes nothing.
    if (user.anonymizedAt !== null && !erasedAnything(report)) return { value: report, audit: null };
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
  await deps.sessions?.announce(ended);
  return value;
}

/** The erasure removed, ended or redacted something (its report is not all zero and false). */
function erasedAnything(report: ErasureReport): boolean {
  return Object.entries(report).some(([name, value]) =>
    name !== "userId" && (value === true || (typeof value === "number" && value > 0))
  );
}

/** Clears, deletes and redacts the copies of the user's email and IP addresses (see the module doc). */
async function erasePersonalCopies(
  tx: Storage,
  userId: string,
  email: string,
): Promise<
  Pick<ErasureReport, "sessionOriginsCleared" | "mailDeleted" | "mailRedacted" | "webhookPayloadsRedacted">
> {
  const redact = redaction({ emails: [email], ipAddresses: await tx.personalData.ipAddressesOf(userId) });
  const sessionOriginsCleared = await tx.personalData.forgetSessionOrigins(userId);
  const mailDeleted = await tx.mailOutbox.deleteForRecipient(email);
  let mailRedacted = 0;
  for (const message of await tx.personalData.mailMentioning(redact.needles)) {
    await tx.personalData.replaceMailText({
      id: message.id,
      subject: redact.text(message.subject),
      text: redact.text(message.text),
      html: redact.text(message.html),
    });
    mailRedacted++;
  }
  let webhookPayloadsRedacted = 0;
  for (const delivery of await tx.personalData.webhookPayloadsMentioning([...redact.needles, userId])) {
    const payload = redact.webhookBody(delivery.payload, userId);
    if (payload === delivery.payload) continue;
    await tx.personalData.replaceWebhookPayload(delivery.id, payload);
    webhookPayloadsRedacted++;
  }
  return { sessionOriginsCleared, mailDeleted, mailRedacted, webhookPayloadsRedacted };
}

/** What a retention run removed. */
export interface RetentionReport {
  /** Security events deleted for being older than `securityEventsBefore` (0 when not given). */
  readonly securityEventsDeleted: number;
  /**
   * Admin audit entries whose payloads were redacted for being older than `auditPayloadsBefore` (0 when not
   * given).
   */
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
    // Nothing old enough: a run that changes nothing writes no entry.
    if (report.securityEventsDeleted + report.auditPayloadsRedacted === 0) {
      return { value: report, audit: null };
    }
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
