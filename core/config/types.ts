/**
 * The types of svc's configuration, written out: `SvcConfig` (what `loadConfig` returns, every
 * default filled in) and `SvcConfigInput` (what a config file may hold), composed from each domain's
 * settings module (`core/<domain>/settings.ts`), which writes out its section's types. `schema.ts`
 * checks at compile time that both are exactly the types its valibot schema infers, so they cannot
 * drift.
 *
 * @module
 */
import type {
  CookiesConfig,
  CookiesConfigInput,
  ImpersonationConfig,
  ImpersonationConfigInput,
  SessionsConfig,
  SessionsConfigInput,
} from "../sessions/settings.ts";
import type { BootstrapConfig, BootstrapConfigInput } from "../accounts/settings.ts";
import type { StorageConfig, StorageConfigInput } from "../storage/settings.ts";
import type {
  DeclaredGrantConfig,
  DeclaredPermissionConfig,
  DeclaredRoleConfig,
  DeclaredRoleInput,
} from "../authz/settings.ts";
import type { AuthzConfig, AuthzConfigInput } from "../authz/settings.ts";
import type { ImportsConfig, ImportsConfigInput } from "../imports/settings.ts";
import type { MetricsConfig, MetricsConfigInput } from "../metrics/settings.ts";
import type { MaintenanceConfig, MaintenanceConfigInput } from "../maintenance/settings.ts";
import type { BreakGlassConfig, BreakGlassConfigInput } from "../break-glass/settings.ts";
import type { DpopConfig, DpopConfigInput } from "../dpop/settings.ts";
import type { EmailOtpConfig, EmailOtpConfigInput } from "../mfa/settings.ts";
import type { TotpConfig, TotpConfigInput } from "../totp/settings.ts";
import type {
  PasskeyConfig,
  PasskeyConfigInput,
  RelyingPartyConfig,
  RelyingPartyConfigInput,
} from "../passkeys/settings.ts";
import type {
  AbuseLayerConfig,
  AbuseLayerInput,
  CaptchaProviderName,
  FailMode,
  ThrottleRuleConfig,
  ThrottleRuleInput,
} from "../abuse/settings.ts";
import type {
  AbuseConfig,
  AbuseConfigInput,
  ThrottleConfig,
  ThrottleConfigInput,
} from "../abuse/settings.ts";
import type {
  OutboundConfig,
  OutboundConfigInput,
  ServerConfig,
  ServerConfigInput,
} from "../net/settings.ts";
import type { TokensConfig, TokensConfigInput } from "../tokens/settings.ts";
import type { FlagInput } from "../settings/fields.ts";
import type {
  MailConfig,
  MailConfigInput,
  MailDeliveryConfig,
  MailDeliveryConfigInput,
  SmtpConfig,
  SmtpConfigInput,
} from "../mail/settings.ts";
import type { PasswordHashingConfig, PasswordHashingConfigInput } from "../passwords/settings.ts";
import type { WebhooksConfig, WebhooksConfigInput } from "../webhooks/settings.ts";
import type { RiskConfig, RiskConfigInput } from "../risk/settings.ts";

export type {
  AbuseLayerConfig,
  AbuseLayerInput,
  CaptchaProviderName,
  FailMode,
  ThrottleRuleConfig,
  ThrottleRuleInput,
};

export type { DeclaredGrantConfig, DeclaredPermissionConfig, DeclaredRoleConfig, DeclaredRoleInput };

/** Where svc keeps its data: the embedded PGlite store in a folder, or a Postgres server. */
export type { StorageConfig };

/**
 * The validated configuration, every default filled in (the output of `SvcConfigSchema`). Each
 * field's meaning and default are in `svc help` and README's settings table.
 */
