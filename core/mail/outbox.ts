/**
 * The outbox transport, svc's default: `send` stores the message in the `mail_outbox` table,
 * where a relay (or a test) lists it. Nothing leaves the process; deployments that deliver mail
 * drain the outbox (`list({ pendingOnly: true })`, then `markSent`) and prune it.
 *
 * @module
 */
import type { MailOutboxStore } from "../../storage/contract/mail-outbox.ts";
import { assertMailAddress, type MailMessage, type MailTransport } from "./transport.ts";

/** A {@link MailTransport} that stores each message in the outbox. */
export function createOutboxTransport(store: MailOutboxStore): MailTransport {
  return {
    async send(message: MailMessage): Promise<void> {
      assertMailAddress(message.to);
      await store.add({
        kind: message.kind,
        to: message.to,
        from: message.from,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
    },
  };
}
