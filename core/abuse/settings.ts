/**
 * The settings of the abuse defences (`SvcConfig.abuse`: the login abuse gate and the adaptive
 * CAPTCHA; `SvcConfig.throttle`: the request throttles beside it): their valibot sections, their
 * written-out types and their `SVC_ABUSE_*` / `SVC_THROTTLE_*` variables.
 * `core/config/schema.ts` composes them into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int, nonEmpty, rule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** What a counter store failure does to a layer. */
export type FailMode = "open" | "closed";

/** The CAPTCHA providers svc can ask. */
export type CaptchaProviderName = "none" | "turnstile" | "hcaptcha" | "recaptcha";

/** One windowed layer of the abuse gate. */
export interface AbuseLayerConfig {
  /** Attempts allowed per window. */
  limit: number;
  /** The window's length in seconds. */
  windowSeconds: number;
  /** What happens when the counter store is down. */
  failMode: FailMode;
}

/** A request throttle: at most `limit` requests per `windowSeconds`. */
export interface ThrottleRuleConfig {
  /** Requests allowed per window. */
  limit: number;
  /** The window's length in seconds. */
  windowSeconds: number;
}

/** An abuse layer as a config file gives it. */
export interface AbuseLayerInput {
  /** Attempts allowed per window. */
  limit?: number;
  /** The window's length in seconds. */
  windowSeconds?: number;
  /** What happens when the counter store is down. */
  failMode?: FailMode;
}

/** A request throttle as a config file gives it. */
export interface ThrottleRuleInput {
  /** Requests allowed per window. */
  limit?: number;
  /** The window's length in seconds. */
  windowSeconds?: number;
}

/** `SvcConfig.throttle`: request throttles beside the login abuse gate. */
export type ThrottleConfig = {
  forgotPassword: { perAccount: ThrottleRuleConfig; perIp: ThrottleRuleConfig };
  emailVerification: { perAccount: ThrottleRuleConfig; perIp: ThrottleRuleConfig };
  passkeyOptions: { perIp: ThrottleRuleConfig };
};

/** `SvcConfigInput.throttle`: request throttles beside the login abuse gate, as a config file gives it. */
export type ThrottleConfigInput = {
  forgotPassword?: { perAccount?: ThrottleRuleInput; perIp?: ThrottleRuleInput };
  emailVerification?: { perAccount?: ThrottleRuleInput; perIp?: ThrottleRuleInput };
  passkeyOptions?: { perIp?: ThrottleRuleInput };
};

/** Request throttles beside the login abuse gate (`core/abuse/request-throttle.ts`). */
export const throttleSettingsSchema = v.optional(
  v.strictObject({
    forgotPassword: v.optional(
      v.strictObject({ perAccount: throttleRule(3, 3600), perIp: throttleRule(10, 3600) }),
      {},
    ),
    emailVerification: v.optional(
      v.strictObject({ perAccount: throttleRule(3, 3600), perIp: throttleRule(10, 3600) }),
      {},
    ),
    passkeyOptions: v.optional(v.strictObject({ perIp: throttleRule(30, 300) }), {}),
  }),
  {},
);

/** `SvcConfig.abuse`: the login abuse gate and the adaptive CAPTCHA. */
export type AbuseConfig = {
  perIp: AbuseLayerConfig;
  perIpAccount: AbuseLayerConfig;
  accountLockout: AbuseLayerConfig;
  credentialStuffing: { distinctIdentifiers: number; windowSeconds: number; failMode: FailMode };
  captcha: {
    provider: CaptchaProviderName;
    atPercent: number;
    siteKey?: string;
    secret?: string;
    hostnames: string[];
    action?: string;
    minScorePercent: number;
    timeoutMs: number;
  };
};

/** `SvcConfigInput.abuse`: the login abuse gate and the adaptive CAPTCHA, as a config file gives it. */
export type AbuseConfigInput = {
  perIp?: AbuseLayerInput;
  perIpAccount?: AbuseLayerInput;
  accountLockout?: AbuseLayerInput;
  credentialStuffing?: { distinctIdentifiers?: number; windowSeconds?: number; failMode?: FailMode };
  captcha?: {
    provider?: CaptchaProviderName;
    atPercent?: number;
    siteKey?: string;
    secret?: string;
    hostnames?: string[];
    action?: string;
    minScorePercent?: number;
    timeoutMs?: number;
  };
};

