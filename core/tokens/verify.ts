/**
 * Verifies a svc JWT statelessly against the realm's published keys. Everything wrong is
 * the one `InvalidTokenError` (code `invalid_token`):
 *
 * - the header may hold only `alg`, `typ` and `kid`: an embedded `jwk`, a `jku`, `x5u`,
 *   `x5c`, `crit` or anything else rejects the token;
 * - `alg` must be `RS256` (so `none` and HS256 keyed with the public key fail), `typ` must
 *   be exactly the expected type, and `kid` must be a plain key id (never a path or URL);
 * - the key is looked up in the realm named by the payload, and must be published and, when
 *   retired, still inside its overlap window;
 * - then the signature, `iss`, `aud`, `exp` (the token is dead from `exp` on) and `nbf`
 *   (valid from `nbf` on), and finally the claim shapes of the type.
 *
 * With a {@link VerifiedTokenCache}, a token already verified as the same type is answered
 * from the cache (audience and expiry are still checked) until it expires.
 *
 * @module
 */
import { errors, jwtVerify } from "jose";
import * as v from "valibot";
import { fromBase64Url, fromUtf8 } from "../encoding.ts";
import type { KeyRing } from "../keys/ring.ts";
import { SIGNING_ALGORITHM } from "../keys/generate.ts";
import type { VerifiedTokenCache } from "./cache.ts";
import { InvalidTokenError } from "./errors.ts";
import { CLAIM_SCHEMAS, type TokenClaimsByType, type TokenType } from "./types.ts";
import { isUuid } from "../../core/ids.ts";

/** What verification needs. */
export interface VerifyContext {
  readonly keys: KeyRing;
  /** Clock milliseconds. */
  readonly now: number;
  readonly issuer: string;
  readonly cache?: VerifiedTokenCache;
}

/** Longest token accepted, in characters. */
export const MAX_TOKEN_LENGTH = 8192;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const KID = /^[A-Za-z0-9_-]{1,64}$/;
const ALLOWED_HEADER = new Set(["alg", "typ", "kid"]);

/**
 * The claims of `token` as type `typ`, accepted for one of `audiences`.
 *
 * @example
 * ```ts
 * import {
 *   createSqlStorage,
 *   cryptoRandom as random,
 *   KeyRing,
 *   openDatabase,
 *   systemClock as clock,
 *   TokenService,
 * } from "@svc/svc";
 * import { type VerifyContext, verifyToken } from "./verify.ts";
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const keys = new KeyRing({ store: storage.signingKeys, clock, random, overlapMs: 86_400_000 });
 * const issuer = "https://id.example.com";
 * const tokens = new TokenService({ keys, clock, random, issuer, consumed: storage.consumedTokens });
 * const sub = crypto.randomUUID(), sid = crypto.randomUUID(); // a user and a session
 * const { token } = await tokens.mint("at+svc", { realm: realm.id, sub, sid, mfa: "Password", aud: issuer });
 *
 * const ctx: VerifyContext = { keys, now: clock.now(), issuer };
 * const claims = await verifyToken(ctx, "at+svc", token, [issuer]);
 * claims.sub; // the user id
 * await database.close();
 * ```
 */
export async function verifyToken<T extends TokenType>(
  context: VerifyContext,
  typ: T,
  token: unknown,
  audiences: readonly string[],
): Promise<TokenClaimsByType[T]> {
  if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) throw new InvalidTokenError("malformed");
  const parts = token.split(".");
  if (parts.length !== 3) throw new InvalidTokenError("malformed");
  const [headerPart, payloadPart, signature] = parts;
  const signingInput = `${headerPart}.${payloadPart}`;

  // A cache hit is a token identical to one verified in full before (same signing input, same
  // signature), whose segments passed the check below then: it is not repeated (issue 29).
  const hit = context.cache?.get(signingInput, signature, typ);
  if (hit !== undefined) {
    const cached = hit.claims as TokenClaimsByType[T];
    // The key may have been retired (or left its overlap window) since: ask the ring's cached
    // set; when that set is not cached, verify in full below, which reloads it.
    const accepted = context.keys.isAccepted(cached.realm, hit.kid);
    if (accepted === false) throw new InvalidTokenError("kid");
    if (accepted === true) {
      if (!audiences.includes(cached.aud)) throw new InvalidTokenError("audience");
      return cached;
    }
  }

  if (!parts.every((p) => SEGMENT.test(p))) throw new InvalidTokenError("malformed");
  const header = decodeJson(headerPart);
  for (const name of Object.keys(header)) {
    if (!ALLOWED_HEADER.has(name)) throw new InvalidTokenError("header");
  }
  if (header.alg !== SIGNING_ALGORITHM) throw new InvalidTokenError("alg");
  if (header.typ !== typ) throw new InvalidTokenError("typ");
  if (typeof header.kid !== "string" || !KID.test(header.kid)) throw new InvalidTokenError("kid");
  const payload = decodeJson(payloadPart);
  if (typeof payload.realm !== "string" || !isUuid(payload.realm)) throw new InvalidTokenError("realm");

  const key = await context.keys.verificationKey(payload.realm, header.kid);
  if (key === null) throw new InvalidTokenError("kid");

  try {
    await jwtVerify(token, key.publicKey, {
      algorithms: [SIGNING_ALGORITHM],
      typ,
      issuer: context.issuer,
      audience: [...audiences],
      currentDate: new Date(context.now),
      requiredClaims: ["iss", "aud", "iat", "exp", "jti"],
    });
  } catch (err) {
    throw new InvalidTokenError(reasonOf(err));
  }
  const parsed = v.safeParse(CLAIM_SCHEMAS[typ], payload);
  if (!parsed.success) throw new InvalidTokenError("claims");
  const claims = parsed.output as TokenClaimsByType[T];

  if (context.cache !== undefined) {
    let validUntil = claims.exp * 1000;
    if (key.retiredAt !== null) {
      validUntil = Math.min(validUntil, key.retiredAt.getTime() + context.keys.overlapMs);
    }
    context.cache.set(signingInput, signature, typ, { claims, kid: key.kid }, validUntil);
  }
  return claims;
}

function decodeJson(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(fromUtf8(fromBase64Url(segment)));
  } catch {
    throw new InvalidTokenError("malformed");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidTokenError("malformed");
  }
  return value as Record<string, unknown>;
}

function reasonOf(err: unknown): InvalidTokenError["reason"] {
  if (err instanceof errors.JWTExpired) return "expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case "nbf":
        return "not_yet_valid";
      case "iss":
        return "issuer";
      case "aud":
        return "audience";
      case "typ":
        return "typ";
      default:
        return "claims";
    }
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return "alg";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "signature";
  return "signature";
}
