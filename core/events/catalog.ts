/**
 * The catalog of svc's event kinds (spec section 6). Event kinds are stable strings: once
 * shipped, a kind never changes meaning or spelling. A kind is either one of the single kinds
 * listed here, or a member of a family (`login.*`, `mfa.*`, …): the emitting module owns the
 * names inside its family, and this catalog pins the families and every named kind.
 *
 * Kinds are lowercase dotted names, `<family>.<name>` with segments of `[a-z0-9_]`.
 *
 * Every kind svc emits is declared, with the fields of its `data`, in `kinds.ts`; a plugin
 * declares its own in its `events` (`PluginEventKind.payload`).
 *
 * @module
 */
import { CORE_EVENT_KINDS } from "./kinds.ts";
import type { EventPayload } from "./payload.ts";

/** The event families of spec section 6; every kind `<family>.<anything>` belongs to one. */
export const EVENT_FAMILIES = [
  "login",
  "mfa",
  "passkey",
  "risk",
  "abuse",
  "oidc",
  "saml",
  "federation",
  "workload",
  "breakglass",
  "impersonation",
  "user",
  "webhook",
  "organization",
  "group",
  "team",
  "realm",
  "role",
  "service_account",
  "api_key",
  "signing_key",
] as const;

/** An event family, such as `login`. */
export type EventFamily = typeof EVENT_FAMILIES[number];

/** A kind inside a family, such as `login.succeeded`. */
export type FamilyEventKind = `${EventFamily}.${string}`;

/** The single kinds of spec section 6 and the other kinds svc itself emits, by name. */
export const EVENT_KINDS = {
  /** A rotated refresh token is replayed (the family is revoked). */
  tokenRefreshReuseDetected: "token.refresh_reuse_detected",
  /** A risk decision is made; carries the contributing signals. */
  riskEvaluated: "risk.evaluated",
  /** The abuse counter store is down (fail-open or fail-closed per layer). */
  abuseCounterStoreUnavailable: "abuse.counter_store_unavailable",
  /** A passkey's sign count regresses. */
  passkeySigncountRegression: "passkey.signcount_regression",
  /** A user registered a passkey. */
  passkeyRegistered: "passkey.registered",
  /** A passkey signed a user in, as the first or the second factor. */
  passkeyLogin: "passkey.login",
  /** A user removed one of their passkeys. */
  passkeyRemoved: "passkey.removed",
  /** A user renamed one of their passkeys. */
  passkeyRenamed: "passkey.renamed",
  /** A user confirmed a TOTP enrollment: TOTP is now their second factor. */
  mfaTotpEnabled: "mfa.totp_enabled",
  /** A user removed their TOTP enrollment. */
  mfaTotpDisabled: "mfa.totp_disabled",
  /** A user generated a new set of recovery codes (the previous set stops working). */
  mfaRecoveryCodesGenerated: "mfa.recovery_codes_generated",
  /** Any break-glass login. */
  breakglassLogin: "breakglass.login",
  /** After break-glass use, until the account's secret is rotated. */
  breakglassRotationRequired: "breakglass.rotation_required",
  /** A webhook endpoint reached its consecutive-failure limit and was disabled. */
  webhookEndpointDisabled: "webhook.endpoint_disabled",
  /** A shadow comparison where the legacy and svc decisions differ. */
  authzShadowDivergence: "authz.shadow_divergence",
  /** A subject snapshot build skipped invalid grant rows (reported, login continues). */
  authzInvalidGrantsSkipped: "authz.invalid_grants_skipped",
  /** An admin fired a test delivery at a webhook endpoint. */
  webhookTest: "webhook.test",
  /** A user was erased (their personal data redacted, authenticators deleted). */
  userErased: "user.erased",
} as const;

/** A kind named in {@link EVENT_KINDS}. */
export type NamedEventKind = typeof EVENT_KINDS[keyof typeof EVENT_KINDS];

/** Every kind svc may emit: a named kind or any kind of a family. */
export type EventKind = NamedEventKind | FamilyEventKind;

/** Who reads events of a family or kind. */
export interface EventCatalogEntry {
  /** A named kind (`risk.evaluated`) or a family pattern (`login.*`). */
  readonly kind: string;
  /** When it is emitted. */
  readonly description: string;
  /**
   * Whether events that concern a user are also written to the user-visible security-event
   * ledger (spec 2.7: logins, new devices, MFA failures, erasures…).
   */
  readonly securityLedger: boolean;
  /**
   * The fields of its `data` (see `core/events/payload.ts`); absent for a family pattern and for a
   * plugin kind declared without one.
   */
  readonly payload?: EventPayload;
}