/** The `abuse` section of the configuration. */
export const abuseSettingsSchema = v.optional(
  v.strictObject({
    perIp: layer(30, 300),
    perIpAccount: layer(10, 900),
    accountLockout: layer(5, 900),
    credentialStuffing: v.optional(
      v.strictObject({
        distinctIdentifiers: v.optional(int(1, 1_000_000), 200),
        windowSeconds: v.optional(int(1, 604800, "seconds"), 600),
        failMode: v.optional(failMode(), "open"),
      }),
      {},
    ),
    /** The adaptive CAPTCHA: demanded once a layer passes `atPercent` of its limit (provider set). */
    captcha: v.optional(
      v.strictObject({
        provider: v.optional(captchaProvider(), "none"),
        atPercent: v.optional(int(1, 100, "percent"), 50),
        siteKey: v.optional(nonEmpty("the CAPTCHA site key the login page embeds")),
        secret: v.optional(nonEmpty("the CAPTCHA provider's secret key")),
        /** Hostnames the provider must report (empty: not checked). */
        hostnames: v.optional(
          v.array(
            nonEmpty("host names such as login.example.com"),
            rule("is not a list", "comma-separated host names such as login.example.com"),
          ),
          [],
        ),
        /** The action the provider must report, where it reports one (unset: not checked). */
        action: v.optional(nonEmpty("the widget's action name, such as login")),
        /** reCAPTCHA v3: the lowest acceptable score, in percent (0.5 is 50). */
        minScorePercent: v.optional(int(0, 100, "percent"), 50),
        timeoutMs: v.optional(int(100, 60_000, "milliseconds"), 5000),
      }),
      {},
    ),
  }),
  {},
);

/** The `SVC_*` variables of `throttle`. */
export const THROTTLE_ENV_SETTINGS: readonly EnvSetting[] = [
  ...throttleSettings(
    "FORGOT_PER_ACCOUNT",
    "forgotPassword.perAccount",
    "forgot-password mails per account",
  ),
  ...throttleSettings("FORGOT_PER_IP", "forgotPassword.perIp", "forgot-password requests per IP"),
  ...throttleSettings(
    "VERIFY_PER_ACCOUNT",
    "emailVerification.perAccount",
    "verification mails per account",
  ),
  ...throttleSettings("VERIFY_PER_IP", "emailVerification.perIp", "verification requests per IP"),
  ...throttleSettings("PASSKEY_OPTIONS_PER_IP", "passkeyOptions.perIp", "passkey login options per IP"),
];

/** The `SVC_*` variables of `abuse`. */
export const ABUSE_ENV_SETTINGS: readonly EnvSetting[] = [
  ...abuseLayerSettings("PER_IP", "perIp", "per IP"),
  ...abuseLayerSettings("PER_IP_ACCOUNT", "perIpAccount", "per IP and account"),
  ...abuseLayerSettings("ACCOUNT_LOCKOUT", "accountLockout", "account lockout"),
  {
    name: "SVC_ABUSE_CREDENTIAL_STUFFING_DISTINCT_IDENTIFIERS",
    path: "abuse.credentialStuffing.distinctIdentifiers",
    kind: "int",
    doc: "abuse gate, credential stuffing: distinct identifiers per IP per window",
  },
  {
    name: "SVC_ABUSE_CREDENTIAL_STUFFING_WINDOW_SECONDS",
    path: "abuse.credentialStuffing.windowSeconds",
    kind: "int",
    doc: "abuse gate, credential stuffing: window",
  },
  {
    name: "SVC_ABUSE_CREDENTIAL_STUFFING_FAIL_MODE",
    path: "abuse.credentialStuffing.failMode",
    kind: "string",
    doc: "abuse gate, credential stuffing: open or closed when the counter store is down",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_PROVIDER",
    path: "abuse.captcha.provider",
    kind: "string",
    doc: "CAPTCHA provider: none, turnstile, hcaptcha or recaptcha (with SVC_ABUSE_CAPTCHA_SECRET)",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_AT_PERCENT",
    path: "abuse.captcha.atPercent",
    kind: "int",
    doc: "a CAPTCHA is demanded once any abuse layer passes this percentage of its limit",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_SITE_KEY",
    path: "abuse.captcha.siteKey",
    kind: "string",
    doc: "CAPTCHA site key handed to the login page",
    defaultText: "unset",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_SECRET",
    path: "abuse.captcha.secret",
    kind: "string",
    doc: "CAPTCHA provider secret key (siteverify)",
    defaultText: "unset",
    secret: "hide",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_HOSTNAMES",
    path: "abuse.captcha.hostnames",
    kind: "string-list",
    doc: "comma-separated hostnames the CAPTCHA provider must report",
    defaultText: "unset (not checked)",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_ACTION",
    path: "abuse.captcha.action",
    kind: "string",
    doc: "action the CAPTCHA provider must report, where it reports one",
    defaultText: "unset (not checked)",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_MIN_SCORE_PERCENT",
    path: "abuse.captcha.minScorePercent",
    kind: "int",
    doc: "reCAPTCHA v3: lowest accepted score in percent (0.5 is 50)",
  },
  {
    name: "SVC_ABUSE_CAPTCHA_TIMEOUT_MS",
    path: "abuse.captcha.timeoutMs",
    kind: "int",
    doc: "timeout of a CAPTCHA siteverify call (a timeout rejects the CAPTCHA)",
  },
];

