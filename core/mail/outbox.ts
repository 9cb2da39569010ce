/**
 * The outbox transport, svc's default: `send` stores the message in the `mail_outbox` table,
 * where a relay (or a test) lists it. The delivery worker (`delivery.ts`, issue 14) drains it through
 * SMTP or the server log; `onQueued` wakes it.
 *
 * @module
 */
import type { MailOutboxStore } from "../storage/mail-outbox.ts";
import { assertMailAddress, type MailAddressee, type MailMessage, type MailTransport } from "./transport.ts";

/** A {@link MailTransport} that stores each message in the outbox. */
export function createOutboxTransport(
  store: MailOutboxStore,
  options: { onQueued?: () => void } = {},
): MailTransport {
  return {
    async send(message: MailMessage, addressee: MailAddressee): Promise<void> {
      assertMailAddress(message.to);
      await store.add({
        realmId: addressee.realmId,
        userId: addressee.userId,
        kind: message.kind,
        to: message.to,
        from: message.from,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
      options.onQueued?.();
    },
  };
}
