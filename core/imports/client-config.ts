/**
 * The client-config importer: a JSON array of client objects, in either casing (`clientId` or
 * `ClientId`; `client_id` too). Each confidential client gets a fresh secret hashed with the
 * current hasher; the plaintext goes to the report's GeneratedClientSecrets only and the client
 * is flagged SecretResetRequired (each run regenerates, spec 9).
 *
 * Fields: `clientId` (required), `clientType` (`confidential`/`public`; without it,
 * `publicClient: true` or `requireClientSecret: false` make a public client), `redirectUris`,
 * `postLogoutRedirectUris`, `allowedScopes` (or `scopes`), `requireConsent`, `suspended` (or
 * `enabled: false`). The clients are the ones the OIDC provider plugin serves: a redirect URI
 * that can never match (not an absolute http(s) URL in normalized form) is kept with a Warning.
 *
 * @module
 */
import type { ImportedClient, ImportItem } from "./model.ts";
import { flag, isObject, issueItem, looseKeys, parseJson, strings, text } from "./source.ts";

/** The import items of a client-config document. */
export function clientConfigItems(source: string): ImportItem[] {
  const parsed = parseJson(source);
  if (!parsed.ok) {
    return [issueItem("Error", "Source", "document", `The document is not JSON: ${parsed.message}`)];
  }
  if (!Array.isArray(parsed.value)) {
    return [issueItem("Error", "Source", "document", "The document is not a JSON array of clients.")];
  }
  return parsed.value.flatMap((entry, index) => {
    const item = clientItem(entry, index);
    return item.kind === "client" ? [item, ...redirectWarnings(item.client)] : [item];
  });
}

/** Whether a redirect URI can ever match: the OIDC provider compares absolute http(s) URLs exactly, in normalized form. */
function exactRedirectUri(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "https:" || url.protocol === "http:") && url.hash === "" && url.href === text;
  } catch {
    return false;
  }
}

function redirectWarnings(client: ImportedClient): ImportItem[] {
  return [...client.redirectUris, ...client.postLogoutRedirectUris].filter((uri) => !exactRedirectUri(uri))
    .map((uri) =>
      issueItem(
        "Warning",
        "Client",
        client.clientId,
        `The redirect URI ${
          JSON.stringify(uri.slice(0, 200))
        } never matches: redirect URIs are compared exactly as absolute http(s) URLs without fragment, in normalized form.`,
      )
    );
}

function clientItem(entry: unknown, index: number): ImportItem {
  if (!isObject(entry)) return issueItem("Error", "Client", `#${index}`, "The entry is not a JSON object.");
  const f = looseKeys(entry);
  const clientId = text(f.get("clientid")).trim();
  if (clientId === "") return issueItem("Error", "Client", `#${index}`, "The client has no clientId.");
  const declared = text(f.get("clienttype")).trim().toLowerCase();
  let clientType: string;
  if (declared === "confidential" || declared === "public") clientType = declared;
  else if (declared !== "") {
    return issueItem(
      "Error",
      "Client",
      clientId,
      `Unknown clientType "${declared}" (confidential or public).`,
    );
  } else {
    const isPublic = flag(f.get("publicclient"), false) || !flag(f.get("requireclientsecret"), true);
    clientType = isPublic ? "public" : "confidential";
  }
  const enabled = f.has("enabled") ? flag(f.get("enabled"), true) : true;
  return {
    kind: "client",
    client: {
      clientId,
      clientType,
      redirectUris: strings(f.get("redirecturis")),
      postLogoutRedirectUris: strings(f.get("postlogoutredirecturis")),
      allowedScopes: strings(f.get("allowedscopes") ?? f.get("scopes")),
      requireConsent: flag(f.get("requireconsent"), false),
      suspended: flag(f.get("suspended"), false) || !enabled,
      secret: { kind: "generate" },
    },
  };
}
