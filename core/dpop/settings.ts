/**
 * The settings of DPoP proofs (`SvcConfig.dpop`): its valibot section, its written-out types and
 * its `SVC_DPOP_*` variables. `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, flag, type FlagInput, int } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.dpop`: DPoP (RFC 9449) proofs: nonce requirement and acceptance window. */
export type DpopConfig = { nonceRequired: boolean; proofMaxAgeSeconds: number };

/** `SvcConfigInput.dpop`: DPoP (RFC 9449) proofs: nonce requirement and acceptance window, as a config file gives it. */
export type DpopConfigInput = { nonceRequired?: FlagInput; proofMaxAgeSeconds?: number };

/** The `dpop` section of the configuration. */
export const dpopSettingsSchema = v.optional(
  v.strictObject({
    /** Whether DPoP proofs to svc's own API and the OIDC token endpoint must carry a server nonce. */
    nonceRequired: v.optional(flag(), false),
    /** How old a DPoP proof's `iat` may be. */
    proofMaxAgeSeconds: v.optional(int(5, 600, "seconds"), 120),
  }),
  {},
);

/** The `SVC_*` variables of `dpop`. */
export const DPOP_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_DPOP_NONCE_REQUIRED",
    path: "dpop.nonceRequired",
    kind: "string",
    doc: "true: DPoP proofs must carry a server-provided nonce (use_dpop_nonce and DPoP-Nonce otherwise)",
  },
  {
    name: "SVC_DPOP_PROOF_MAX_AGE_SECONDS",
    path: "dpop.proofMaxAgeSeconds",
    kind: "int",
    doc: "how old a DPoP proof (its iat) may be; its jti is remembered that long",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _dpopOutput: Exactly<v.InferOutput<typeof dpopSettingsSchema>, DpopConfig> = true;
const _dpopInput: Exactly<v.InferInput<typeof dpopSettingsSchema>, DpopConfigInput | undefined> = true;
