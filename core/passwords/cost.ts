/**
 * Cost ceilings of stored password hashes: the most work one verification may ask for,
 * per hash family. An imported hash is data from outside (a `$2b$31$` bcrypt hash costs
 * about 33 hours of one core per attempt), so a hash beyond its ceiling is refused at
 * import and never verified at login. The ceilings are the `password.max*` settings
 * (`SVC_PASSWORD_MAX_*`); the defaults below are the single source of their values.
 *
 * The cost is read from the hash's header alone (cheap, no hashing), also from a hash
 * whose cost is beyond what its verifier's parser accepts.
 *
 * @module
 */
import { fromPaddedBase64 } from "./b64.ts";
import type { Argon2idParams } from "./argon2-params.ts";
import { ARGON2ID_TAG } from "./argon2id.ts";
import { FRAMEWORK_IDENTITY_V3_TAG } from "./aspnet-identity.ts";
import { BCRYPT_TAG } from "./bcrypt.ts";
import { PBKDF2_SHA256_TAG } from "./pbkdf2-sha256.ts";

/** The most work a stored hash may ask for, per family. */
export interface PasswordCostCeilings {
  /** Largest bcrypt cost (log2 of the rounds; `SVC_PASSWORD_MAX_BCRYPT_COST`). */
  readonly bcryptCost: number;
  /** Largest PBKDF2 iteration count (pbkdf2-sha256 and ASP.NET Identity; `SVC_PASSWORD_MAX_PBKDF2_ITERATIONS`). */
  readonly pbkdf2Iterations: number;
  /** Largest argon2id memory in KiB (`SVC_PASSWORD_MAX_ARGON2_MEMORY_KIB`). */
  readonly argon2MemoryKiB: number;
  /** Largest argon2id pass count (`SVC_PASSWORD_MAX_ARGON2_ITERATIONS`). */
  readonly argon2Iterations: number;
}

/** Defaults of the ceilings (the configuration's defaults). */
export const DEFAULT_PASSWORD_COST_CEILINGS: PasswordCostCeilings = Object.freeze({
  bcryptCost: 14,
  pbkdf2Iterations: 2_000_000,
  argon2MemoryKiB: 1_048_576,
  argon2Iterations: 20,
});

/** Bounds of the ceiling settings themselves (the configuration schema checks against them). */
export const PASSWORD_COST_CEILING_BOUNDS: {
  readonly bcryptCost: readonly [number, number];
  readonly pbkdf2Iterations: readonly [number, number];
  readonly argon2MemoryKiB: readonly [number, number];
  readonly argon2Iterations: readonly [number, number];
} = Object.freeze({
  bcryptCost: [4, 18] as const,
  pbkdf2Iterations: [1000, 10_000_000] as const,
  argon2MemoryKiB: [8192, 4_194_304] as const,
  argon2Iterations: [1, 100] as const,
});

/** The `password.max*` settings of the configuration. */
export interface PasswordCostCeilingConfig {
  /** `SVC_PASSWORD_MAX_BCRYPT_COST`. */
  readonly maxBcryptCost: number;
  /** `SVC_PASSWORD_MAX_PBKDF2_ITERATIONS`. */
  readonly maxPbkdf2Iterations: number;
  /** `SVC_PASSWORD_MAX_ARGON2_MEMORY_KIB`. */
  readonly maxArgon2MemoryKiB: number;
  /** `SVC_PASSWORD_MAX_ARGON2_ITERATIONS`. */
  readonly maxArgon2Iterations: number;
}

/** The ceilings of the configuration. */
export function passwordCostCeilingsFromConfig(config: PasswordCostCeilingConfig): PasswordCostCeilings {
  return {
    bcryptCost: config.maxBcryptCost,
    pbkdf2Iterations: config.maxPbkdf2Iterations,
    argon2MemoryKiB: config.maxArgon2MemoryKiB,
    argon2Iterations: config.maxArgon2Iterations,
  };
}

/**
 * Ceilings that admit hashes minted with `params`: svc's own argon2id hashes always verify,
 * whatever the argon2id ceilings say.
 */
