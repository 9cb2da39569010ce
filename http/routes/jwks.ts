/**
 * Key-set publication (JWKS) per realm:
 *
 * - `GET /.well-known/jwks.json`: the default realm's keys;
 * - `GET /realms/{realmId}/.well-known/jwks.json`: any realm's keys.
 *
 * The set holds the primary key, staged keys and retired keys still inside their overlap
 * window. Answers carry `Cache-Control: public, max-age=300` and an `ETag`; verifiers that
 * meet an unknown `kid` should fetch the set again.
 *
 * @module
 */
import type { Context } from "hono";
import { sha256Hex } from "../../core/digest.ts";
import { NotFoundError } from "../../core/errors.ts";
import type { KeyRing } from "../../core/keys/ring.ts";
import type { Storage } from "../../core/storage/storage.ts";
import * as v from "valibot";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import type { SvcEnv } from "../request-id.ts";

/** Seconds a published key set may be cached. */
export const JWKS_MAX_AGE_SECONDS = 300;

/** A published key set (RFC 7517). */
export const JwksSchema = v.pipe(
  v.object({
    keys: v.array(
      v.looseObject({
        kty: v.string(),
        kid: v.string(),
        alg: v.optional(v.string()),
        use: v.optional(v.string()),
      }),
    ),
  }),
  v.title("Jwks"),
);

const JWKS_RESPONSES = {
  200: {
    description: "The key set (`Cache-Control: public, max-age=300`, `ETag`)",
    body: JwksSchema,
    headers: { ETag: "The set's entity tag", "Cache-Control": "public, max-age=300" },
  },
  304: { description: "Not modified (`If-None-Match`)" },
  ...errorResponses(404),
};

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/.well-known/jwks.json",
    summary: "The default realm's signing keys (JWKS)",
    tags: ["Keys"],
    auth: "public",
    responses: JWKS_RESPONSES,
  },
  {
    method: "GET",
    path: "/realms/:realmId/.well-known/jwks.json",
    summary: "A realm's signing keys (JWKS)",
    tags: ["Keys"],
    auth: "public",
    params: { realmId: "The realm id" },
    responses: JWKS_RESPONSES,
  },
];

/** The JWKS routes. */
export function jwksRoutes(
  deps: { keys: KeyRing; storage: Pick<Storage, "realms"> },
): DocumentedInstaller {
  const publish = async (c: Context<SvcEnv>, realmId: string) => {
    const body = JSON.stringify(await deps.keys.jwks(realmId));
    const etag = `"${sha256Hex(body).slice(0, 32)}"`;
    c.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    c.header("ETag", etag);
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
    c.header("Content-Type", "application/json");
    return c.body(body, 200);
  };
  return documented((app) => {
    app.get("/.well-known/jwks.json", async (c) => {
      const realm = await deps.storage.realms.getDefault();
      if (realm === null) throw new NotFoundError("No default realm.");
      return await publish(c, realm.id);
    });
    app.get("/realms/:realmId/.well-known/jwks.json", async (c) => {
      const realm = await deps.storage.realms.get(c.req.param("realmId"));
      if (realm === null) throw new NotFoundError("No such realm.");
      return await publish(c, realm.id);
    });
  }, OPERATIONS);
}
