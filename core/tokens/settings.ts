/**
 * The settings of svc's tokens (`SvcConfig.tokens`): lifetimes, the refresh grace window and the
 * signing-key overlap; its valibot section, its written-out types and its variables.
 * `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, flag, type FlagInput, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.tokens`: token lifetimes, svc's refresh grace window and the signing-key overlap. */
export type TokensConfig = {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  mfaTokenTtlSeconds: number;
  signingKeyOverlapSeconds: number;
  /**
   * svc's own refresh (`/auth/refresh`): a rotated refresh token presented again within this
   * many seconds gets the same successor instead of revoking its family (0: off).
   */
  refreshGraceSeconds: number;
  /**
   * RS256 signatures with a native library where the runtime adapter has one (Deno: OpenSSL's
   * libcrypto through FFI); false, or where none loads: WebCrypto through jose. Same tokens.
   */
  nativeRsaSigner: boolean;
};

/** `SvcConfigInput.tokens`: token lifetimes, svc's refresh grace window and the signing-key overlap, as a config file gives it. */
export type TokensConfigInput = {
  accessTokenTtlSeconds?: number;
  refreshTokenTtlSeconds?: number;
  mfaTokenTtlSeconds?: number;
  signingKeyOverlapSeconds?: number;
  refreshGraceSeconds?: number;
  nativeRsaSigner?: FlagInput;
};

/** The `tokens` section of the configuration. */
export const tokensSettingsSchema = v.optional(
  v.strictObject({
    accessTokenTtlSeconds: v.optional(int(30, 86400, "seconds"), 600),
    refreshTokenTtlSeconds: v.optional(int(60, 31_536_000, "seconds"), 30 * 86400),
    mfaTokenTtlSeconds: v.optional(int(30, 3600, "seconds"), 300),
    /** How long a retired signing key stays published and accepted (at least the access token lifetime). */
    signingKeyOverlapSeconds: v.optional(int(0, 31_536_000, "seconds"), 86400),
    /** svc's own refresh grace window (0: off; see `SessionService.refresh`). */
    refreshGraceSeconds: v.optional(int(0, 300, "seconds"), 0),
    /** RS256 with a native library where the runtime adapter has one; false: always WebCrypto. */
    nativeRsaSigner: v.optional(flag(), true),
  }),
  {},
);

/** The `SVC_*` variables of `tokens`. */
export const TOKENS_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_ACCESS_TOKEN_TTL_SECONDS",
    path: "tokens.accessTokenTtlSeconds",
    kind: "int",
    doc: "access token lifetime",
  },
  {
    name: "SVC_REFRESH_TOKEN_TTL_SECONDS",
    path: "tokens.refreshTokenTtlSeconds",
    kind: "int",
    doc: "refresh token lifetime (30 days)",
  },
  {
    name: "SVC_REFRESH_GRACE_SECONDS",
    path: "tokens.refreshGraceSeconds",
    kind: "int",
    doc:
      "svc's own refresh grace window: a rotated refresh token presented again within it gets the same successor (0-300; 0: off)",
    defaultText: "0 (off)",
  },
  {
    name: "SVC_MFA_TOKEN_TTL_SECONDS",
    path: "tokens.mfaTokenTtlSeconds",
    kind: "int",
    doc: "MFA hand-off token (mfa+svc) lifetime",
  },
  {
    name: "SVC_SIGNING_KEY_OVERLAP_SECONDS",
    path: "tokens.signingKeyOverlapSeconds",
    kind: "int",
    doc: "how long a retired signing key stays published and accepted (at least the access token lifetime)",
  },
  {
    name: "SVC_RSA_NATIVE_SIGNER",
    path: "tokens.nativeRsaSigner",
    kind: "string",
    doc: "RS256 token signatures with a native library where the runtime has one (on Deno: OpenSSL 3's " +
      "libcrypto through FFI, a fifth to a sixth of the CPU of Deno's WebCrypto; on Node: node:crypto's " +
      "sign without jose around it; same tokens byte for byte); false: always WebCrypto through jose",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _tokensOutput: Exactly<v.InferOutput<typeof tokensSettingsSchema>, TokensConfig> = true;
const _tokensInput: Exactly<v.InferInput<typeof tokensSettingsSchema>, TokensConfigInput | undefined> = true;