export function ceilingsAdmitting(
  ceilings: PasswordCostCeilings,
  params: Argon2idParams,
): PasswordCostCeilings {
  return Object.freeze({
    ...ceilings,
    argon2MemoryKiB: Math.max(ceilings.argon2MemoryKiB, params.memoryKiB),
    argon2Iterations: Math.max(ceilings.argon2Iterations, params.iterations),
  });
}

/** The work a stored hash asks for, read from its header. */
export type PasswordHashCost =
  | { readonly family: "bcrypt"; readonly cost: number }
  | { readonly family: "pbkdf2"; readonly iterations: number }
  | { readonly family: "argon2id"; readonly memoryKiB: number; readonly iterations: number };

const BCRYPT_COST = /^\$2[abxy]\$([0-9]{2})\$/;
const PBKDF2_PHC_ITERATIONS = /^\$pbkdf2-sha256\$i=([0-9]+)[,$]/;
const PBKDF2_PASSLIB_ITERATIONS = /^\$pbkdf2-sha256\$([0-9]+)\$/;
const ARGON2ID_COST = /^\$argon2id\$v=[0-9]+\$m=([0-9]+),t=([0-9]+),p=[0-9]+\$/;

/**
 * The cost a stored hash under `tag` asks for; null when the tag is not a known family or
 * the header cannot be read (the verifier then refuses the hash without hashing).
 */
export function passwordHashCost(tag: string, hash: string): PasswordHashCost | null {
  if (typeof hash !== "string") return null;
  switch (tag) {
    case BCRYPT_TAG: {
      const m = BCRYPT_COST.exec(hash);
      return m ? { family: "bcrypt", cost: Number(m[1]) } : null;
    }
    case PBKDF2_SHA256_TAG: {
      const m = PBKDF2_PHC_ITERATIONS.exec(hash) ?? PBKDF2_PASSLIB_ITERATIONS.exec(hash);
      return m ? { family: "pbkdf2", iterations: Number(m[1]) } : null;
    }
    case FRAMEWORK_IDENTITY_V3_TAG: {
      const bytes = fromPaddedBase64(hash);
      if (!bytes || bytes.length === 0) return null;
      if (bytes[0] === 0x00) return { family: "pbkdf2", iterations: 1000 };
      if (bytes[0] !== 0x01 || bytes.length < 13) return null;
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      return { family: "pbkdf2", iterations: view.getUint32(5) };
    }
    case ARGON2ID_TAG: {
      const m = ARGON2ID_COST.exec(hash);
      return m ? { family: "argon2id", memoryKiB: Number(m[1]), iterations: Number(m[2]) } : null;
    }
    default:
      return null;
  }
}

/**
 * Why a stored hash asks for more work than the ceilings allow (a sentence for people,
 * naming the cost and the setting), or null when it is within them or its cost cannot be
 * read. Reads the header only: no hashing.
 */
export function costCeilingExceeded(
  tag: string,
  hash: string,
  ceilings: PasswordCostCeilings,
): string | null {
  const cost = passwordHashCost(tag, hash);
  if (cost === null) return null;
  switch (cost.family) {
    case "bcrypt":
      return cost.cost > ceilings.bcryptCost
        ? `bcrypt cost ${cost.cost} is above the ceiling ${ceilings.bcryptCost} (SVC_PASSWORD_MAX_BCRYPT_COST)`
        : null;
    case "pbkdf2":
      return cost.iterations > ceilings.pbkdf2Iterations
        ? `PBKDF2 iteration count ${cost.iterations} is above the ceiling ${ceilings.pbkdf2Iterations} ` +
          "(SVC_PASSWORD_MAX_PBKDF2_ITERATIONS)"
        : null;
    case "argon2id":
      if (cost.memoryKiB > ceilings.argon2MemoryKiB) {
        return `argon2id memory ${cost.memoryKiB} KiB is above the ceiling ${ceilings.argon2MemoryKiB} KiB ` +
          "(SVC_PASSWORD_MAX_ARGON2_MEMORY_KIB)";
      }
      return cost.iterations > ceilings.argon2Iterations
        ? `argon2id iteration count ${cost.iterations} is above the ceiling ${ceilings.argon2Iterations} ` +
          "(SVC_PASSWORD_MAX_ARGON2_ITERATIONS)"
        : null;
  }
}
