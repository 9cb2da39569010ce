/**
 * Mints a svc JWT: RS256 with the realm's primary key, `typ` and `kid` in the header,
 * `iss`, `iat`, `exp` and a random `jti` set by svc.
 *
 * @module
 */
import type { KeyRing } from "../keys/ring.ts";
import { SIGNING_ALGORITHM } from "../keys/generate.ts";
import { type RandomSource, randomToken } from "../random.ts";
import { inSpan } from "../tracing.ts";
import type { TokenClaimsByType, TokenMintInput, TokenType } from "./types.ts";

/** A minted token and its claims. */
export interface MintedToken<T extends TokenType> {
  /** The signed compact JWT. */
  readonly token: string;
  /** The claims it carries, including the `iss`, `iat`, `exp` and `jti` svc set. */
  readonly claims: TokenClaimsByType[T];
}

/** What minting needs. */
export interface MintContext {
  readonly keys: KeyRing;
  readonly random: RandomSource;
  /** Clock milliseconds. */
  readonly now: number;
  readonly issuer: string;
}

/**
 * Signs a token of type `typ` living `ttlSeconds` (cut short at `notAfter`, clock
 * milliseconds, when given: an impersonation window caps its token).
 */
export async function mintToken<T extends TokenType>(
  context: MintContext,
  typ: T,
  input: TokenMintInput<T>,
  ttlSeconds: number,
  notAfter?: number,
): Promise<MintedToken<T>> {
  const iat = Math.floor(context.now / 1000);
  let exp = iat + ttlSeconds;
  if (notAfter !== undefined) exp = Math.min(exp, Math.floor(notAfter / 1000));
  const claims = {
    iss: context.issuer,
    aud: (input as { aud?: string }).aud ?? context.issuer,
    ...stripUndefined(input as Record<string, unknown>),
    iat,
    exp,
    jti: randomToken(context.random, 16),
  } as unknown as TokenClaimsByType[T];
  const key = await context.keys.signingKey((input as { realm: string }).realm);
  const token = await inSpan(
    "svc.token.sign",
    { attributes: { "svc.token.type": typ, "svc.token.algorithm": SIGNING_ALGORITHM } },
    () => context.keys.signJwt(key, typ, claims as unknown as Record<string, unknown>),
  );
  return { token, claims };
}

function stripUndefined(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(input)) if (value !== undefined) out[k] = value;
  return out;
}
