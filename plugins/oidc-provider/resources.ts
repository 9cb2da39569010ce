/**
 * Resources (APIs) for resource indicators (RFC 8707) and the RFC 9068 access tokens issued for
 * them, in the plugin's own tables.
 *
 * - A resource is registered by an administrator (`/svc-admin/oidc/resources`): its `identifier`
 *   (an absolute URI without fragment: the tokens' `aud`), the scopes it defines, and the lifetime
 *   of its access tokens.
 * - An authorization request may name resources (`resource`, repeatable); each must be
 *   registered (else `invalid_target`), and their scopes become requestable. The code remembers
 *   them, and the session opened from it too (for refreshes).
 * - A token request (code or refresh) with `resource` (one of those granted) gets an `at+jwt`
 *   (RFC 9068) for it: `iss`, `sub`, `aud` = the
 *   identifier, `client_id`, `iat`, `exp`, `jti`, `scope` (the granted scopes the resource
 *   defines), `auth_time`, `sid` (the session, so that revocation and introspection can end it).
 *   Without any resource the access token stays svc's own `at+svc` (audience the client), which
 *   the userinfo endpoint takes; an `at+jwt` is for its resource only, not for userinfo.
 *
 * @module
 */
import * as v from "valibot";
import { type PluginSql, randomToken } from "../../mod.ts";
import { type Provider, signJwt, verifyJwt } from "./shared.ts";

