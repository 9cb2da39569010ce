/**
 * RFC 8693 token exchange at `POST /workload/token`: an external workload's signed JWT (a CI
 * job's or a cluster's token) is exchanged for a service account's access token under a trust
 * policy of the realm.
 *
 * The request is form-encoded: `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`,
 * `subject_token`, `subject_token_type=urn:ietf:params:oauth:token-type:jwt`, optional
 * `requested_token_type` (only `…:access_token`), `audience` (only svc's issuer, the audience of
 * the token issued), and `scope`. The subject token is the only credential.
 *
 * A token is accepted when an enabled policy of its `iss` verifies it: signature (RS256, PS256,
 * ES256 or EdDSA; the policy's static keys or its JWKS URL, cached), `aud`, `exp` and `nbf` (with
 * {@link LEEWAY_SECONDS}), a lifetime of at most `maxTokenLifetimeSeconds`, a `jti`, and every
 * required claim with exactly its value. Its service account must exist and be enabled. Then its
 * `jti` is consumed (svc's consumed-token store, until the token expires): a replay, even
 * concurrent, is refused. Every refusal is the same `invalid_grant` answer; the
 * `workload.exchange_refused` event carries the reason (never the token).
 *
 * @module
 */
import type { Context } from "hono";
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JWTPayload,
  jwtVerify,
  type JWTVerifyGetKey,
} from "jose";
import {
  bodyLimit,
  CLIENT_ASSERTION_ALGORITHMS,
  clientJwksUriProblem,
  documented,
  mintServiceAccountToken,
  noStore,
  type OperationDoc,
  outboundPolicyFromConfig,
  type PluginContext,
  type RouteInstaller,
  type ServiceAccountRecord,
} from "../../mod.ts";
import * as v from "valibot";
import { policyStore, type TrustPolicy } from "./policies-store.ts";
import { WORKLOAD_EVENTS, type WorkloadFederationConfig } from "./shared.ts";

/** The token endpoint's path (below the path base). */
export const TOKEN_PATH = "/workload/token";
/** The RFC 8693 grant type. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
/** The subject token type accepted. */
export const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
/** The token type issued. */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
/** Leeway on `exp`, `nbf` and `iat`. */
export const LEEWAY_SECONDS = 30;
const MAX_BODY_BYTES = 32 * 1024;

/** What the endpoint needs: the plugin's context, its realm, and cached remote key sets. */
export interface ExchangeDeps {
  readonly ctx: PluginContext<WorkloadFederationConfig>;
  /** The realm whose policies and service accounts it serves. */
  realmId(): string;
  /** The cached key set at a JWKS URL. */
  remoteJwks(uri: string): JWTVerifyGetKey;
}

/** Why an exchange was refused (for the event; the answer never says). */
type Refusal =
  | "malformed_token"
  | "unknown_issuer"
  | "signature"
  | "algorithm"
  | "keys_unavailable"
  | "expired"
  | "not_yet_valid"
  | "audience"
  | "claim_mismatch"
  | "malformed_claims"
  | "lifetime_too_long"
  | "no_jti"
  | "service_account_unavailable"
  | "replayed";

class Refused extends Error {
  constructor(readonly reason: Refusal, readonly policyId: string | null = null) {
    super(reason);
  }
}

const ExchangeForm = v.object({
  grant_type: v.string(),
  subject_token: v.pipe(v.string(), v.minLength(1), v.maxLength(16_384)),
  subject_token_type: v.string(),
  requested_token_type: v.optional(v.string()),
  audience: v.optional(v.string()),
  resource: v.optional(v.string()),
  scope: v.optional(v.string()),
  actor_token: v.optional(v.string()),
  actor_token_type: v.optional(v.string()),
});

const ExchangeResponseSchema = v.pipe(
  v.object({
    access_token: v.string(),
    issued_token_type: v.literal(ACCESS_TOKEN_TYPE),
    token_type: v.literal("Bearer"),
    expires_in: v.number(),
    scope: v.optional(v.string()),
  }),
  v.title("WorkloadTokenExchangeResponse"),
);

const OAuthErrorSchema = v.pipe(
  v.object({ error: v.string(), error_description: v.optional(v.string()) }),
  v.title("OAuthError"),
);

