/**
 * The svc token types (spec 2.1, 2.2): their `typ` header values, their claims and the
 * valibot schemas verification checks the claims against. Token types are versioned by
 * their `typ` (the `+svc` suffix); a token of one type is never accepted as another.
 *
 * @module
 */
import * as v from "valibot";
import { UUID_PATTERN } from "../../core/ids.ts";

/** The `typ` header of each JWT type. */
export const TokenTypes = {
  /** Access token (spec 2.1). */
  access: "at+svc",
  /** MFA hand-off: a pending login waiting for its second factor. */
  mfa: "mfa+svc",
  /** Password reset (single use). */
  passwordReset: "pwreset+svc",
  /** Email verification (single use). */
  emailVerification: "everify+svc",
  /** Invitation (single use). */
  invitation: "invite+svc",
  /** Impersonation consent, sent to the target user (single purpose, single use). */
  impersonationConsent: "impconsent+svc",
} as const;

/** A JWT type of svc. */
export type TokenType = typeof TokenTypes[keyof typeof TokenTypes];

/** Every JWT type. */
export const TOKEN_TYPES: readonly TokenType[] = Object.values(TokenTypes);

/** The types whose jti is consumed on use (deny-listed through the consumed-token store). */
export type SingleUseTokenType = "pwreset+svc" | "everify+svc" | "invite+svc" | "impconsent+svc";

/** Whether a type is single use. */
export function isSingleUse(typ: TokenType): typ is SingleUseTokenType {
  return typ === "pwreset+svc" || typ === "everify+svc" || typ === "invite+svc" || typ === "impconsent+svc";
}

/** Default lifetimes in seconds of the types whose lifetime is not configured. */
export const DEFAULT_TTL_SECONDS: Readonly<Record<TokenType, number>> = {
  "at+svc": 600,
  "mfa+svc": 300,
  "pwreset+svc": 1800,
  "everify+svc": 86400,
  "invite+svc": 7 * 86400,
  "impconsent+svc": 1800,
};

/** The actor of an impersonation (the `act` claim). */
export interface ActorClaim {
  /** The actor's user id. */
  readonly sub: string;
  /** The impersonation id. */
  readonly imp: string;
}

/** Claims every svc JWT carries. `aud` is the app for access and MFA tokens, else the issuer. */
export interface BaseClaims {
  /** The issuer: svc's base URL. */
  readonly iss: string;
  /** The audience. */
  readonly aud: string;
  /** The realm the token belongs to. */
  readonly realm: string;
  /** Issued at, in seconds since the epoch. */
  readonly iat: number;
  /** Expires at, in seconds since the epoch. */
  readonly exp: number;
  /** The token's unique id (single-use tokens are consumed by it). */
  readonly jti: string;
  /** Not before, in seconds since the epoch, when set. */
  readonly nbf?: number;
}

/** `at+svc` (spec 2.1). */
export interface AccessTokenClaims extends BaseClaims {
  /** The user id. */
  readonly sub: string;
  /** The effective organization; absent when none. */
  readonly org?: string;
  /** The session id. */
  readonly sid: string;
  /** The session MFA level (`PhishingResistant` after a passkey login). */
  readonly mfa: string;
  /** Present only when impersonating. */
  readonly act?: ActorClaim;
  /** The confirmation of a DPoP-bound token (RFC 9449 6.1): the key's JWK SHA-256 thumbprint. */
  readonly cnf?: { readonly jkt: string };
}

/** `mfa+svc`: the pending login (subject, realm, requested org, audience, IP). */
export interface MfaTokenClaims extends BaseClaims {
  /** The user who passed the first factor. */
  readonly sub: string;
  /** The requested organization, or null. */
  readonly org: string | null;
  /** The client IP of the first factor, or null. */
  readonly ip: string | null;
  /** The first factor that succeeded (`password`, `passkey`…). */
  readonly amr: string;
}

