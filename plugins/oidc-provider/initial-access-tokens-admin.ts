/**
 * Initial access tokens of dynamic client registration (RFC 7591) over the admin API, fenced like
 * the OIDC clients they let developers register (`svc:global:oidc-clients-read` / `-manage`),
 * each change one entry in the realm's admin audit chain:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/oidc/initial-access-tokens` | list, newest first (`?offset=&limit=`) |
 * | POST | `/svc-admin/oidc/initial-access-tokens` | mint `{name?, expiresInSeconds?, maxUses?}`: 201 with the `soi_…` token, shown once (`no-store`) |
 * | GET | `/svc-admin/oidc/initial-access-tokens/{tokenId}` | read |
 * | DELETE | `/svc-admin/oidc/initial-access-tokens/{tokenId}` | revoke (204; revoking a revoked token changes nothing) |
 *
 * Tokens may be minted while registration is off (`SVC_OIDC_REGISTRATION=off`); they work only
 * once it is `initial-token`.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  bodyLimit,
  documented,
  errorResponses,
  globalPermissions,
  IsoTimeSchema,
  listBodyOf,
  noStore,
  NotFoundError,
  OIDC_CLIENTS_MANAGE_GLOBAL,
  OIDC_CLIENTS_READ_GLOBAL,
  type OperationDoc,
  pageOf,
  PageQuerySchema,
  parseBody,
  parseQuery,
  type PluginContext,
  randomToken,
  randomUuid,
  type RouteInstaller,
} from "../../mod.ts";
import {
  INITIAL_ACCESS_TOKEN_PREFIX,
  type InitialAccessTokenRecord,
  initialAccessTokenStore,
  tokenStatus,
} from "./initial-access-tokens.ts";
import type { OidcProviderConfig } from "./shared.ts";

const BASE = "/svc-admin/oidc/initial-access-tokens";
const ITEM = `${BASE}/:tokenId`;
const { read: READ, manage: MANAGE } = globalPermissions(
  OIDC_CLIENTS_READ_GLOBAL,
  OIDC_CLIENTS_MANAGE_GLOBAL,
);
const MAX_BODY_BYTES = 4 * 1024;
/** The longest lifetime a token may be given: one year. */
export const MAX_INITIAL_ACCESS_TOKEN_SECONDS = 365 * 86_400;
/** The most uses a token may be given. */
export const MAX_INITIAL_ACCESS_TOKEN_USES = 10_000;

/** The body of `POST /svc-admin/oidc/initial-access-tokens`. */
export const CreateInitialAccessTokenSchema = v.strictObject({
  name: v.optional(
    v.nullable(v.pipe(
      v.string("name must be a string"),
      v.trim(),
      v.minLength(1, "name must not be empty"),
      v.maxLength(200, "name: at most 200 characters"),
      v.check(
        (text) => [...text].every((ch) => ch.charCodeAt(0) >= 0x20 && ch.charCodeAt(0) !== 0x7f),
        "name must not hold control characters",
      ),
    )),
    null,
  ),
  expiresInSeconds: v.optional(
    v.nullable(v.pipe(
      v.number("expiresInSeconds must be a number"),
      v.integer("expiresInSeconds is whole seconds"),
      v.minValue(60, "expiresInSeconds: from 60"),
      v.maxValue(
        MAX_INITIAL_ACCESS_TOKEN_SECONDS,
        `expiresInSeconds: at most ${MAX_INITIAL_ACCESS_TOKEN_SECONDS}`,
      ),
    )),
    null,
  ),
  maxUses: v.optional(
    v.nullable(v.pipe(
      v.number("maxUses must be a number"),
      v.integer("maxUses is a whole number"),
      v.minValue(1, "maxUses: from 1"),
      v.maxValue(MAX_INITIAL_ACCESS_TOKEN_USES, `maxUses: at most ${MAX_INITIAL_ACCESS_TOKEN_USES}`),
    )),
    null,
  ),
});

/** A token as the API shows it (never the token or its hash). */
export const InitialAccessTokenSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    name: v.nullable(v.string()),
    maxUses: v.pipe(v.nullable(v.number()), v.description("null: no limit")),
    uses: v.pipe(v.number(), v.description("clients registered with it")),
    expiresAt: v.nullable(IsoTimeSchema),
    revokedAt: v.nullable(IsoTimeSchema),
    status: v.picklist(["active", "expired", "spent", "revoked"]),
    createdAt: IsoTimeSchema,
  }),
  v.title("OidcInitialAccessToken"),
);

/** A new token with its secret (shown once). */
export const InitialAccessTokenWithSecretSchema = v.pipe(
  v.object({
    ...InitialAccessTokenSchema.entries,
    token: v.pipe(
      v.string(),
      v.description("The `soi_…` token, shown this once: the bearer token of the registration endpoint."),
    ),
  }),
  v.title("OidcInitialAccessTokenWithSecret"),
);

