/**
 * Passwords as bytes: every verifier works on the UTF-8 bytes of the password, as
 * the original implementations do (passlib, ASP.NET Core Identity and bcrypt all
 * hash UTF-8). No Unicode normalization is applied, so imported hashes keep
 * verifying exactly as they did where they were made. Known-answer tests pass raw
 * bytes for the vectors that are not valid UTF-8.
 *
 * @module
 */
import { utf8 } from "../encoding.ts";

/** A password as text (hashed as UTF-8) or as raw bytes. */
export type PasswordInput = string | Uint8Array;

/** The bytes a password is hashed as. */
export function passwordBytes(password: PasswordInput): Uint8Array {
  return typeof password === "string" ? utf8(password) : password;
}
