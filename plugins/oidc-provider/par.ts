/**
 * Pushed authorization requests (RFC 9126).
 *
 * - `POST /oidc/par`: an authenticated client (any method of the token endpoint; public clients
 *   by `client_id`) posts the parameters of an authorization request. They are checked as the
 *   authorization endpoint checks them and stored; the answer (201) is
 *   `{request_uri: "urn:ietf:params:oauth:request_uri:<random>", expires_in: 60}`.
 * - The authorization endpoint then takes `client_id` and that `request_uri` and uses the pushed
 *   parameters only. The `request_uri` is stored as its SHA-256 only; it must be first used within
 *   `expires_in`; once used it stays readable for the sign-in and consent steps of that request
 *   (at most {@link PUSHED_REQUEST_STEPS_SECONDS}) and is consumed when the code is issued: a
 *   single `DELETE … RETURNING`, so of any number of concurrent uses exactly one gets a code.
 * - A client registered with `requirePushedAuthorizationRequests` is refused any other
 *   authorization request (`invalid_request`).
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { type ClientRecord, randomToken, sha256Hex } from "../../mod.ts";
import type { Provider } from "./shared.ts";

/** The prefix of the `request_uri` values the provider hands out (RFC 9126 2.2). */
export const PAR_URN_PREFIX = "urn:ietf:params:oauth:request_uri:";
/** How long a pushed request waits for its first use (`expires_in`). */
export const PUSHED_REQUEST_TTL_SECONDS = 60;
/** How long a used pushed request stays readable while the browser signs in and consents. */
export const PUSHED_REQUEST_STEPS_SECONDS = 900;

/** The plugin's table of pushed requests. */
export const PAR_TABLES = [
  `CREATE TABLE IF NOT EXISTS oidc_provider_pushed_requests (
    uri_hash text PRIMARY KEY,
    realm_id uuid NOT NULL,
    client_id text NOT NULL,
    params text NOT NULL,
    expires_at timestamptz NOT NULL,
    first_used_at timestamptz
  )`,
  "CREATE INDEX IF NOT EXISTS oidc_provider_pushed_requests_expiry ON oidc_provider_pushed_requests (expires_at)",
];

/** A pushed request, as the authorization endpoint reads it. */
export interface PushedRequest {
  readonly clientId: string;
  /** The pushed parameters. */
  readonly params: URLSearchParams;
}

/** The form fields a pushed request may not carry (RFC 9126 2.1: no `request_uri`). */
const NOT_PUSHABLE = ["request_uri"];
/** Client authentication fields, which are not part of the stored request. */
const AUTH_FIELDS = ["client_secret", "client_assertion", "client_assertion_type"];

/** The body of `POST /oidc/par` (beside the client authentication fields). */
export const PushedRequestFormSchema = v.looseObject({
  client_id: v.optional(v.pipe(v.string(), v.maxLength(2048))),
  request_uri: v.optional(v.string()),
});

/** The parameters to store for a pushed request of `client`, or an OAuth error. */
export function pushedParams(
  client: ClientRecord,
  form: Record<string, string>,
  resources: readonly string[] = [],
): { params: URLSearchParams } | { error: string; description: string } {
  for (const name of NOT_PUSHABLE) {
    if (form[name] !== undefined) {
      return { error: "invalid_request", description: `${name} cannot be pushed` };
    }
  }
  if (form.client_id !== undefined && form.client_id !== client.clientId) {
    return { error: "invalid_request", description: "client_id does not match the authenticated client" };
  }
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) {
    // svc's own markers are never taken from a request.
    if (AUTH_FIELDS.includes(name) || name.startsWith("svc_")) continue;
    params.set(name, value);
  }
  params.set("client_id", client.clientId);
  // RFC 8707: `resource` may be repeated.
  for (const resource of resources) params.append("resource", resource);
  return { params };
}

