/**
 * Recovery codes (spec 2.3, 5.1, section 3; issue 5 item 5): generated as a set, shown once,
 * stored only as SHA-256 hashes, single use, regenerable (a new set replaces the old one in one
 * transaction, so every old code stops working).
 *
 * A code is 16 symbols of Crockford's base32 alphabet (lowercase, no i, l, o or u), 80 random
 * bits, shown in groups of four: `7k3m-q9xa-2bd4-hv8e`. Presented codes are normalized before
 * hashing: case, spaces and hyphens ignored, and the look-alikes `i`/`l` read as `1`, `o` as `0`.
 *
 * @module
 */
import type { RandomSource } from "../random.ts";
import { randomUuid } from "../random.ts";
import { hashRecoveryCode, type RecoveryCodeStore } from "../storage/recovery-codes.ts";

/** Codes per set. */
export const RECOVERY_CODE_COUNT = 10;
/** Symbols per code (5 bits each: 80 bits). */
export const RECOVERY_CODE_LENGTH = 16;

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** A new random code, formatted `xxxx-xxxx-xxxx-xxxx`. */
export function generateRecoveryCode(random: RandomSource): string {
  const bytes = random.bytes((RECOVERY_CODE_LENGTH * 5) / 8);
  let bits = 0;
  let buffer = 0;
  let out = "";
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  bytes.fill(0);
  return out.match(/.{4}/g)!.join("-");
}

/**
 * The canonical form of a presented code (what is hashed): 16 lowercase symbols without
 * separators, or null when it cannot be a recovery code.
 */
export function normalizeRecoveryCode(code: string): string | null {
  const compact = code.replace(/[\s-]/g, "").toLowerCase().replace(/[il]/g, "1").replace(/o/g, "0");
  if (compact.length !== RECOVERY_CODE_LENGTH) return null;
  for (const c of compact) if (!ALPHABET.includes(c)) return null;
  return compact;
}

/** What {@link RecoveryCodeService} needs. */
export interface RecoveryCodeServiceDeps {
  /** Where the hashed codes of each user are kept and spent. */
  readonly store: RecoveryCodeStore;
  /** Draws the codes. */
  readonly random: RandomSource;
  /** Codes per set; default {@link RECOVERY_CODE_COUNT}. */
  readonly count?: number;
}

/** Recovery codes over the recovery-code store. */
export class RecoveryCodeService {
  readonly #deps: RecoveryCodeServiceDeps;
  readonly #count: number;

  /** The service over `deps`; throws a RangeError when `count` is not an integer from 1 to 100. */
  constructor(deps: RecoveryCodeServiceDeps) {
    const count = deps.count ?? RECOVERY_CODE_COUNT;
    if (!Number.isInteger(count) || count < 1 || count > 100) {
      throw new RangeError("recovery code count: 1 to 100");
    }
    this.#deps = deps;
    this.#count = count;
  }

  /**
   * Generates a new set, replacing (and so invalidating) the user's previous codes, and returns
   * the codes formatted for display. This is the only time they exist in plaintext: show them
   * once and keep them nowhere.
   */
  async generate(userId: string): Promise<string[]> {
    const codes = new Set<string>();
    while (codes.size < this.#count) codes.add(generateRecoveryCode(this.#deps.random));
    const shown = [...codes];
    await this.#deps.store.replace(
      userId,
      shown.map((code) => ({
        id: randomUuid(this.#deps.random),
        codeHash: hashRecoveryCode(normalizeRecoveryCode(code)!),
      })),
    );
    return shown;
  }

  /**
   * Consumes a presented code: true when it was one of the user's unused codes (now deleted),
   * false otherwise, including for a second use, concurrent or not. `store` is the service's own
   * by default; pass a store bound to a transaction to spend the code only if that commits.
   */
  async consume(userId: string, code: string, store: RecoveryCodeStore = this.#deps.store): Promise<boolean> {
    const canonical = normalizeRecoveryCode(code);
    if (canonical === null) return false;
    return await store.consume(userId, canonical);
  }

  /** How many unused codes the user has left. */
  remaining(userId: string): Promise<number> {
    return this.#deps.store.countRemaining(userId);
  }
}