const OPERATIONS: readonly OperationDoc[] = [{
  method: "POST",
  path: TOKEN_PATH,
  summary: "Exchange a workload's JWT for a service account's access token (RFC 8693)",
  description:
    "A form (`application/x-www-form-urlencoded`, not JSON): `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `subject_token` (the workload's signed JWT), `subject_token_type=urn:ietf:params:oauth:token-type:jwt`, optional `requested_token_type=urn:ietf:params:oauth:token-type:access_token`, `audience` (only this server's issuer) and `scope`. Every refusal of the subject token is `invalid_grant` with the same description.",
  tags: ["Workload federation"],
  auth: "public",
  responses: {
    200: {
      description: "The access token (`Cache-Control: no-store`)",
      body: ExchangeResponseSchema,
      headers: { "Cache-Control": "no-store" },
    },
    400: {
      description:
        "`invalid_request`, `unsupported_grant_type`, `invalid_target`, `invalid_scope` or `invalid_grant`",
      body: OAuthErrorSchema,
    },
    413: { description: "The body is larger than the limit" },
  },
}];

function oauthError(c: Context, error: string, description: string): Response {
  c.header("Cache-Control", "no-store");
  return c.json({ error, error_description: description }, 400);
}

async function formOf(c: Context): Promise<Record<string, string> | null> {
  const type = c.req.header("Content-Type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return null;
  const body = await c.req.parseBody({ all: true });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== "string" || value.includes("\u0000")) return null;
    out[name] = value;
  }
  return out;
}

/** The token exchange route. */
export function exchangeRoutes(deps: ExchangeDeps): RouteInstaller {
  return documented((app) => {
    app.post(TOKEN_PATH, noStore, bodyLimit(MAX_BODY_BYTES), (c: Context) => exchange(deps, c));
  }, OPERATIONS);
}

async function exchange(deps: ExchangeDeps, c: Context): Promise<Response> {
  return await exchangeForm(deps, c, await formOf(c));
}

/**
 * Answers a token-exchange request whose form fields are `fields` (null: not a form); also served
 * at the OIDC provider's token endpoint as an extension grant.
 */