export interface SvcConfig {
  /** The listener, the public URL, request limits and CORS. */
  server: ServerConfig;
  /** The database. */
  storage: StorageConfig;
  /** The WebAuthn relying party. */
  relyingParty: RelyingPartyConfig;
  /** Token lifetimes and the signing-key overlap. */
  tokens: TokensConfig;
  /** Session timeouts. */
  sessions: SessionsConfig;
  /** The attributes of svc's cookies. */
  cookies: CookiesConfig;
  /** Passkey ceremonies. */
  passkey: PasskeyConfig;
  /** TOTP codes. */
  totp: TotpConfig;
  /** Emailed one-time codes. */
  emailOtp: EmailOtpConfig;
  /** Request throttles beside the login abuse gate. */
  throttle: ThrottleConfig;
  /** The sender of svc's mail. */
  mail: MailConfig;
  /** Password hashing. */
  password: PasswordHashingConfig;
  /** The login abuse gate and the adaptive CAPTCHA. */
  abuse: AbuseConfig;
  /** The login risk gate. */
  risk: RiskConfig;
  /** Webhook delivery. */
  webhooks: WebhooksConfig;
  /** The outbound guard of every server-side fetch (SSRF). */
  outbound: OutboundConfig;
  /** Periodic sweeps. */
  maintenance: MaintenanceConfig;
  /** Subject snapshots and declared permissions and roles. */
  authz: AuthzConfig;
  /** Impersonation windows. */
  impersonation: ImpersonationConfig;
  /** DPoP (RFC 9449) proofs: nonce requirement and acceptance window. */
  dpop: DpopConfig;
  /** Break-glass drills. */
  breakGlass: BreakGlassConfig;
  /** The first administrator. */
  bootstrap: BootstrapConfig;
  /** Log format and request lines. */
  log: { format: "pretty" | "json"; requests: boolean };
  /** The Prometheus endpoint. */
  metrics: MetricsConfig;
  /** The embedded admin console. */
  console: { mountPath: string };
  /** How queued mail leaves. */
  mailDelivery: MailDeliveryConfig;
  /** The SMTP server. */
  smtp: SmtpConfig;
  /** The hosted account pages. */
  account: { mountPath: string; returnToOrigins: string[] };
  /** Product name, colour and logo of pages and mail. */
  branding: { productName?: string; color: string; logoUrl?: string };
  /** Importers. */
  imports: ImportsConfig;
  /** Built-in plugins and each plugin's own section. */
  plugins: { enabled: string[]; config: { [plugin: string]: { [setting: string]: unknown } } };
}

/** A yes/no setting as a file or the environment gives it. */
export type { FlagInput };

/** The shape of a config file (JSON): any part of the configuration, nested as in `SvcConfig`. */
export interface SvcConfigInput {
  /** See `SvcConfig.server`. */
  server?: ServerConfigInput;
  /** See `SvcConfig.storage`. */
  storage?: StorageConfigInput;
  /** See `SvcConfig.relyingParty`. */
  relyingParty?: RelyingPartyConfigInput;
  /** See `SvcConfig.tokens`. */
  tokens?: TokensConfigInput;
  /** See `SvcConfig.sessions`. */
  sessions?: SessionsConfigInput;
  /** See `SvcConfig.cookies`. */
  cookies?: CookiesConfigInput;
  /** See `SvcConfig.passkey`. */
  passkey?: PasskeyConfigInput;
  /** See `SvcConfig.totp`. */
  totp?: TotpConfigInput;
  /** See `SvcConfig.emailOtp`. */
  emailOtp?: EmailOtpConfigInput;
  /** See `SvcConfig.throttle`. */
  throttle?: ThrottleConfigInput;
  /** See `SvcConfig.mail`. */
  mail?: MailConfigInput;
  /** See `SvcConfig.password`. */
  password?: PasswordHashingConfigInput;
  /** See `SvcConfig.abuse`. */
  abuse?: AbuseConfigInput;
  /** See `SvcConfig.risk`. */
  risk?: RiskConfigInput;
  /** See `SvcConfig.webhooks`. */
  webhooks?: WebhooksConfigInput;
  /** See `SvcConfig.outbound`. */
  outbound?: OutboundConfigInput;
  /** See `SvcConfig.maintenance`. */
  maintenance?: MaintenanceConfigInput;
  /** See `SvcConfig.authz`. */
  authz?: AuthzConfigInput;
  /** See `SvcConfig.impersonation`. */
  impersonation?: ImpersonationConfigInput;
  /** See `SvcConfig.dpop`. */
  dpop?: DpopConfigInput;
  /** See `SvcConfig.breakGlass`. */
  breakGlass?: BreakGlassConfigInput;
  /** See `SvcConfig.bootstrap`. */
  bootstrap?: BootstrapConfigInput;
  /** See `SvcConfig.log`. */
  log?: { format?: "pretty" | "json"; requests?: FlagInput };
  /** See `SvcConfig.metrics`. */
  metrics?: MetricsConfigInput;
  /** See `SvcConfig.console`. */
  console?: { mountPath?: string };
  /** See `SvcConfig.mailDelivery`. */
  mailDelivery?: MailDeliveryConfigInput;
  /** See `SvcConfig.smtp`. */
  smtp?: SmtpConfigInput;
  /** See `SvcConfig.account`. */
  account?: { mountPath?: string; returnToOrigins?: string[] };
  /** See `SvcConfig.branding`. */
  branding?: { productName?: string; color?: string; logoUrl?: string };
  /** See `SvcConfig.imports`. */
  imports?: ImportsConfigInput;
  /** See `SvcConfig.plugins`. */
  plugins?: { enabled?: string[]; config?: { [plugin: string]: { [setting: string]: unknown } } };
}
