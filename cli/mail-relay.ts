/**
 * Which relay delivers svc's mail (issue 14), from the configuration: SMTP when configured, the
 * server log in development, or none (the outbox keeps every message for a relay of your own).
 *
 * @module
 */
import type { SvcConfig } from "../core/config/mod.ts";
import { isLocalHostname } from "../core/config/schema.ts";
import type { MailRelay } from "../core/mail/delivery.ts";
import { createLogRelay } from "../core/mail/log-relay.ts";
import type { SmtpRelayOptions } from "./smtp-relay.ts";

/** The chosen transport and why, for the boot log. */
export interface MailRelayChoice {
  /** The relay, or null: messages stay in the outbox. */
  readonly relay: MailRelay | null;
  /** One line for the boot log (never the password). */
  readonly description: string;
}

/** Picks the relay `config.mailDelivery.transport` names (`auto`: smtp, else log on a local base URL, else outbox). */
export function mailRelayFromConfig(
  config: Pick<SvcConfig, "mailDelivery" | "smtp" | "server">,
  print: (line: string) => void,
): MailRelayChoice {
  const { smtp } = config;
  let kind = config.mailDelivery.transport;
  if (kind === "auto") {
    kind = smtp.host !== undefined
      ? "smtp"
      : isLocalHostname(new URL(config.server.baseUrl).hostname)
      ? "log"
      : "outbox";
  }
  if (kind === "smtp") {
    if (smtp.host === undefined) {
      throw new Error("SVC_MAIL_TRANSPORT is smtp but SVC_SMTP_HOST is not set");
    }
    const relay = lazySmtpRelay({
      host: smtp.host,
      port: smtp.port,
      security: smtp.security,
      user: smtp.user,
      password: smtp.password,
      timeoutMs: smtp.timeoutSeconds * 1000,
      verifyCertificate: smtp.verifyCertificate,
    });
    return {
      relay,
      description: `smtp ${smtp.host}:${smtp.port} (${smtp.security}${
        smtp.user ? `, user ${smtp.user}` : ""
      })`,
    };
  }
  if (kind === "log") return { relay: createLogRelay(print), description: "log (each message printed here)" };
  return { relay: null, description: "outbox only (svc mail list shows the messages)" };
}

/**
 * The SMTP relay, with nodemailer loaded on the first delivery: its module graph (about 14 MiB
 * resident on Deno) stays out of a server that sends no mail (docs/operations/memory.md).
 */
function lazySmtpRelay(options: SmtpRelayOptions): MailRelay {
  let relay: Promise<MailRelay> | undefined;
  const load = () =>
    relay ??= import("./smtp-relay.ts").then(({ createSmtpRelay }) => createSmtpRelay(options)).catch(
      (error) => {
        relay = undefined; // a failed load is tried again by the next delivery
        throw error;
      },
    );
  return {
    name: `smtp://${options.host}:${options.port}`,
    deliver: async (message) => await (await load()).deliver(message),
    close: async () => {
      // Only a relay that was made has connections to release.
      await (await relay?.catch(() => undefined))?.close?.();
    },
  };
}
