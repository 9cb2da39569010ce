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
import type { Storage } from "../../storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import type { SvcEnv } from "../request-id.ts";

/** Seconds a published key set may be cached. */
export const JWKS_MAX_AGE_SECONDS = 300;

/** The JWKS routes. */
export function jwksRoutes(deps: { keys: KeyRing; storage: Pick<Storage, "realms"> }): RouteInstaller {
  const publish = async (c: Context<SvcEnv>, realmId: string) => {
    const body = JSON.stringify(await deps.keys.jwks(realmId));
    const etag = `"${sha256Hex(body).slice(0, 32)}"`;
    c.header("Cache-Control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    c.header("ETag", etag);
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
    c.header("Content-Type", "application/json");
    return c.body(body, 200);
  };
  return (app) => {
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
  };
}