const ListSchema = v.pipe(
  v.object({
    items: v.array(InitialAccessTokenSchema),
    offset: v.number(),
    limit: v.number(),
    total: v.number(),
  }),
  v.title("OidcInitialAccessTokenList"),
);

/** The API view of a token at `now`. */
export function initialAccessTokenView(
  token: InitialAccessTokenRecord,
  now: number,
): v.InferOutput<typeof InitialAccessTokenSchema> {
  return {
    id: token.id,
    realmId: token.realmId,
    name: token.name,
    maxUses: token.maxUses,
    uses: token.uses,
    expiresAt: token.expiresAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
    status: tokenStatus(token, now),
    createdAt: token.createdAt.toISOString(),
  };
}

const TAGS = ["Admin: OIDC clients"];
const PARAMS = { tokenId: "The initial access token's id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List the initial access tokens of dynamic client registration",
    tags: TAGS,
    permissions: READ,
    query: PageQuerySchema,
    responses: {
      200: { description: "One page, newest first", body: ListSchema },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Mint an initial access token (RFC 7591)",
    description:
      "The `soi_…` token is in the answer this once (`Cache-Control: no-store`); svc keeps its SHA-256 only. It is the bearer token a client presents at the registration endpoint (`SVC_OIDC_REGISTRATION=initial-token`). `expiresInSeconds` (60 to one year) and `maxUses` (1 to 10000) are optional: without them the token works until revoked, for any number of clients. Each call mints a new token.",
    tags: TAGS,
    permissions: MANAGE,
    body: CreateInitialAccessTokenSchema,
    responses: {
      201: { description: "Minted", body: InitialAccessTokenWithSecretSchema },
      ...errorResponses(400, 401, 403, 413),
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read an initial access token",
    tags: TAGS,
    permissions: READ,
    params: PARAMS,
    responses: {
      200: { description: "The token (never its secret)", body: InitialAccessTokenSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Revoke an initial access token",
    description:
      "No client can register with it any more; the clients it registered stay. Revoking a revoked token answers 204 and changes nothing.",
    tags: TAGS,
    permissions: MANAGE,
    params: PARAMS,
    responses: { 204: { description: "Revoked" }, ...errorResponses(401, 403, 404) },
  },
];

/** The admin routes of initial access tokens. */
export function initialAccessTokenRoutes(ctx: PluginContext<OidcProviderConfig>): RouteInstaller {
  const hidden = () => new NotFoundError("No such initial access token.");
  const realmOf = (realmId: string) => realmId.toLowerCase();
  const now = () => ctx.clock.now();

  return documented((app) => {
    app.get(BASE, async (c: Context) => {
      const caller = await ctx.admin.fence(c, READ);
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const all = await initialAccessTokenStore(ctx.sql).list(realmOf(caller.realmId));
      const at = now();
      return c.json(listBodyOf(all, page, (token) => initialAccessTokenView(token, at)));
    });

    app.post(BASE, noStore, bodyLimit(MAX_BODY_BYTES), async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const body = await parseBody(c, CreateInitialAccessTokenSchema);
      const realmId = realmOf(caller.realmId);
      const secret = `${INITIAL_ACCESS_TOKEN_PREFIX}${randomToken(ctx.random, 32)}`;
      const at = now();
      const created = await ctx.admin.mutate(caller, async ({ tx }) => {
        const token = await initialAccessTokenStore(tx.pluginSql).create(
          randomUuid(ctx.random),
          realmId,
          secret,
          {
            name: body.name,
            maxUses: body.maxUses,
            expiresAt: body.expiresInSeconds === null ? null : new Date(at + body.expiresInSeconds * 1000),
          },
          new Date(at),
        );
        return {
          value: token,
          audit: {
            action: "oidc.initial_access_token.create",
            target: token.id,
            after: initialAccessTokenView(token, at),
          },
        };
      });
      return c.json({ ...initialAccessTokenView(created, at), token: secret }, 201);
    });

    app.get(ITEM, async (c: Context) => {
      const caller = await ctx.admin.fence(c, READ);
      const token = await initialAccessTokenStore(ctx.sql).get(
        realmOf(caller.realmId),
        c.req.param("tokenId")!,
      );
      if (token === null) throw hidden();
      return c.json(initialAccessTokenView(token, now()));
    });

    app.delete(ITEM, async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const realmId = realmOf(caller.realmId);
      const id = c.req.param("tokenId")!;
      const at = now();
      await ctx.admin.mutate(caller, async ({ tx }) => {
        const store = initialAccessTokenStore(tx.pluginSql);
        const before = await store.get(realmId, id);
        if (before === null) throw hidden();
        const after = await store.revoke(realmId, id, new Date(at));
        // Revoked already: nothing changes, no entry.
        if (after === null) return { value: null, audit: null };
        return {
          value: null,
          audit: {
            action: "oidc.initial_access_token.revoke",
            target: id,
            before: initialAccessTokenView(before, at),
            after: initialAccessTokenView(after, at),
          },
        };
      });
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
