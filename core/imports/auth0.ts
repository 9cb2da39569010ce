/**
 * The hosted-provider (Auth0) importer: newline-delimited JSON, one user per line, read one line
 * at a time. Two documented shapes are read:
 *
 * - the bulk user import schema: `email`, `email_verified`, `name`, `blocked`, `app_metadata`,
 *   `custom_password_hash: { algorithm: "bcrypt", hash: { value } }`;
 * - the password-hash export Auth0 support produces: `_id: { $oid }`, `email`, `email_verified`,
 *   `passwordHash` (`$2a$`/`$2b$` bcrypt).
 *
 * Bcrypt hashes are carried over under `bcrypt`; any other hash is a Warning and the user is
 * password-less; a line that is not a JSON object, or nests deeper or has a wider object or array
 * than the JSON limits allow (checked on the text before it is parsed), is an Error and the
 * import goes on. Roles and
 * permissions are not consumed (spec 9). `app_metadata` keys go into the ABAC attribute bag.
 *
 * @module
 */
import { DEFAULT_JSON_LIMITS, type JsonLimits, jsonTextBreach } from "../json-limits.ts";
import { BCRYPT_TAG, isBcryptHash } from "../passwords/bcrypt.ts";
import type { ImportedCredential, ImportItem } from "./model.ts";
import { splitLines, type StreamLine } from "./lines.ts";
import { isObject, issueItem as issue } from "./source.ts";

/**
 * The import items of an Auth0 NDJSON export given as text chunks; each line is held to
 * `limits` (default {@link DEFAULT_JSON_LIMITS}).
 */
export async function* auth0Items(
  chunks: AsyncIterable<string> | Iterable<string>,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): AsyncGenerator<ImportItem> {
  for await (const line of splitLines(chunks)) yield* auth0LineItems(line, limits);
}

/** The items of one line of an Auth0 export, held to `limits` before it is parsed. */
export function auth0LineItems(line: StreamLine, limits: JsonLimits = DEFAULT_JSON_LIMITS): ImportItem[] {
  const key = `line ${line.number}`;
  if (line.overlong) {
    return [issue("Error", "User", key, "The line is too long; it was not imported.")];
  }
  if (line.text.trim() === "") return [];
  const breach = jsonTextBreach(line.text, limits);
  if (breach !== null) return [issue("Error", "User", key, `${breach.message} The line was not imported.`)];
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.text);
  } catch {
    return [issue("Error", "User", key, "The line is not valid JSON; it was not imported.")];
  }
  if (!isObject(parsed)) {
    return [issue("Error", "User", key, "The line is not a JSON object; it was not imported.")];
  }
  const email = typeof parsed.email === "string" ? parsed.email : "";
  if (email.trim() === "") {
    return [issue("Error", "User", key, "The user has no email; it was not imported.")];
  }
  const items: ImportItem[] = [];
  const credential = auth0Credential(parsed);
  if (credential.warning) items.push(issue("Warning", "Credential", email, credential.warning));
  items.push({
    kind: "user",
    user: {
      email,
      displayName: typeof parsed.name === "string" && parsed.name !== email ? parsed.name : null,
      emailVerified: parsed.email_verified === true || parsed.email_verified === "true",
      suspended: parsed.blocked === true,
      credential: credential.credential,
      roleKeys: [],
      groupKeys: [],
      attributes: isObject(parsed.app_metadata) ? parsed.app_metadata : {},
    },
  });
  return items;
}

function auth0Credential(
  user: Record<string, unknown>,
): { credential: ImportedCredential | null; warning?: string } {
  const custom = user.custom_password_hash;
  if (isObject(custom)) {
    const algorithm = typeof custom.algorithm === "string" ? custom.algorithm : "";
    const value = isObject(custom.hash) && typeof custom.hash.value === "string" ? custom.hash.value : "";
    if (algorithm === "bcrypt" && isBcryptHash(value)) {
      return { credential: { algorithm: BCRYPT_TAG, hash: value } };
    }
    return {
      credential: null,
      warning: `The password hash (algorithm ${
        algorithm || "unknown"
      }) is not supported; the user is password-less until a reset.`,
    };
  }
  const top = [user.passwordHash, user.password_hash].find((h) => typeof h === "string") as
    | string
    | undefined;
  if (top === undefined || top === "") return { credential: null };
  if ((top.startsWith("$2a$") || top.startsWith("$2b$")) && isBcryptHash(top)) {
    return { credential: { algorithm: BCRYPT_TAG, hash: top } };
  }
  return {
    credential: null,
    warning: "The password hash is not a bcrypt hash; the user is password-less until a reset.",
  };
}
