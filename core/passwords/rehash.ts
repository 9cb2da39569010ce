/**
 * The rehash decision of spec 5.1: after a successful verification, a hash is replaced
 * with a fresh one under the current default when its tag is an older one or its
 * argon2id parameters are weaker than the configured ones.
 *
 * @module
 */
import { type Argon2idParams, isWeakerArgon2id } from "./argon2-params.ts";
import { parseArgon2id } from "./argon2id.ts";
import { CURRENT_PASSWORD_ALGORITHM } from "./registry.ts";

/**
 * Whether a stored hash should be replaced by a new argon2id hash with `params`: true when
 * the tag is not the current default, when the argon2id hash does not parse, or when its
 * memory or iterations are below `params`.
 */
export function needsRehash(tag: string, hash: string, params: Argon2idParams): boolean {
  if (tag !== CURRENT_PASSWORD_ALGORITHM) return true;
  const parsed = parseArgon2id(hash);
  return parsed === null || isWeakerArgon2id(parsed.params, params);
}
