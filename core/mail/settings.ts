/**
 * The settings of svc's mail (`SvcConfig.mail`, `SvcConfig.mailDelivery`, `SvcConfig.smtp`): their
 * valibot sections, their written-out types and their `SVC_MAIL_*` / `SVC_SMTP_*` variables.
 * `core/config/schema.ts` composes them into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import {
  type Exactly,
  flag,
  type FlagInput,
  int,
  mailFrom,
  nonEmpty,
  port,
  retrySchedule,
  rule,
  smtpHost,
} from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.mail`: the sender of svc's mail. */
export type MailConfig = { from: string };

/** `SvcConfigInput.mail`: the sender of svc's mail, as a config file gives it. */
export type MailConfigInput = { from?: string };

/** The `mail` section of the configuration. */
export const mailSettingsSchema = v.optional(
  v.strictObject({
    /** The From of every message svc sends. */
    from: v.optional(mailFrom(), "no-reply@localhost"),
  }),
  {},
);

/** `SvcConfig.mailDelivery`: how queued mail leaves. */
export type MailDeliveryConfig = {
  transport: "auto" | "smtp" | "log" | "outbox";
  retryScheduleSeconds: number[];
  pollIntervalMs: number;
};

/** `SvcConfigInput.mailDelivery`: how queued mail leaves, as a config file gives it. */
export type MailDeliveryConfigInput = {
  transport?: "auto" | "smtp" | "log" | "outbox";
  retryScheduleSeconds?: number[];
  pollIntervalMs?: number;
};

/** The `mailDelivery` section of the configuration. */
export const mailDeliverySettingsSchema = v.optional(
  v.strictObject({
    /**
     * How queued mail leaves: `smtp` (the SMTP server below), `log` (the server log, for
     * development), `outbox` (stays in the outbox: tests, or a relay of your own), or `auto`:
     * smtp when an SMTP host is set, else log when the base URL is local, else outbox.
     */
    transport: v.optional(
      v.picklist(
        ["auto", "smtp", "log", "outbox"],
        rule("is not a mail transport", "auto, smtp, log or outbox"),
      ),
      "auto",
    ),
    retryScheduleSeconds: v.optional(retrySchedule(), [30, 120, 600, 3600, 21600, 86400]),
    /** Pause between outbox polls when nothing is due. */
    pollIntervalMs: v.optional(int(50, 60_000, "milliseconds"), 1000),
  }),
  {},
);

/** `SvcConfig.smtp`: the SMTP server. */
export type SmtpConfig = {
  host?: string;
  port: number;
  security: "starttls" | "tls" | "none";
  user?: string;
  password?: string;
  timeoutSeconds: number;
  verifyCertificate: boolean;
};

/** `SvcConfigInput.smtp`: the SMTP server, as a config file gives it. */
export type SmtpConfigInput = {
  host?: string;
  port?: number;
  security?: "starttls" | "tls" | "none";
  user?: string;
  password?: string;
  timeoutSeconds?: number;
  verifyCertificate?: FlagInput;
};

/** The `smtp` section of the configuration. */
export const smtpSettingsSchema = v.optional(
  v.strictObject({
    host: v.optional(smtpHost()),
    port: v.optional(port(), 587),
    /** `starttls` (upgrade, required), `tls` (implicit TLS, port 465), `none` (plain: local relays only). */
    security: v.optional(
      v.picklist(["starttls", "tls", "none"], rule("is not a TLS mode", "starttls, tls or none")),
      "starttls",
    ),
    user: v.optional(nonEmpty("the SMTP user name")),
    password: v.optional(nonEmpty("the SMTP password")),
    timeoutSeconds: v.optional(int(1, 600, "seconds"), 30),
    /** Verify the server's certificate (turn off only for a test server with a self-signed one). */
    verifyCertificate: v.optional(flag(), true),
  }),
  {},
);

/** The `SVC_*` variables of `mail`. */
export const MAIL_ENV_SETTINGS: readonly EnvSetting[] = [
  { name: "SVC_MAIL_FROM", path: "mail.from", kind: "string", doc: "sender (From) of the mail svc sends" },
];

/** The `SVC_*` variables of `mailDelivery`. */
export const MAIL_DELIVERY_ENV_SETTINGS: readonly EnvSetting[] = [
  // variables: hosted account pages and mail delivery (issue 14)
  {
    name: "SVC_MAIL_TRANSPORT",
    path: "mailDelivery.transport",
    kind: "string",
    doc:
      "how mail leaves: smtp, log (server log), outbox (kept for a relay), auto (smtp when SVC_SMTP_HOST is set, else log on a local base URL, else outbox)",
  },
  {
    name: "SVC_MAIL_RETRY_SCHEDULE_SECONDS",
    path: "mailDelivery.retryScheduleSeconds",
    kind: "int-list",
    doc: "comma-separated delays between mail delivery retries, then dead-letter",
  },
  {
    name: "SVC_MAIL_POLL_INTERVAL_MS",
    path: "mailDelivery.pollIntervalMs",
    kind: "int",
    doc: "pause between polls of the mail outbox when nothing is due",
  },
];

/** The `SVC_*` variables of `smtp`. */
export const SMTP_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_SMTP_HOST",
    path: "smtp.host",
    kind: "string",
    doc: "SMTP server that delivers svc's mail",
    defaultText: "unset",
  },
  { name: "SVC_SMTP_PORT", path: "smtp.port", kind: "int", doc: "SMTP server port" },
  {
    name: "SVC_SMTP_SECURITY",
    path: "smtp.security",
    kind: "string",
    doc:
      "starttls (upgrade required), tls (implicit TLS, usually port 465) or none (plain, local relays only)",
  },
  { name: "SVC_SMTP_USER", path: "smtp.user", kind: "string", doc: "SMTP user name", defaultText: "unset" },
  {
    name: "SVC_SMTP_PASSWORD",
    path: "smtp.password",
    kind: "string",
    doc: "SMTP password (with SVC_SMTP_USER)",
    defaultText: "unset",
    secret: "hide",
  },
  {
    name: "SVC_SMTP_TIMEOUT_SECONDS",
    path: "smtp.timeoutSeconds",
    kind: "int",
    doc: "time limit of connecting, greeting and each SMTP command",
  },
  {
    name: "SVC_SMTP_VERIFY_CERTIFICATE",
    path: "smtp.verifyCertificate",
    kind: "string",
    doc: "false: accept any certificate of the SMTP server (test servers only)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _mailOutput: Exactly<v.InferOutput<typeof mailSettingsSchema>, MailConfig> = true;
const _mailInput: Exactly<v.InferInput<typeof mailSettingsSchema>, MailConfigInput | undefined> = true;
const _mailDeliveryOutput: Exactly<v.InferOutput<typeof mailDeliverySettingsSchema>, MailDeliveryConfig> =
  true;
const _mailDeliveryInput: Exactly<
  v.InferInput<typeof mailDeliverySettingsSchema>,
  MailDeliveryConfigInput | undefined
> = true;
const _smtpOutput: Exactly<v.InferOutput<typeof smtpSettingsSchema>, SmtpConfig> = true;
const _smtpInput: Exactly<v.InferInput<typeof smtpSettingsSchema>, SmtpConfigInput | undefined> = true;
