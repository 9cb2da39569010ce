/**
 * The composition of svc's whole configuration: the valibot schema built from each domain's
 * settings module (`core/<domain>/settings.ts`: its section, its written-out types and its
 * `SVC_*` rows; the few sections of no core domain are still here), the derived defaults (the
 * base URL and allowed origins from the port), and the table of `SVC_*` environment variables,
 * concatenated from the domains' rows in the order of the sections.
 *
 * Every leaf's error message follows one template, `<problem>; set {field} to <expectation>`
 * (`core/settings/fields.ts`): the loader (`load.ts`) replaces `{field}` with the setting's name
 * (an env var, or a field of the config file) and prefixes the offending value, which gives the
 * one-line boot error.
 *
 * The types `SvcConfig` and `SvcConfigInput` are composed in `types.ts` from the domains' written-out
 * types (a published package needs explicit types); a compile-time check below fails when they and
 * the schema disagree, as does each settings module's own check of its section. The arrows run
 * config → domain: a settings module imports only `core/settings/` and its own domain.
 *
 * @module
 */
import * as v from "valibot";
import { corsOrigins, type Exactly, flag, httpsUrl, mountPath, nonEmpty, rule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";
import {
  COOKIES_ENV_SETTINGS,
  cookiesSettingsSchema,
  IMPERSONATION_ENV_SETTINGS,
  impersonationSettingsSchema,
  SESSIONS_ENV_SETTINGS,
  sessionsSettingsSchema,
} from "../sessions/settings.ts";
import { BOOTSTRAP_ENV_SETTINGS, bootstrapSettingsSchema } from "../accounts/settings.ts";
import { STORAGE_ENV_SETTINGS, storageSettingsSchema } from "../storage/settings.ts";
import { AUTHZ_ENV_SETTINGS, authzSettingsSchema } from "../authz/settings.ts";
import { IMPORTS_ENV_SETTINGS, importsSettingsSchema } from "../imports/settings.ts";
import { METRICS_ENV_SETTINGS, metricsSettingsSchema } from "../metrics/settings.ts";
import { MAINTENANCE_ENV_SETTINGS, maintenanceSettingsSchema } from "../maintenance/settings.ts";
import { BREAK_GLASS_ENV_SETTINGS, breakGlassSettingsSchema } from "../break-glass/settings.ts";
import { DPOP_ENV_SETTINGS, dpopSettingsSchema } from "../dpop/settings.ts";
import { EMAIL_OTP_ENV_SETTINGS, emailOtpSettingsSchema } from "../mfa/settings.ts";
import { TOTP_ENV_SETTINGS, totpSettingsSchema } from "../totp/settings.ts";
import {
  PASSKEY_ENV_SETTINGS,
  passkeySettingsSchema,
  RELYING_PARTY_ENV_SETTINGS,
  relyingPartySettingsSchema,
} from "../passkeys/settings.ts";
import {
  ABUSE_ENV_SETTINGS,
  abuseSettingsSchema,
  THROTTLE_ENV_SETTINGS,
  throttleSettingsSchema,
} from "../abuse/settings.ts";
import {
  OUTBOUND_ENV_SETTINGS,
  outboundSettingsSchema,
  SERVER_ENV_SETTINGS,
  serverSettingsSchema,
} from "../net/settings.ts";
import { TOKENS_ENV_SETTINGS, tokensSettingsSchema } from "../tokens/settings.ts";
import {
  MAIL_DELIVERY_ENV_SETTINGS,
  MAIL_ENV_SETTINGS,
  mailDeliverySettingsSchema,
  mailSettingsSchema,
  SMTP_ENV_SETTINGS,
  smtpSettingsSchema,
} from "../mail/settings.ts";
import { PASSWORD_ENV_SETTINGS, passwordSettingsSchema } from "../passwords/settings.ts";
import { WEBHOOKS_ENV_SETTINGS, webhooksSettingsSchema } from "../webhooks/settings.ts";
import { RISK_ENV_SETTINGS, riskSettingsSchema } from "../risk/settings.ts";
import type { SvcConfig, SvcConfigInput } from "./types.ts";

export type * from "./types.ts";
export type { EnvKind, EnvSetting } from "../settings/env.ts";
export { FIELD_PLACEHOLDER, isLocalHostname } from "../settings/fields.ts";

/** Settings that only the config file sets (structured lists with no environment variable). */
export const FILE_ONLY_SETTINGS: readonly string[] = Object.freeze([
  "authz.permissions",
  "authz.roles",
  // Each plugin reads its own variables into its section (`SVC_OIDC_…`): see plugins/host.ts.
  "plugins.config",
]);

/** The development base URL for a listen port. */
export function developmentBaseUrl(port: number): string {
  return `http://localhost:${port}`;
}

const svcConfigSchema = v.pipe(
  v.strictObject({
    server: serverSettingsSchema,
    storage: storageSettingsSchema,
    relyingParty: relyingPartySettingsSchema,
    tokens: tokensSettingsSchema,
    sessions: sessionsSettingsSchema,
    cookies: cookiesSettingsSchema,
    passkey: passkeySettingsSchema,
    totp: totpSettingsSchema,
    emailOtp: emailOtpSettingsSchema,
    throttle: throttleSettingsSchema,
    mail: mailSettingsSchema,
    password: passwordSettingsSchema,
    abuse: abuseSettingsSchema,
    risk: riskSettingsSchema,
    webhooks: webhooksSettingsSchema,
    outbound: outboundSettingsSchema,
    maintenance: maintenanceSettingsSchema,
    authz: authzSettingsSchema,
    impersonation: impersonationSettingsSchema,
    dpop: dpopSettingsSchema,
    breakGlass: breakGlassSettingsSchema,
    bootstrap: bootstrapSettingsSchema,
    log: v.optional(
      v.strictObject({
        /** `pretty`: plain lines; `json`: one JSON object per line (time, level, msg, fields). */
        format: v.optional(
          v.picklist(["pretty", "json"], rule("is not a log format", '"pretty" or "json"')),
          "pretty",
        ),
        /** One line per answered request (request id, method, matched route, status, duration). */
        requests: v.optional(flag(), false),
      }),
      {},
    ),
    metrics: metricsSettingsSchema,
    // sections: admin console (issue 13)
    console: v.optional(
      v.strictObject({
        /** Path the embedded admin console is served under (static assets, unauthenticated by design). */
        mountPath: v.optional(mountPath(false), "/svc-admin/ui"),
      }),
      {},
    ),
    // sections: hosted account pages and mail delivery (issue 14)
    mailDelivery: mailDeliverySettingsSchema,
    smtp: smtpSettingsSchema,
    account: v.optional(
      v.strictObject({
        /** Where the hosted account pages are served (under the path base). */
        mountPath: v.optional(mountPath(false), "/account"),
        /** Origins a `returnTo` may point at after sign-in (default: the base URL's origin). */
        returnToOrigins: v.optional(corsOrigins()),
      }),
      {},
    ),
    branding: v.optional(
      v.strictObject({
        /** The product name pages and mail show (default: the relying-party name). */
        productName: v.optional(nonEmpty("the product name pages and mail show")),
        /** The accent colour of pages and mail, `#rrggbb`. */
        color: v.optional(
          v.pipe(
            v.string(),
            v.regex(/^#[0-9a-fA-F]{6}$/, rule("is not a colour", "a colour such as #1f5fbf")),
          ),
          "#1f5fbf",
        ),
        /** An https logo URL pages and mail show. */
        logoUrl: v.optional(httpsUrl("an https URL of a logo image")),
      }),
      {},
    ),
    // sections: imports and shadow mode (issue 15)
    imports: importsSettingsSchema,
    // sections: plugins (issue 16)
    plugins: v.optional(
      v.strictObject({
        /** Built-in plugins to enable (`SVC_PLUGINS`); an unknown name stops boot. */
        enabled: v.optional(
          v.array(
            v.pipe(
              v.string(),
              v.regex(
                /^[a-z0-9-]{1,64}$/,
                rule("is not a plugin name", "plugin names such as oidc-provider (1 to 64 of [a-z0-9-])"),
              ),
            ),
            rule("is not a list of plugin names", "plugin names such as oidc-provider,federation"),
          ),
          [],
        ),
        /** Each plugin's config section by plugin name; the plugin validates its own. */
        config: v.optional(
          v.record(
            v.string(),
            v.record(
              v.string(),
              v.unknown(),
              rule("is not an object", "an object with the plugin's settings"),
            ),
          ),
          {},
        ),
      }),
      {},
    ),
  }),
  v.transform((c) => {
    const baseUrl = c.server.baseUrl ?? developmentBaseUrl(c.server.port);
    return {
      ...c,
      account: { ...c.account, returnToOrigins: c.account.returnToOrigins ?? [new URL(baseUrl).origin] },
      server: { ...c.server, baseUrl },
      relyingParty: { ...c.relyingParty, origins: c.relyingParty.origins ?? [new URL(baseUrl).origin] },
    };
  }),
);

/**
 * The whole configuration. Input: a partial object (every field optional, defaults below);
 * output: `SvcConfig` with every default filled in, the base URL and allowed origins derived
 * from the port when not given.
 */
export const SvcConfigSchema: v.GenericSchema<SvcConfigInput, SvcConfig> = svcConfigSchema;

// The written-out types of `types.ts` are exactly what the schema infers: `deno check` fails otherwise.
const _outputIsSvcConfig: Exactly<v.InferOutput<typeof svcConfigSchema>, SvcConfig> = true;
const _inputIsSvcConfigInput: Exactly<v.InferInput<typeof svcConfigSchema>, SvcConfigInput> = true;

/**
 * Every `SVC_*` variable svc reads into its configuration. Environment variables override the
 * config file, which overrides the defaults.
 */
export const ENV_SETTINGS: readonly EnvSetting[] = [
  ...SERVER_ENV_SETTINGS,
  ...STORAGE_ENV_SETTINGS,
  ...RELYING_PARTY_ENV_SETTINGS,
  ...TOKENS_ENV_SETTINGS,
  ...SESSIONS_ENV_SETTINGS,
  ...COOKIES_ENV_SETTINGS,
  ...PASSKEY_ENV_SETTINGS,
  ...TOTP_ENV_SETTINGS,
  ...EMAIL_OTP_ENV_SETTINGS,
  ...THROTTLE_ENV_SETTINGS,
  ...MAIL_ENV_SETTINGS,
  ...PASSWORD_ENV_SETTINGS,
  ...ABUSE_ENV_SETTINGS,
  ...RISK_ENV_SETTINGS,
  ...WEBHOOKS_ENV_SETTINGS,
  ...OUTBOUND_ENV_SETTINGS,
  ...MAINTENANCE_ENV_SETTINGS,
  ...AUTHZ_ENV_SETTINGS,
  ...IMPERSONATION_ENV_SETTINGS,
  ...DPOP_ENV_SETTINGS,
  ...BREAK_GLASS_ENV_SETTINGS,
  ...BOOTSTRAP_ENV_SETTINGS,
  {
    name: "SVC_LOG_FORMAT",
    path: "log.format",
    kind: "string",
    doc: "server log lines: pretty (plain text) or json (one object per line with time, level, msg)",
    defaultText: "pretty",
  },
  {
    name: "SVC_LOG_REQUESTS",
    path: "log.requests",
    kind: "string",
    doc: "true: one log line per request (request id, method, matched route, status, duration)",
    defaultText: "false",
  },
  ...METRICS_ENV_SETTINGS,
  // variables: admin console (issue 13)
  {
    name: "SVC_CONSOLE_MOUNT",
    path: "console.mountPath",
    kind: "string",
    doc:
      "path the embedded admin console is served under (static pages; their data comes from the admin API)",
  },
  ...MAIL_DELIVERY_ENV_SETTINGS,
  ...SMTP_ENV_SETTINGS,
  {
    name: "SVC_ACCOUNT_MOUNT_PATH",
    path: "account.mountPath",
    kind: "string",
    doc: "where the hosted account pages (sign-in, mailed links, self-service) are served",
  },
  {
    name: "SVC_ACCOUNT_RETURN_TO_ORIGINS",
    path: "account.returnToOrigins",
    kind: "string-list",
    doc: "comma-separated origins a returnTo may send the browser to after sign-in",
    defaultText: "the origin of SVC_BASE_URL",
  },
  {
    name: "SVC_BRAND_PRODUCT_NAME",
    path: "branding.productName",
    kind: "string",
    doc: "product name hosted pages and mail show",
    defaultText: "SVC_RP_NAME",
  },
  {
    name: "SVC_BRAND_COLOR",
    path: "branding.color",
    kind: "string",
    doc: "accent colour of pages and mail (#rrggbb)",
  },
  {
    name: "SVC_BRAND_LOGO_URL",
    path: "branding.logoUrl",
    kind: "string",
    doc: "https URL of a logo pages and mail show",
    defaultText: "unset",
  },
  ...IMPORTS_ENV_SETTINGS,
  // variables: plugins (issue 16)
  {
    name: "SVC_PLUGINS",
    path: "plugins.enabled",
    kind: "string-list",
    doc:
      "built-in plugins to enable, comma-separated (oidc-provider, federation, workload-federation); an unknown name stops boot",
    defaultText: "none",
  },
];

/**
 * `SVC_*` variables that other parts of svc read themselves; the loader accepts them
 * (they are not typos) but they set no config field.
 */
export const RESERVED_ENV: Readonly<Record<string, string>> = {
  SVC_CONFIG_FILE: "path of a JSON config file (same nesting as the config; env vars override it)",
  SVC_TEST_DATABASE_URL: "Postgres server of the test suite",
  SVC_ADMIN_TOKEN:
    "administrator access token svc import and svc mail send to a running server that holds the embedded store " +
    "(unset: the token svc login stored)",
  SVC_CREDENTIALS_FILE:
    "where svc login stores its tokens (mode 0600; default $XDG_CONFIG_HOME/svc/credentials.json, else ~/.config/svc/credentials.json)",
};
