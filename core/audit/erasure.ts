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
 *
 * Every address the person ever had counts, and every name (issue 25): the current ones, those
 * their mail went to (mail is keyed by user id, so it is deleted whatever address it went to) and
 * those the admin audit entries about them record (an email or display name change). Mail and
 * webhook deliveries are deleted and rewritten in the user's realm only (another realm's account
 * with the same address is another person's). In the realm, free text that names them is rewritten (impersonation
 * reasons, API key names, other users' security event data), and the payloads of other admin
 * audit entries that name them are nulled, as retention does: the digests and hashes stay, so the
 * chain still verifies.
 * A `user.erased` security event (kind and time only) and an admin audit entry record it. Erasing
 * an erased user again with nothing left to remove changes nothing: no entry, no event.
 *
 * Retention deletes security events older than one cutoff and redacts admin audit payloads
 * older than another; a run that finds nothing old enough writes no entry.
 *
 * @module
 */
import { NotFoundError } from "../errors.ts";
import type { User } from "../storage/users.ts";
import type { Clock } from "../clock.ts";
import type { Storage } from "../storage/storage.ts";
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
  /** Impersonation reasons, API key names and other users' security event data that named the user, rewritten. */
  readonly freeTextRedacted: number;
  /** Other admin audit entries of the realm whose payloads named the user, nulled. */
  readonly auditMentionsRedacted: number;
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
    const personal = await erasePersonalCopies(tx, user);
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

/** Clears, deletes and redacts the copies of the user's addresses and names (see the module doc). */
async function erasePersonalCopies(
  tx: Storage,
  user: User,
): Promise<
  Pick<
    ErasureReport,
    | "sessionOriginsCleared"
    | "mailDeleted"
    | "mailRedacted"
    | "webhookPayloadsRedacted"
    | "freeTextRedacted"
    | "auditMentionsRedacted"
  >
> {
  const { realmId, id: userId } = user;
  const past = tracesInPayloads(await tx.personalData.auditPayloadsAbout(realmId, userId));
  const emails = [...new Set([user.email, ...await tx.mailOutbox.addressesOf(userId), ...past.emails])];
  const names = [...new Set([...(user.displayName === null ? [] : [user.displayName]), ...past.names])];
  const redact = redaction({ emails, names, ipAddresses: await tx.personalData.ipAddressesOf(userId) });
  const sessionOriginsCleared = await tx.personalData.forgetSessionOrigins(userId);
  const mailDeleted = await tx.mailOutbox.deleteForUser(userId, { realmId, addresses: emails });
  let mailRedacted = 0;
  for (const message of await tx.personalData.mailMentioning(realmId, redact.needles)) {
    const rewritten = {
      id: message.id,
      subject: redact.text(message.subject),
      text: redact.text(message.text),
      html: redact.text(message.html),
    };
    if (
      rewritten.subject === message.subject && rewritten.text === message.text &&
      rewritten.html === message.html
    ) {
      continue;
    }
    await tx.personalData.replaceMailText(rewritten);
    mailRedacted++;
  }
  let webhookPayloadsRedacted = 0;
  for (
    const delivery of await tx.personalData.webhookPayloadsMentioning(realmId, [...redact.needles, userId])
  ) {
    const payload = redact.webhookBody(delivery.payload, userId);
    if (payload === delivery.payload) continue;
    await tx.personalData.replaceWebhookPayload(delivery.id, payload);
    webhookPayloadsRedacted++;
  }
  let freeTextRedacted = 0;
  for (const stored of await tx.personalData.freeTextMentioning(realmId, redact.needles)) {
    const text = stored.kind === "security_event_data" ? redact.json(stored.text) : redact.text(stored.text);
    if (text === stored.text) continue;
    await tx.personalData.replaceFreeText({ ...stored, text });
    freeTextRedacted++;
  }
  const mentioning = (await tx.personalData.auditPayloadsMentioning(realmId, redact.needles, userId))
    .filter((entry) =>
      [entry.before, entry.after].some((payload) => payload !== null && redact.text(payload) !== payload)
    );
  const auditMentionsRedacted = await tx.personalData.clearAuditPayloads(
    realmId,
    mentioning.map((e) => e.seq),
  );
  return {
    sessionOriginsCleared,
    mailDeleted,
    mailRedacted,
    webhookPayloadsRedacted,
    freeTextRedacted,
    auditMentionsRedacted,
  };
}

/**
 * The addresses and display names that admin audit payloads about the person record (`email`,
 * `displayName` fields at any depth): the ones they had before a change.
 */
function tracesInPayloads(
  entries: readonly { before: string | null; after: string | null }[],
): { emails: string[]; names: string[] } {
  const emails = new Set<string>();
  const names = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (value === null || typeof value !== "object") return;
    for (const [key, field] of Object.entries(value)) {
      if (key === "email" && typeof field === "string") emails.add(field);
      else if (key === "displayName" && typeof field === "string") names.add(field);
      else walk(field);
    }
  };
  for (const entry of entries) {
    for (const payload of [entry.before, entry.after]) {
      if (payload === null) continue;
      try {
        walk(JSON.parse(payload));
      } catch {
        // Not JSON: nothing to read.
      }
    }
  }
  return { emails: [...emails], names: [...names] };
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