/** Stores a pushed request; answers its `request_uri`. */
export async function storePushedRequest(
  p: Provider,
  clientId: string,
  params: URLSearchParams,
): Promise<string> {
  const now = p.ctx.clock.now();
  const requestUri = `${PAR_URN_PREFIX}${randomToken(p.ctx.random, 32)}`;
  // Old rows go as new ones come: the table holds at most the last few minutes' requests.
  await p.ctx.sql.query(
    "DELETE FROM oidc_provider_pushed_requests WHERE expires_at < $1 AND (first_used_at IS NULL OR first_used_at < $1)",
    [new Date(now - PUSHED_REQUEST_STEPS_SECONDS * 1000)],
  );
  await p.ctx.sql.query(
    `INSERT INTO oidc_provider_pushed_requests (uri_hash, realm_id, client_id, params, expires_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [
      sha256Hex(requestUri),
      p.realmId,
      clientId,
      params.toString(),
      new Date(now + PUSHED_REQUEST_TTL_SECONDS * 1000),
    ],
  );
  return requestUri;
}

/** The condition of a live pushed request (`$3`: now; `$4`: now minus the steps' window). */
const LIVE = "(expires_at > $3 OR first_used_at > $4)";

/**
 * The pushed request of this `request_uri`, marking its first use; null when unknown, expired,
 * consumed or of another realm.
 */
export async function readPushedRequest(p: Provider, requestUri: string): Promise<PushedRequest | null> {
  if (!requestUri.startsWith(PAR_URN_PREFIX) || requestUri.length > 200) return null;
  const now = p.ctx.clock.now();
  const [row] = await p.ctx.sql.query<{ client_id: string; params: string }>(
    `UPDATE oidc_provider_pushed_requests SET first_used_at = COALESCE(first_used_at, $3)
     WHERE uri_hash = $1 AND realm_id = $2 AND ${LIVE} RETURNING client_id, params`,
    [sha256Hex(requestUri), p.realmId, new Date(now), new Date(now - PUSHED_REQUEST_STEPS_SECONDS * 1000)],
  );
  return row === undefined ? null : { clientId: row.client_id, params: new URLSearchParams(row.params) };
}

/** Consumes the pushed request (when its code is issued): true for exactly one caller. */
export async function consumePushedRequest(p: Provider, requestUri: string): Promise<boolean> {
  const now = p.ctx.clock.now();
  const rows = await p.ctx.sql.query(
    `DELETE FROM oidc_provider_pushed_requests WHERE uri_hash = $1 AND realm_id = $2 AND ${LIVE} RETURNING 1`,
    [sha256Hex(requestUri), p.realmId, new Date(now), new Date(now - PUSHED_REQUEST_STEPS_SECONDS * 1000)],
  );
  return rows.length === 1;
}

/**
 * The authorization request a query stands for: with a `request_uri` of the provider, the pushed
 * parameters (with svc's own `svc_` markers of the query); otherwise the query itself.
 * `invalid` when the query names a pushed request that cannot be used by its `client_id`.
 */
export async function expandPushed(
  p: Provider,
  query: URLSearchParams,
): Promise<
  | { kind: "plain" }
  | { kind: "pushed"; requestUri: string; params: URLSearchParams }
  | { kind: "invalid" }
> {
  const uris = query.getAll("request_uri");
  if (uris.length === 0 || !uris[0].startsWith(PAR_URN_PREFIX)) return { kind: "plain" };
  const clientIds = query.getAll("client_id");
  if (uris.length !== 1 || clientIds.length !== 1) return { kind: "invalid" };
  const pushed = await readPushedRequest(p, uris[0]);
  if (pushed === null || pushed.clientId !== clientIds[0]) return { kind: "invalid" };
  const params = new URLSearchParams(pushed.params);
  for (const [name, value] of query) if (name.startsWith("svc_")) params.append(name, value);
  return { kind: "pushed", requestUri: uris[0], params };
}

/** The answer of `POST /oidc/par`: 201 with `request_uri` and `expires_in`. */
export function pushedAnswer(c: Context, requestUri: string): Response {
  c.header("Cache-Control", "no-store");
  return c.json({ request_uri: requestUri, expires_in: PUSHED_REQUEST_TTL_SECONDS }, 201);
}