export async function exchangeForm(
  deps: ExchangeDeps,
  c: Context,
  fields: Readonly<Record<string, string>> | null,
): Promise<Response> {
  const { ctx } = deps;
  const parsed = fields === null ? null : v.safeParse(ExchangeForm, fields);
  if (parsed === null || !parsed.success) {
    return oauthError(
      c,
      "invalid_request",
      "send grant_type, subject_token and subject_token_type as a form",
    );
  }
  const form = parsed.output;
  if (form.grant_type !== TOKEN_EXCHANGE_GRANT) {
    return oauthError(c, "unsupported_grant_type", "grant_type is not supported");
  }
  if (form.subject_token_type !== JWT_TOKEN_TYPE) {
    return oauthError(c, "invalid_request", `subject_token_type must be ${JWT_TOKEN_TYPE}`);
  }
  if (form.requested_token_type !== undefined && form.requested_token_type !== ACCESS_TOKEN_TYPE) {
    return oauthError(c, "invalid_request", `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  if (form.actor_token !== undefined || form.actor_token_type !== undefined) {
    return oauthError(c, "invalid_request", "actor tokens are not supported");
  }
  const issuer = ctx.tokens.issuer;
  if (
    (form.audience !== undefined && form.audience !== issuer) ||
    (form.resource !== undefined && form.resource !== issuer)
  ) {
    return oauthError(c, "invalid_target", "the only audience is this server's issuer");
  }
  const scopes = (form.scope ?? "").split(" ").filter((s) => s !== "");
  if (scopes.some((s) => s === "openid" || s === "offline_access" || !/^[\x21-\x7e]{1,100}$/.test(s))) {
    return oauthError(c, "invalid_scope", "openid and offline_access need a user");
  }

  const realmId = deps.realmId();
  let iss: string | null = null;
  try {
    const { policy, payload, account } = await accept(
      deps,
      realmId,
      form.subject_token,
      (value) => iss = value,
    );
    const { accessToken, expiresIn } = await mintServiceAccountToken(ctx, {
      realmId,
      issuer,
      account,
      scopes,
      ttlSeconds: ctx.svcConfig.tokens.accessTokenTtlSeconds,
      claims: await ctx.contributeClaims({
        token: "access",
        realmId,
        subject: account.id,
        clientId: account.key,
        scopes,
      }),
    });
    ctx.events.emit({
      kind: WORKLOAD_EVENTS.tokenExchanged,
      occurredAt: ctx.clock.now(),
      realmId,
      data: {
        policyId: policy.id,
        policyName: policy.name,
        serviceAccountId: account.id,
        issuer: policy.issuer,
        subject: typeof payload.sub === "string" ? payload.sub.slice(0, 300) : null,
        jti: payload.jti!.slice(0, 200),
        scopes,
      },
    });
    return c.json({
      access_token: accessToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: expiresIn,
      ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}),
    });
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    ctx.events.emit({
      kind: WORKLOAD_EVENTS.exchangeRefused,
      occurredAt: ctx.clock.now(),
      realmId,
      data: {
        reason: error.reason,
        issuer: iss === null ? null : String(iss).slice(0, 300),
        policyId: error.policyId,
      },
    });
    return oauthError(c, "invalid_grant", "the subject token was not accepted");
  }
}

/** Checks the subject token against the issuer's policies; the first (by name) that verifies wins. */
async function accept(
  deps: ExchangeDeps,
  realmId: string,
  token: string,
  seenIssuer: (iss: string) => void,
): Promise<{ policy: TrustPolicy; payload: JWTPayload; account: ServiceAccountRecord }> {
  const { ctx } = deps;
  let unverified: JWTPayload;
  try {
    decodeProtectedHeader(token);
    unverified = decodeJwt(token);
  } catch {
    throw new Refused("malformed_token");
  }
  if (typeof unverified.iss !== "string" || unverified.iss.length > 500) throw new Refused("malformed_token");
  seenIssuer(unverified.iss);
  const policies = await policyStore(ctx.sql).forIssuer(realmId, unverified.iss);
  if (policies.length === 0) throw new Refused("unknown_issuer");
  const now = ctx.clock.now();
  const nowSeconds = Math.floor(now / 1000);
  let last: Refused | null = null;
  for (const policy of policies) {
    const payload = await verified(deps, policy, token, now);
    if (typeof payload === "string") {
      last = new Refused(payload, policy.id);
      continue;
    }
    const start = typeof payload.iat === "number"
      ? payload.iat
      : typeof payload.nbf === "number"
      ? payload.nbf
      : nowSeconds;
    const maxLifetime = ctx.config.maxTokenLifetimeSeconds;
    if (payload.exp! - start > maxLifetime || payload.exp! - nowSeconds > maxLifetime) {
      throw new Refused("lifetime_too_long", policy.id);
    }
    if (typeof payload.iat === "number" && payload.iat > nowSeconds + LEEWAY_SECONDS) {
      throw new Refused("not_yet_valid", policy.id);
    }
    if (typeof payload.jti !== "string" || payload.jti.length < 1 || payload.jti.length > 200) {
      throw new Refused("no_jti", policy.id);
    }
    const account = await ctx.storage.serviceAccounts.get(policy.serviceAccountId);
    if (account === null || account.disabled || account.realmId !== realmId) {
      throw new Refused("service_account_unavailable", policy.id);
    }
    const consumed = await ctx.storage.consumedTokens.consume(
      `workload:${realmId}:${policy.issuer}:${payload.jti}`,
      new Date((payload.exp! + LEEWAY_SECONDS) * 1000),
    );
    if (!consumed) throw new Refused("replayed", policy.id);
    return { policy, payload, account };
  }
  throw last!;
}

/** The refusal reason of a jose verification error. */
function reasonOf(error: unknown): Refusal {
  const { code, claim } = error as { code?: string; claim?: string };
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "expired";
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return "algorithm";
    case "ERR_JWKS_TIMEOUT":
    case "ERR_JWKS_INVALID":
    case "ERR_JOSE_GENERIC":
      return "keys_unavailable";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return claim === "aud" ? "audience" : claim === "nbf" ? "not_yet_valid" : "malformed_claims";
    case "ERR_JWT_INVALID":
      return "malformed_token";
    default:
      return "signature";
  }
}

/** The payload when the token verifies under the policy (keys, iss, aud, exp, nbf, claims), else why not. */
async function verified(
  deps: ExchangeDeps,
  policy: TrustPolicy,
  token: string,
  now: number,
): Promise<JWTPayload | Refusal> {
  let keys: JWTVerifyGetKey;
  if (policy.jwks !== null) {
    keys = createLocalJWKSet({ keys: policy.jwks.keys.map((key) => ({ ...key })) });
  } else {
    const allowed = outboundPolicyFromConfig(deps.ctx.svcConfig);
    if (policy.jwksUri === null || clientJwksUriProblem(policy.jwksUri, allowed) !== null) {
      return "keys_unavailable";
    }
    keys = deps.remoteJwks(policy.jwksUri);
  }
  try {
    const { payload } = await jwtVerify(token, keys, {
      algorithms: [...CLIENT_ASSERTION_ALGORITHMS],
      issuer: policy.issuer,
      audience: policy.audience,
      currentDate: new Date(now),
      clockTolerance: LEEWAY_SECONDS,
      requiredClaims: ["exp"],
    });
    for (const [name, value] of Object.entries(policy.requiredClaims)) {
      if (payload[name] !== value) return "claim_mismatch";
    }
    return payload;
  } catch (error) {
    return reasonOf(error);
  }
}