/** A registered resource. */
export interface ResourceRecord {
  readonly id: string;
  readonly realmId: string;
  /** The absolute URI the resource is known by: the `resource` parameter and the tokens' `aud`. */
  readonly identifier: string;
  /** A name for people. */
  readonly name: string | null;
  /** The scopes it defines. */
  readonly scopes: readonly string[];
  /** Lifetime of its access tokens. */
  readonly accessTokenTtlSeconds: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The writable fields of a resource. */
export type ResourceFields = Pick<ResourceRecord, "identifier" | "name" | "scopes" | "accessTokenTtlSeconds">;

/** The plugin's tables for resources. */
export const RESOURCE_TABLES = [
  `CREATE TABLE IF NOT EXISTS oidc_provider_resources (
    id uuid PRIMARY KEY,
    realm_id uuid NOT NULL,
    identifier text NOT NULL,
    name text,
    scopes text[] NOT NULL,
    access_token_ttl_seconds integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (realm_id, identifier)
  )`,
  // The resources an authorization code names, then the session opened from it.
  `CREATE TABLE IF NOT EXISTS oidc_provider_resource_grants (
    code_hash text PRIMARY KEY,
    realm_id uuid NOT NULL,
    session_id uuid,
    resources text[] NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS oidc_provider_resource_grants_session ON oidc_provider_resource_grants (session_id)
    WHERE session_id IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS oidc_provider_resource_grants_created ON oidc_provider_resource_grants (created_at)`,
];

/** How long the resources of a code never exchanged are kept. */
const UNEXCHANGED_KEEP_MS = 3_600_000;

/** At most this many resources in one request. */
export const MAX_RESOURCES_PER_REQUEST = 5;

/** Whether a text is a resource identifier: an absolute URI without fragment (RFC 8707 2). */
export function isResourceIdentifier(text: string): boolean {
  // Visible ASCII only: no spaces or control characters (U+0000 included).
  if (text.length > 500 || !/^[\x21-\x7e]+$/.test(text)) return false;
  try {
    const url = new URL(text);
    return url.hash === "" && !text.includes("#") && /^[a-z][a-z0-9+.-]*:/i.test(text);
  } catch {
    return false;
  }
}

interface ResourceRow {
  id: string;
  realm_id: string;
  identifier: string;
  name: string | null;
  scopes: string[];
  access_token_ttl_seconds: number;
  created_at: Date | string;
  updated_at: Date | string;
}

function toResource(row: ResourceRow): ResourceRecord {
  return {
    id: row.id,
    realmId: row.realm_id,
    identifier: row.identifier,
    name: row.name,
    scopes: row.scopes,
    accessTokenTtlSeconds: row.access_token_ttl_seconds,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Whether an error is a unique violation (an identifier taken). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** The resources of the plugin's table through `sql`. */
export function resourceStore(sql: PluginSql) {
  const isId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
  return {
    async list(realmId: string): Promise<ResourceRecord[]> {
      const rows = await sql.query<ResourceRow>(
        "SELECT * FROM oidc_provider_resources WHERE realm_id = $1 ORDER BY identifier",
        [realmId],
      );
      return rows.map(toResource);
    },
    async get(realmId: string, id: string): Promise<ResourceRecord | null> {
      if (!isId(id)) return null;
      const [row] = await sql.query<ResourceRow>(
        "SELECT * FROM oidc_provider_resources WHERE realm_id = $1 AND id = $2",
        [realmId, id],
      );
      return row === undefined ? null : toResource(row);
    },
    async byIdentifiers(realmId: string, identifiers: readonly string[]): Promise<ResourceRecord[]> {
      if (identifiers.length === 0) return [];
      const rows = await sql.query<ResourceRow>(
        "SELECT * FROM oidc_provider_resources WHERE realm_id = $1 AND identifier = ANY($2)",
        [realmId, [...identifiers]],
      );
      return rows.map(toResource);
    },
    async create(id: string, realmId: string, fields: ResourceFields, now: Date): Promise<ResourceRecord> {
      const [row] = await sql.query<ResourceRow>(
        `INSERT INTO oidc_provider_resources (id, realm_id, identifier, name, scopes, access_token_ttl_seconds, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING *`,
        [id, realmId, fields.identifier, fields.name, [...fields.scopes], fields.accessTokenTtlSeconds, now],
      );
      return toResource(row);
    },
    async update(
      realmId: string,
      id: string,
      fields: ResourceFields,
      now: Date,
    ): Promise<ResourceRecord | null> {
      if (!isId(id)) return null;
      const [row] = await sql.query<ResourceRow>(
        `UPDATE oidc_provider_resources SET identifier = $3, name = $4, scopes = $5, access_token_ttl_seconds = $6,
         updated_at = $7 WHERE realm_id = $1 AND id = $2 RETURNING *`,
        [realmId, id, fields.identifier, fields.name, [...fields.scopes], fields.accessTokenTtlSeconds, now],
      );
      return row === undefined ? null : toResource(row);
    },
    async delete(realmId: string, id: string): Promise<boolean> {
      if (!isId(id)) return false;
      const rows = await sql.query(
        "DELETE FROM oidc_provider_resources WHERE realm_id = $1 AND id = $2 RETURNING 1",
        [realmId, id],
      );
      return rows.length === 1;
    },
  };
}

/** The resources a request names (`resource`, repeatable), registered; or why not (`invalid_target`). */
export async function requestedResources(
  p: Provider,
  identifiers: readonly string[],
): Promise<{ ok: true; resources: ResourceRecord[] } | { ok: false; description: string }> {
  const unique = [...new Set(identifiers)];
  if (unique.length > MAX_RESOURCES_PER_REQUEST) {
    return { ok: false, description: `at most ${MAX_RESOURCES_PER_REQUEST} resources` };
  }
  if (!unique.every(isResourceIdentifier)) {
    return { ok: false, description: "a resource is an absolute URI without fragment" };
  }
  const found = await resourceStore(p.ctx.sql).byIdentifiers(p.realmId, unique);
  if (found.length !== unique.length) return { ok: false, description: "a resource is not registered" };
  return { ok: true, resources: found };
}

/** Records the resources an authorization code names. */
export async function recordCodeResources(
  p: Provider,
  codeHash: string,
  resources: readonly string[],
): Promise<void> {
  if (resources.length === 0) return;
  // Old rows go as new ones come: those of codes never exchanged after an hour, and any older
  // than a session can live (its absolute timeout, plus a day).
  const now = p.ctx.clock.now();
  const sessionsEnd = now - (p.ctx.svcConfig.sessions.absoluteTimeoutSeconds + 86_400) * 1000;
  await p.ctx.sql.query(
    `DELETE FROM oidc_provider_resource_grants
     WHERE created_at < $1 OR (session_id IS NULL AND created_at < $2)`,
    [new Date(sessionsEnd), new Date(now - UNEXCHANGED_KEEP_MS)],
  );
  await p.ctx.sql.query(
    `INSERT INTO oidc_provider_resource_grants (code_hash, realm_id, resources, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (code_hash) DO NOTHING`,
    [codeHash, p.realmId, [...resources], new Date(p.ctx.clock.now())],
  );
}

/** The resources an authorization code names. */
export async function codeResources(p: Provider, codeHash: string): Promise<string[]> {
  const [row] = await p.ctx.sql.query<{ resources: string[] }>(
    "SELECT resources FROM oidc_provider_resource_grants WHERE code_hash = $1 AND realm_id = $2",
    [codeHash, p.realmId],
  );
  return row?.resources ?? [];
}

/** Binds a code's resources to the session its exchange opened (in the exchange's transaction). */
export async function bindResourcesToSession(
  sql: PluginSql,
  codeHash: string,
  sessionId: string,
): Promise<void> {
  await sql.query("UPDATE oidc_provider_resource_grants SET session_id = $2 WHERE code_hash = $1", [
    codeHash,
    sessionId,
  ]);
}

/** The resources granted to a session. */
export async function sessionResources(p: Provider, sessionId: string): Promise<string[]> {
  const [row] = await p.ctx.sql.query<{ resources: string[] }>(
    "SELECT resources FROM oidc_provider_resource_grants WHERE session_id = $1 AND realm_id = $2",
    [sessionId, p.realmId],
  );
  return row?.resources ?? [];
}

/** The form value `resource` of a token request (RFC 8707 2.2). */
const ResourceFieldSchema = v.pipe(v.string(), v.check(isResourceIdentifier));

/**
 * The resource a token request targets: `resource` when given (one, among those `granted`), else
 * none: without `resource` the access token is svc's `at+svc`, which userinfo takes (as
 * node-oidc-provider does without `useGrantedResource`).
 */
export async function tokenTarget(
  p: Provider,
  requested: string | undefined,
  granted: readonly string[],
): Promise<{ resource: ResourceRecord | null } | { error: string }> {
  if (requested === undefined) return { resource: null };
  if (!v.is(ResourceFieldSchema, requested)) {
    return { error: "a resource is an absolute URI without fragment" };
  }
  if (!granted.includes(requested)) return { error: "the resource was not granted" };
  const [resource] = await resourceStore(p.ctx.sql).byIdentifiers(p.realmId, [requested]);
  if (resource === undefined) return { error: "the resource is no longer registered" };
  return { resource };
}

/** An RFC 9068 access token for a resource; answers it with its lifetime and scope. */
export async function mintResourceToken(
  p: Provider,
  input: {
    resource: ResourceRecord;
    userId: string;
    clientId: string;
    scopes: readonly string[];
    authTime: number;
    sessionId: string;
    /** The DPoP key of the token request's proof (RFC 9449): the token is bound to it (`cnf.jkt`). */
    jkt?: string | null;
  },
): Promise<{ accessToken: string; tokenType: "Bearer" | "DPoP"; expiresIn: number; scope: string }> {
  const now = Math.floor(p.ctx.clock.now() / 1000);
  const scope = input.scopes.filter((s) => input.resource.scopes.includes(s)).join(" ");
  const accessToken = await signJwt(p, "at+jwt", {
    iss: p.issuer,
    sub: input.userId,
    aud: input.resource.identifier,
    client_id: input.clientId,
    iat: now,
    exp: now + input.resource.accessTokenTtlSeconds,
    jti: randomToken(p.ctx.random, 16),
    scope,
    auth_time: Math.floor(input.authTime / 1000),
    sid: input.sessionId,
    ...(input.jkt ? { cnf: { jkt: input.jkt } } : {}),
  });
  return {
    accessToken,
    tokenType: input.jkt ? "DPoP" : "Bearer",
    expiresIn: input.resource.accessTokenTtlSeconds,
    scope,
  };
}

/**
 * A user's `at+jwt` the provider issued for a resource (it has `sid`), valid now; or null.
 * Service accounts' `at+jwt` have no `sid`.
 */
export async function resourceAccessToken(
  p: Provider,
  token: string,
): Promise<Record<string, unknown> & { sid: string; client_id: string; sub: string } | null> {
  const claims = await verifyJwt(p, token, ["at+jwt"]);
  if (claims === null || typeof claims.sid !== "string" || typeof claims.client_id !== "string") return null;
  if (typeof claims.sub !== "string" || claims.iss !== p.issuer) return null;
  return claims as Record<string, unknown> & { sid: string; client_id: string; sub: string };
}
