/**
 * The identity-server (Keycloak) realm-export importer: a realm export file (`kc.sh export
 * --file`), or the documents of a directory export (`<realm>-realm.json` plus
 * `<realm>-users-<n>.json`), given already parsed. It reads realm roles, groups (nested groups
 * are flattened to realm level under `FlattenToRealm`, with an Info issue each), users with
 * their password credentials, realm roles and groups, and clients.
 *
 * Password credentials come in two layouts (keycloak `CredentialRepresentation`): the newer
 * `secretData` (`{value, salt}`) and `credentialData` (`{hashIterations, algorithm}`) JSON strings,
 * and the deprecated `hashedSaltedValue`, `salt`, `hashIterations`, `algorithm` fields.
 * `pbkdf2-sha256` maps to the PHC string `$pbkdf2-sha256$i=<n>,l=<len>$<salt>$<hash>`; `bcrypt`
 * carries over verbatim; anything else is a Warning and the user is password-less. Disabled
 * users are Suspended. Confidential clients exported with a plaintext secret get it rehashed
 * with the current hasher (no rotation); a masked or absent secret is kept.
 *
 * @module
 */
import { fromBase64 } from "../encoding.ts";
import { BCRYPT_TAG, isBcryptHash } from "../passwords/bcrypt.ts";
import { toPhcB64 } from "../passwords/b64.ts";
import { parsePbkdf2Sha256, PBKDF2_SHA256_TAG } from "../passwords/pbkdf2-sha256.ts";
import type { ImportedClient, ImportedCredential, ImportItem } from "./model.ts";
import { flag, isObject, issueItem, parseJson, strings, text } from "./source.ts";

/** Clients every Keycloak realm has; they are not imported. */
export const KEYCLOAK_BUILT_IN_CLIENTS: ReadonlySet<string> = new Set([
  "account",
  "account-console",
  "admin-cli",
  "broker",
  "realm-management",
  "security-admin-console",
]);

/** The import items of a Keycloak realm export (one document, or those of a directory export). */
export function* keycloakItems(documents: readonly unknown[]): Generator<ImportItem> {
  const realms = documents.filter(isObject);
  if (realms.length !== documents.length || realms.length === 0) {
    yield issueItem("Error", "Source", "document", "A Keycloak realm export is a JSON object.");
  }
  for (const doc of realms) {
    const roles = isObject(doc.roles) ? doc.roles : {};
    for (const role of Array.isArray(roles.realm) ? roles.realm : []) {
      if (!isObject(role) || text(role.name).trim() === "") {
        yield issueItem("Error", "Role", "?", "A realm role has no name.");
        continue;
      }
      yield {
        kind: "role",
        role: { key: text(role.name), displayName: text(role.description) || text(role.name) },
      };
    }
    if (isObject(roles.client) && Object.keys(roles.client).length > 0) {
      yield issueItem("Info", "Role", "client roles", "Client roles are not imported (realm roles only).");
    }
    if (Array.isArray(doc.groups)) yield* groupItems(doc.groups, "", 0);
    if (Array.isArray(doc.organizations) && doc.organizations.length > 0) {
      yield issueItem(
        "Info",
        "Source",
        "organizations",
        "Organizations are not imported: FlattenToRealm puts everything at realm level.",
      );
    }
  }
  for (const doc of realms) {
    for (const user of Array.isArray(doc.users) ? doc.users : []) yield* userItems(user);
  }
  for (const doc of realms) {
    for (const client of Array.isArray(doc.clients) ? doc.clients : []) yield* clientItems(client);
  }
}

/** Keycloak group paths (`/parent/child`) as import keys: the path itself, normalized by the engine. */
function* groupItems(groups: unknown[], parentPath: string, depth: number): Generator<ImportItem> {
  for (const group of groups) {
    if (!isObject(group) || text(group.name).trim() === "") {
      yield issueItem("Error", "Group", parentPath || "/", "A group has no name.");
      continue;
    }
    const path = text(group.path) || `${parentPath}/${text(group.name)}`;
    yield { kind: "group", group: { key: path, displayName: text(group.name) } };
    if (depth > 0) {
      yield issueItem(
        "Info",
        "Group",
        path,
        "Nested group flattened to realm level (FlattenToRealm); its parent is not kept.",
      );
    }
    if (Array.isArray(group.subGroups)) yield* groupItems(group.subGroups, path, depth + 1);
  }
}

