/**
 * The SMTP mail relay (issue 14), an adapter outside `core/`: it hands each outbox message to an
 * SMTP server as a multipart/alternative message (text and HTML) over implicit TLS, STARTTLS
 * (required) or, for a local relay only, plain SMTP, with authentication and time limits.
 *
 * It uses nodemailer: a dependency-free, long-maintained SMTP client (TLS, STARTTLS, AUTH
 * mechanisms, dot-stuffing, MIME encoding, header folding) that runs on Deno, Bun and Node
 * through their `node:net`/`node:tls` support; writing a correct SMTP client and MIME encoder
 * here would be far more code to get wrong. The outbox id is the `Message-ID`, so that a
 * message re-sent after a crash between acceptance and recording is recognisable as the same one.
 *
 * @module
 */
// @ts-types="npm:@types/nodemailer@8.0.2"
import nodemailer from "nodemailer";
import type { MailRelay } from "../core/mail/delivery.ts";
import type { OutboxMessage } from "../core/storage/mail-outbox.ts";

/** How to reach the SMTP server. */
export interface SmtpRelayOptions {
  readonly host: string;
  readonly port: number;
  /** `tls`: implicit TLS; `starttls`: plain, then upgrade (required); `none`: plain. */
  readonly security: "tls" | "starttls" | "none";
  readonly user?: string;
  readonly password?: string;
  /** Time limit of connecting, the greeting and each command, in milliseconds. */
  readonly timeoutMs: number;
  /** False: accept any server certificate (test servers with a self-signed one). */
  readonly verifyCertificate: boolean;
  /** The domain of generated Message-IDs (default: the host of the sender address). */
  readonly messageIdDomain?: string;
}

/** A {@link MailRelay} that sends through one SMTP server (one connection per message). */
export function createSmtpRelay(options: SmtpRelayOptions): MailRelay {
  const transport = nodemailer.createTransport({
    host: options.host,
    port: options.port,
    secure: options.security === "tls",
    requireTLS: options.security === "starttls",
    ignoreTLS: options.security === "none",
    auth: options.user !== undefined ? { user: options.user, pass: options.password ?? "" } : undefined,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    // SNI takes a name only; an IP address host is verified against the certificate's IP entries.
    tls: {
      rejectUnauthorized: options.verifyCertificate,
      ...(/^[0-9.]+$|:/.test(options.host) ? {} : { servername: options.host }),
    },
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    name: `smtp://${options.host}:${options.port}`,
    async deliver(message: OutboxMessage): Promise<void> {
      const domain = options.messageIdDomain ?? domainOf(message.from);
      try {
        await transport.sendMail({
          from: message.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: `<${message.id}@${domain}>`,
          date: message.createdAt,
          headers: { "X-Svc-Mail-Kind": message.kind },
        });
      } catch (err) {
        // nodemailer errors may quote the server's answer; they never hold the password.
        const code = (err as { code?: string; responseCode?: number }).code;
        const text = err instanceof Error ? err.message : String(err);
        throw new Error(`${code ? `${code}: ` : ""}${text.split("\n")[0]}`);
      }
    },
    close(): Promise<void> {
      transport.close();
      return Promise.resolve();
    },
  };
}

function domainOf(from: string): string {
  const match = /@([^\s@<>]+)>?\s*$/.exec(from);
  return match ? match[1] : "svc.invalid";
}
