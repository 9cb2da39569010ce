/**
 * The one typed API through which svc mints and verifies every JWT type of spec 2.2. The
 * `typ` is always enforced: `verify("at+svc", …)` rejects an `mfa+svc` token and the
 * reverse. Single-use types (`pwreset+svc`, `everify+svc`, `invite+svc`) are spent with
 * `consume`, which deny-lists their jti in the consumed-token store (a second presentation
 * fails, concurrent or not).
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import type { KeyRing } from "../keys/ring.ts";
import type { RandomSource } from "../random.ts";
import type { ConsumedTokenStore } from "../storage/consumed-tokens.ts";
import type { VerifiedTokenCache } from "./cache.ts";
import { InvalidTokenError } from "./errors.ts";
import { type MintedToken, mintToken } from "./mint.ts";
import {
  DEFAULT_TTL_SECONDS,
  isSingleUse,
  type SingleUseTokenType,
  type TokenClaimsByType,
  type TokenMintInput,
  type TokenType,
} from "./types.ts";
import { verifyToken } from "./verify.ts";

/** What a {@link TokenService} is built from. */
export interface TokenServiceOptions {
  /** Signs minted tokens and verifies presented ones. */
  keys: KeyRing;
  /** Gives minted tokens their `iat` and `exp`, and checks expiry on verification. */
  clock: Clock;
  /** Draws each token's `jti`. */
  random: RandomSource;
  /** The `iss` of every token (svc's base URL). */
  issuer: string;
  /** Where single-use jtis are consumed. */
  consumed: ConsumedTokenStore;
  /** Lifetimes per type in seconds (defaults: {@link DEFAULT_TTL_SECONDS}). */
  ttlSeconds?: Partial<Record<TokenType, number>>;
  /** Caches verified access tokens until they expire. */
  cache?: VerifiedTokenCache;
}

/** Options of {@link TokenService.mint}. */
export interface MintOptions {
  /** Overrides the type's lifetime. */
  ttlSeconds?: number;
  /** The token never outlives this instant (clock milliseconds): an impersonation window caps it. */
  notAfter?: number;
}

/** Options of {@link TokenService.verify}. */
export interface VerifyOptions {
  /** Accepted audiences (default: the issuer). */
  audience?: string | readonly string[];
}

/**
 * Mints and verifies svc JWTs.
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
 *
 * const database = await openDatabase({ kind: "embedded" }); // PGlite in memory
 * await database.ensureSchema();
 * const storage = createSqlStorage(database, { clock, random });
 * const realm = await storage.realms.create({ name: "default", displayName: "Default", isDefault: true });
 * const user = await storage.users.create({ realmId: realm.id, email: "ada@example.com" });
 * const stamp = (await storage.users.credentialStamp(user.id))!;
 *
 * const keys = new KeyRing({ store: storage.signingKeys, clock, random, overlapMs: 86_400_000 });
 * const issuer = "https://id.example.com";
 * const tokens = new TokenService({ keys, clock, random, issuer, consumed: storage.consumedTokens });
 * const { token } = await tokens.mint("pwreset+svc", { realm: realm.id, sub: user.id, stamp });
 * const claims = await tokens.consume("pwreset+svc", token); // a second call throws invalid_token
 * claims.sub === user.id; // true
 * await database.close();
 * ```
 */
export class TokenService {
  readonly #options: TokenServiceOptions;

  /** The service over `options`. */
  constructor(options: TokenServiceOptions) {
    this.#options = options;
  }

  /** The issuer. */
  get issuer(): string {
    return this.#options.issuer;
  }

  /** The key ring. */
  get keys(): KeyRing {
    return this.#options.keys;
  }

  /** The lifetime of a type in seconds. */
  ttlSeconds(typ: TokenType): number {
    return this.#options.ttlSeconds?.[typ] ?? DEFAULT_TTL_SECONDS[typ];
  }

  /** Mints a token of type `typ`. */
  mint<T extends TokenType>(
    typ: T,
    input: TokenMintInput<T>,
    options: MintOptions = {},
  ): Promise<MintedToken<T>> {
    const { keys, random, clock, issuer } = this.#options;
    return mintToken(
      { keys, random, now: clock.now(), issuer },
      typ,
      input,
      options.ttlSeconds ?? this.ttlSeconds(typ),
      options.notAfter,
    );
  }

  /**
   * The claims of a valid token of type `typ`; `InvalidTokenError` otherwise. A single-use
   * token whose jti was consumed is invalid.
   */
  async verify<T extends TokenType>(
    typ: T,
    token: unknown,
    options: VerifyOptions = {},
  ): Promise<TokenClaimsByType[T]> {
    const { keys, clock, issuer, cache } = this.#options;
    const audience = options.audience ?? issuer;
    const claims = await verifyToken(
      { keys, now: clock.now(), issuer, cache: typ === "at+svc" ? cache : undefined },
      typ,
      token,
      typeof audience === "string" ? [audience] : audience,
    );
    if (isSingleUse(typ) && await this.#options.consumed.isConsumed(claims.jti)) {
      throw new InvalidTokenError("consumed");
    }
    return claims;
  }

  /** Verifies a single-use token and consumes its jti: only the first presentation succeeds. */
  async consume<T extends SingleUseTokenType>(typ: T, token: unknown): Promise<TokenClaimsByType[T]> {
    const claims = await this.verify(typ, token);
    // Kept at least until the token's own expiry, so a pruned jti belongs to a dead token.
    if (!await this.#options.consumed.consume(claims.jti, new Date(claims.exp * 1000))) {
      throw new InvalidTokenError("consumed");
    }
    return claims;
  }
}