function* userItems(user: unknown): Generator<ImportItem> {
  if (!isObject(user)) {
    yield issueItem("Error", "User", "?", "A user entry is not a JSON object.");
    return;
  }
  const email = text(user.email).trim();
  const name = text(user.username) || text(user.id) || "?";
  if (email === "") {
    yield issueItem("Error", "User", name, "The user has no email (the natural key); it was not imported.");
    return;
  }
  let credential: ImportedCredential | null = null;
  const credentials = Array.isArray(user.credentials) ? user.credentials.filter(isObject) : [];
  for (const entry of credentials) {
    if (text(entry.type) !== "password") {
      yield issueItem(
        "Info",
        "Credential",
        email,
        `A ${text(entry.type) || "?"} credential is not imported.`,
      );
      continue;
    }
    if (credential !== null) continue;
    const read = keycloakPassword(entry);
    if ("warning" in read) yield issueItem("Warning", "Credential", email, read.warning);
    else credential = read.credential;
  }
  if (isObject(user.clientRoles) && Object.keys(user.clientRoles).length > 0) {
    yield issueItem("Info", "RoleAssignment", email, "Client role assignments are not imported.");
  }
  const displayName = [text(user.firstName), text(user.lastName)].filter((s) => s !== "").join(" ");
  yield {
    kind: "user",
    user: {
      email,
      displayName: displayName === "" ? null : displayName,
      emailVerified: flag(user.emailVerified),
      suspended: user.enabled === false,
      credential,
      roleKeys: strings(user.realmRoles),
      groupKeys: strings(user.groups),
      attributes: attributesOf(user.attributes),
    },
  };
}

/** Keycloak's multi-valued attributes: one value becomes a scalar, several stay a list. */
function attributesOf(value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isObject(value)) return out;
  for (const [key, v] of Object.entries(value)) {
    const list = strings(v);
    out[key] = list.length === 1 ? list[0] : list;
  }
  return out;
}

/** A Keycloak password credential in svc form, or why it cannot be imported. */
export function keycloakPassword(
  entry: Record<string, unknown>,
): { credential: ImportedCredential } | { warning: string } {
  let value: string, salt: string, iterations: number, algorithm: string;
  if (typeof entry.secretData === "string" || typeof entry.credentialData === "string") {
    const secret = parseJson(text(entry.secretData, "{}"));
    const data = parseJson(text(entry.credentialData, "{}"));
    if (!secret.ok || !data.ok || !isObject(secret.value) || !isObject(data.value)) {
      return {
        warning: "The password credential's secretData or credentialData is not JSON; password-less.",
      };
    }
    value = text(secret.value.value);
    salt = text(secret.value.salt);
    iterations = Number(data.value.hashIterations);
    algorithm = text(data.value.algorithm);
  } else if (typeof entry.hashedSaltedValue === "string") {
    value = entry.hashedSaltedValue;
    salt = text(entry.salt);
    iterations = Number(entry.hashIterations);
    algorithm = text(entry.algorithm, "pbkdf2-sha256");
  } else if (typeof entry.value === "string") {
    return { warning: "A plaintext password in the export is not imported; the user is password-less." };
  } else {
    return { warning: "The password credential holds no hash; the user is password-less." };
  }
  if (algorithm === "bcrypt") {
    if (isBcryptHash(value)) return { credential: { algorithm: BCRYPT_TAG, hash: value } };
    return { warning: "The bcrypt hash is malformed; the user is password-less." };
  }
  if (algorithm !== "pbkdf2-sha256") {
    return {
      warning: `Password algorithm ${algorithm || "unknown"} is not supported; the user is password-less.`,
    };
  }
  let phc: string | null = null;
  try {
    const hash = fromBase64(value);
    const saltBytes = fromBase64(salt);
    if (Number.isInteger(iterations) && iterations > 0) {
      phc = `$pbkdf2-sha256$i=${iterations},l=${hash.length}$${toPhcB64(saltBytes)}$${toPhcB64(hash)}`;
    }
  } catch {
    phc = null;
  }
  if (phc === null || parsePbkdf2Sha256(phc) === null) {
    return { warning: "The pbkdf2-sha256 credential is malformed; the user is password-less." };
  }
  return { credential: { algorithm: PBKDF2_SHA256_TAG, hash: phc } };
}

function* clientItems(client: unknown): Generator<ImportItem> {
  if (!isObject(client) || text(client.clientId).trim() === "") {
    yield issueItem("Error", "Client", "?", "A client has no clientId.");
    return;
  }
  const clientId = text(client.clientId);
  if (KEYCLOAK_BUILT_IN_CLIENTS.has(clientId)) return;
  const confidential = client.publicClient !== true;
  const secret = text(client.secret);
  const attributes = isObject(client.attributes) ? client.attributes : {};
  const postLogout = text(attributes["post.logout.redirect.uris"]).split("##").filter((u) =>
    u !== "" && u !== "+"
  );
  let secretAction: ImportedClient["secret"] = { kind: "keep" };
  if (confidential && secret !== "" && !/^\*+$/.test(secret)) {
    secretAction = { kind: "rehash", plaintext: secret };
  }
  yield {
    kind: "client",
    client: {
      clientId,
      clientType: confidential ? "confidential" : "public",
      redirectUris: strings(client.redirectUris),
      postLogoutRedirectUris: postLogout,
      allowedScopes: [...strings(client.defaultClientScopes), ...strings(client.optionalClientScopes)],
      requireConsent: flag(client.consentRequired),
      suspended: client.enabled === false,
      secret: secretAction,
    },
  };
}