/** `pwreset+svc`. */
export interface PasswordResetClaims extends BaseClaims {
  /** The user whose password the link resets. */
  readonly sub: string;
  /**
   * The user's credential stamp when the link was minted: the link works only while the stamp is
   * unchanged, so any password change (a reset with another link included) kills it.
   */
  readonly stamp: string;
}

/**
 * `everify+svc`: proves control of `email`. With `prev` it confirms a pending email change
 * (an organization administrator's): `email` replaces `prev`, if `prev` is still the user's.
 */
export interface EmailVerificationClaims extends BaseClaims {
  /** The user whose address is verified. */
  readonly sub: string;
  /** The address being verified. */
  readonly email: string;
  /** A pending change: the address `email` replaces; absent for a plain verification. */
  readonly prev?: string;
}

/** `invite+svc`: an invitation of `email`, optionally into an organization, by `inv`. */
export interface InvitationClaims extends BaseClaims {
  /** The invited address. */
  readonly email: string;
  /** The organization the invitation is into, or null. */
  readonly org: string | null;
  /** The inviting user's id. */
  readonly inv: string;
}

/** `impconsent+svc`: sent to the target (`sub`) to approve impersonation `act.imp` by `act.sub`. */
export interface ImpersonationConsentClaims extends BaseClaims {
  /** The user asked to consent (the impersonation's target). */
  readonly sub: string;
  /** Who asks to impersonate, and the impersonation. */
  readonly act: ActorClaim;
}

/** The claims of each type. */
export interface TokenClaimsByType {
  /** Access token claims. */
  "at+svc": AccessTokenClaims;
  /** MFA hand-off token claims. */
  "mfa+svc": MfaTokenClaims;
  /** Password reset link claims. */
  "pwreset+svc": PasswordResetClaims;
  /** Email verification link claims. */
  "everify+svc": EmailVerificationClaims;
  /** Invitation link claims. */
  "invite+svc": InvitationClaims;
  /** Impersonation consent link claims. */
  "impconsent+svc": ImpersonationConsentClaims;
}

/** What minting a token of type `T` takes: its claims without those svc sets itself. */
export type TokenMintInput<T extends TokenType> =
  & Omit<TokenClaimsByType[T], "iss" | "iat" | "exp" | "jti" | "nbf" | "aud">
  & (T extends "at+svc" | "mfa+svc" ? { readonly aud: string } : { readonly aud?: never });

const uuid = v.pipe(v.string(), v.regex(UUID_PATTERN));
const text = v.pipe(v.string(), v.minLength(1), v.maxLength(2000));
const seconds = v.pipe(v.number(), v.integer(), v.minValue(0));
const actor = v.object({ sub: uuid, imp: uuid });

const base = {
  iss: text,
  aud: text,
  realm: uuid,
  iat: seconds,
  exp: seconds,
  jti: text,
  nbf: v.optional(seconds),
};

/** The claim schema of each type. */
export const CLAIM_SCHEMAS: { readonly [T in TokenType]: v.GenericSchema<unknown, TokenClaimsByType[T]> } = {
  "at+svc": v.object({
    ...base,
    sub: uuid,
    org: v.optional(uuid),
    sid: uuid,
    mfa: text,
    act: v.optional(actor),
    cnf: v.optional(v.object({ jkt: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/)) })),
  }),
  "mfa+svc": v.object({
    ...base,
    sub: uuid,
    org: v.nullable(uuid),
    ip: v.nullable(text),
    amr: text,
  }),
  "pwreset+svc": v.object({ ...base, sub: uuid, stamp: v.pipe(v.string(), v.maxLength(64)) }),
  "everify+svc": v.object({ ...base, sub: uuid, email: text, prev: v.optional(text) }),
  "invite+svc": v.object({ ...base, email: text, org: v.nullable(uuid), inv: uuid }),
  "impconsent+svc": v.object({ ...base, sub: uuid, act: actor }),
};
