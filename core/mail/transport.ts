/**
 * How svc sends mail: a {@link MailTransport} takes a composed {@link MailMessage}. The default
 * is the outbox transport (`outbox.ts`), which stores messages for a relay (and for tests);
 * {@link MemoryMailTransport} keeps them in memory for unit tests.
 *
 * @module
 */
import { ValidationError } from "../errors.ts";

/** What a message is for. */
export type MailKind =
  | "email_otp"
  | "password_reset"
  | "email_verification"
  | "email_change"
  | "email_change_in_use"
  | "invitation"
  | "sign_up"
  | "sign_up_existing"
  | "new_device_alert"
  | "login_blocked_alert"
  | "factors_reset"
  | "impersonation_consent";

/** A composed message: plain text plus minimal HTML. */
export interface MailMessage {
  /** What the message is for (one-time code, reset link, alert…). */
  readonly kind: MailKind;
  /** Recipient address. */
  readonly to: string;
  /** Sender (`From`), such as `no-reply@example.com` or `Example <no-reply@example.com>`. */
  readonly from: string;
  /** The subject line (never carries the secret the message delivers). */
  readonly subject: string;
  /** The plain-text body. */
  readonly text: string;
  /** The HTML body, with every interpolated value escaped. */
  readonly html: string;
}

/**
 * Whom a message is for, beyond its address (issue 24): the realm it belongs to and, when the
 * recipient is a user, that user. The outbox stores both, so a realm administrator sees only the
 * realm's mail (never by matching addresses, which another realm may share) and erasure deletes
 * a user's mail whatever address it went to.
 */
export interface MailAddressee {
  /** The realm the message belongs to. */
  readonly realmId: string;
  /** The user it is for, or null when the address is not (yet) a user's (a sign-up link). */
  readonly userId: string | null;
}

/** Something that delivers mail. `send` resolves once the message is accepted (stored or relayed). */
export interface MailTransport {
  /**
   * Delivers one message for `addressee`; rejects with `ValidationError` when `to` is not a
   * single address.
   */
  send(message: MailMessage, addressee: MailAddressee): Promise<void>;
}

/**
 * Throws `ValidationError` unless `address` is a plausible single mailbox with no line breaks
 * (a header-injection guard for every transport).
 */
export function assertMailAddress(address: string): void {
  if (address.length > 320 || !/^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(address)) {
    throw new ValidationError("The recipient is not a single email address.", { field: "to" });
  }
}

/** A transport that keeps every message in memory, in order; for tests. */
export class MemoryMailTransport implements MailTransport {
  /** Every message sent so far, oldest first. */
  readonly messages: MailMessage[] = [];
  /** The addressee of each message of {@link messages}, at the same index. */
  readonly addressees: MailAddressee[] = [];

  /** Keeps the message in {@link messages}; throws `ValidationError` unless `to` is a single address. */
  send(message: MailMessage, addressee: MailAddressee): Promise<void> {
    assertMailAddress(message.to);
    this.messages.push(message);
    this.addressees.push(addressee);
    return Promise.resolve();
  }

  /** The newest message to `to` (case-insensitive), optionally of one kind, or undefined. */
  latest(to: string, kind?: MailKind): MailMessage | undefined {
    return this.messages.findLast((m) =>
      m.to.toLowerCase() === to.toLowerCase() && (kind === undefined || m.kind === kind)
    );
  }
}
