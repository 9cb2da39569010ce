/**
 * The settings of passkeys (`SvcConfig.relyingParty`: the WebAuthn relying party;
 * `SvcConfig.passkey`: ceremonies): their valibot sections, their written-out types and their
 * `SVC_RP_*` / `SVC_PASSKEY_*` variables. `core/config/schema.ts` composes them into the whole
 * configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int, nonEmpty, origins, rpId } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.relyingParty`: the WebAuthn relying party. */
export type RelyingPartyConfig = { id: string; name: string; origins: string[] };

/** `SvcConfigInput.relyingParty`: the WebAuthn relying party, as a config file gives it. */
export type RelyingPartyConfigInput = { id?: string; name?: string; origins?: string[] };

/** The `relyingParty` section of the configuration. */
export const relyingPartySettingsSchema = v.optional(
  v.strictObject({
    id: v.optional(rpId(), "localhost"),
    name: v.optional(
      nonEmpty("the name passkey prompts show, such as Example Inc."),
      "svc (development)",
    ),
    /** Default: the origin of the base URL. */
    origins: v.optional(origins()),
  }),
  {},
);

/** `SvcConfig.passkey`: passkey ceremonies. */
export type PasskeyConfig = { ceremonyTtlSeconds: number };

/** `SvcConfigInput.passkey`: passkey ceremonies, as a config file gives it. */
export type PasskeyConfigInput = { ceremonyTtlSeconds?: number };

/** The `passkey` section of the configuration. */
export const passkeySettingsSchema = v.optional(
  v.strictObject({
    ceremonyTtlSeconds: v.optional(int(30, 3600, "seconds"), 300),
  }),
  {},
);

/** The `SVC_*` variables of `relyingParty`. */
export const RELYING_PARTY_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_RP_ID",
    path: "relyingParty.id",
    kind: "string",
    doc: "WebAuthn relying-party id (a domain); required outside localhost",
    deployment: true,
  },
  {
    name: "SVC_RP_NAME",
    path: "relyingParty.name",
    kind: "string",
    doc: "relying-party name shown in passkey prompts; required outside localhost",
    deployment: true,
  },
  {
    name: "SVC_RP_ORIGINS",
    path: "relyingParty.origins",
    kind: "string-list",
    doc: "comma-separated origins allowed in passkey ceremonies; required outside localhost",
    defaultText: "origin of the base URL",
    deployment: true,
  },
];

/** The `SVC_*` variables of `passkey`. */
export const PASSKEY_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_PASSKEY_CEREMONY_TTL_SECONDS",
    path: "passkey.ceremonyTtlSeconds",
    kind: "int",
    doc: "passkey ceremony lifetime",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
// `relyingParty.origins` is filled in by the composition (core/config/schema.ts), whose check covers
// `RelyingPartyConfig`; the section itself outputs it optional.
const _relyingPartyInput: Exactly<
  v.InferInput<typeof relyingPartySettingsSchema>,
  RelyingPartyConfigInput | undefined
> = true;
const _passkeyOutput: Exactly<v.InferOutput<typeof passkeySettingsSchema>, PasskeyConfig> = true;
const _passkeyInput: Exactly<v.InferInput<typeof passkeySettingsSchema>, PasskeyConfigInput | undefined> =
  true;