const FAMILY_DESCRIPTIONS: Readonly<Record<EventFamily, readonly [string, boolean]>> = {
  login: ["sign-in outcomes, new devices", true],
  mfa: ["second-factor challenges, successes and failures", true],
  passkey: ["passkey registration, use and removal", true],
  risk: ["risk-gate decisions", true],
  abuse: ["abuse-gate decisions and counter-store health", false],
  oidc: ["OIDC provider and client activity", false],
  saml: ["SAML sign-ins, links and refusals; connection certificates", true],
  federation: ["federated identity links and logins", true],
  workload: ["workload federation and machine identities", false],
  breakglass: ["break-glass logins, drills and rotations", true],
  impersonation: ["impersonation requests, consent, start and end", true],
  user: ["user lifecycle: creation, changes, suspension, erasure", true],
  webhook: ["webhook endpoint health and test pings", false],
  organization: ["organizations and their domains: creation, changes, verification, deletion", false],
  group: ["groups: creation, changes, deletion, members added and removed", false],
  team: ["teams: creation, changes, deletion, members added and removed", false],
  realm: ["realms: creation, changes, default switch", false],
  role: ["roles, grants, role assignments and policies: created, changed, deleted", false],
  service_account: ["service accounts: creation, secret rotation, disabling, enabling, deletion", false],
  api_key: ["API keys: creation and revocation (a user's own keys reach their security ledger)", true],
  signing_key: ["token signing keys: rotation", false],
};

const NAMED = new Set<string>(Object.values(EVENT_KINDS));
const FAMILIES = new Set<string>(EVENT_FAMILIES);
const KIND_SYNTAX = /^[a-z0-9_]+(?:\.[a-z0-9_]+)+$/;
/** Named kinds outside the families whose events concern the user who is their subject. */
const LEDGER_NAMED = new Set<string>([EVENT_KINDS.tokenRefreshReuseDetected]);

/**
 * The catalog: every family (as `<family>.*`, which declares no payload), then every kind svc
 * emits with its payload (from `CORE_EVENT_KINDS`, `core/events/kinds.ts`).
 */
export const EVENT_CATALOG: readonly EventCatalogEntry[] = Object.freeze([
  ...EVENT_FAMILIES.map((family) => ({
    kind: `${family}.*`,
    description: FAMILY_DESCRIPTIONS[family][0],
    securityLedger: FAMILY_DESCRIPTIONS[family][1],
  })),
  ...Object.entries(CORE_EVENT_KINDS).map(([kind, { when, payload }]) => ({
    kind,
    description: when,
    securityLedger: isSecurityLedgerKind(kind),
    payload,
  })),
]);

/** A family's description and whether its kinds reach the security ledger (for the reference page). */
export function eventFamilyDescription(
  family: EventFamily,
): { description: string; securityLedger: boolean } {
  const [description, securityLedger] = FAMILY_DESCRIPTIONS[family];
  return { description, securityLedger };
}

/** The family of a kind (`login` for `login.succeeded`), or null for kinds outside the families. */
export function eventFamilyOf(kind: string): EventFamily | null {
  const dot = kind.indexOf(".");
  if (dot <= 0) return null;
  const family = kind.slice(0, dot);
  return FAMILIES.has(family) ? family as EventFamily : null;
}

/** Whether `kind` is well formed and either a named kind or a kind of a family. */
export function isEventKind(kind: string): kind is EventKind {
  return KIND_SYNTAX.test(kind) &&
    (NAMED.has(kind) || Object.hasOwn(CORE_EVENT_KINDS, kind) || eventFamilyOf(kind) !== null);
}

/** Whether events of this kind that name a user go to the user-visible security-event ledger. */
export function isSecurityLedgerKind(kind: string): boolean {
  if (LEDGER_NAMED.has(kind)) return true;
  const family = eventFamilyOf(kind);
  return family !== null && FAMILY_DESCRIPTIONS[family][1];
}

/**
 * Whether a subscription pattern is acceptable: dotted segments of `[a-z0-9_]` where `*`
 * may stand for any run of characters (`login.*`, `*.failed`, `*`).
 */
export function isEventPattern(pattern: string): boolean {
  return pattern.length > 0 && pattern.length <= 200 && /^[a-z0-9_.*]+$/.test(pattern) &&
    !pattern.includes("..") && !pattern.startsWith(".") && !pattern.endsWith(".");
}

/**
 * The catalog with the kinds plugins emit added (each a well-formed kind not already listed);
 * throws `Error` naming the first duplicate or malformed kind.
 */
export function extendEventCatalog(
  extra: readonly EventCatalogEntry[],
  base: readonly EventCatalogEntry[] = EVENT_CATALOG,
): readonly EventCatalogEntry[] {
  const seen = new Set(base.map((entry) => entry.kind));
  for (const entry of extra) {
    if (!KIND_SYNTAX.test(entry.kind)) {
      throw new Error(`event kind ${JSON.stringify(entry.kind)} is malformed`);
    }
    if (seen.has(entry.kind)) throw new Error(`event kind ${entry.kind} is already in the catalog`);
    seen.add(entry.kind);
  }
  return Object.freeze([...base, ...extra]);
}