/** The `failMode` field of a settings schema. */
function failMode() {
  return v.picklist(
    ["open", "closed"],
    rule(
      "is not a failure mode",
      '"open" (let the attempt through and emit abuse.counter_store_unavailable) or "closed" (refuse it)',
    ),
  );
}

/** The `captchaProvider` field of a settings schema. */
function captchaProvider() {
  return v.picklist(
    ["none", "turnstile", "hcaptcha", "recaptcha"],
    rule("is not a CAPTCHA provider", '"none", "turnstile", "hcaptcha" or "recaptcha"'),
  );
}

/** An abuse layer: at most `limit` attempts per `windowSeconds`, and what to do when counters are down. */
function layer(limit: number, windowSeconds: number) {
  return v.optional(
    v.strictObject({
      limit: v.optional(int(1, 1_000_000), limit),
      windowSeconds: v.optional(int(1, 604800, "seconds"), windowSeconds),
      failMode: v.optional(failMode(), "open"),
    }),
    {},
  );
}

/** A request throttle: at most `limit` requests per `windowSeconds`. */
function throttleRule(limit: number, windowSeconds: number) {
  return v.optional(
    v.strictObject({
      limit: v.optional(int(1, 1_000_000), limit),
      windowSeconds: v.optional(int(1, 604800, "seconds"), windowSeconds),
    }),
    {},
  );
}

function abuseLayerSettings(name: string, key: string, label: string): EnvSetting[] {
  return [
    {
      name: `SVC_ABUSE_${name}_LIMIT`,
      path: `abuse.${key}.limit`,
      kind: "int",
      doc: `abuse gate, ${label}: attempts per window`,
    },
    {
      name: `SVC_ABUSE_${name}_WINDOW_SECONDS`,
      path: `abuse.${key}.windowSeconds`,
      kind: "int",
      doc: `abuse gate, ${label}: window`,
    },
    {
      name: `SVC_ABUSE_${name}_FAIL_MODE`,
      path: `abuse.${key}.failMode`,
      kind: "string",
      doc: `abuse gate, ${label}: open or closed when the counter store is down`,
    },
  ];
}

function throttleSettings(name: string, key: string, label: string): EnvSetting[] {
  return [
    {
      name: `SVC_THROTTLE_${name}_LIMIT`,
      path: `throttle.${key}.limit`,
      kind: "int",
      doc: `request throttle, ${label}: requests per window`,
    },
    {
      name: `SVC_THROTTLE_${name}_WINDOW_SECONDS`,
      path: `throttle.${key}.windowSeconds`,
      kind: "int",
      doc: `request throttle, ${label}: window`,
    },
  ];
}

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _throttleOutput: Exactly<v.InferOutput<typeof throttleSettingsSchema>, ThrottleConfig> = true;
const _throttleInput: Exactly<v.InferInput<typeof throttleSettingsSchema>, ThrottleConfigInput | undefined> =
  true;
const _abuseOutput: Exactly<v.InferOutput<typeof abuseSettingsSchema>, AbuseConfig> = true;
const _abuseInput: Exactly<v.InferInput<typeof abuseSettingsSchema>, AbuseConfigInput | undefined> = true;
