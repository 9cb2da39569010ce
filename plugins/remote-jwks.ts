/**
 * Remote JWK Sets for plugins that verify other parties' JWTs (client assertions, workload
 * tokens): one jose `createRemoteJWKSet` per URL, cached (refetched on an unknown `kid`, at most
 * every 30 s; redirects never followed), each fetch first passing svc's SSRF guard
 * (`PluginContext.outboundRefusal`).
 *
 * @module
 */
import { createRemoteJWKSet, customFetch, type FetchImplementation, type JWTVerifyGetKey } from "jose";

/** Most URLs kept at once (the oldest is dropped first). */
const MAX_SETS = 1000;

/**
 * A cache of remote key sets by URL whose fetches are refused when `refusal` answers a reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
 * import { outboundGuard, remoteJwksCache } from "@svc/svc";
 *
 * // Another party's key set, served on the loopback for the example, and a token it signed.
 * const { privateKey, publicKey } = await generateKeyPair("RS256");
 * const jwk = { ...await exportJWK(publicKey), kid: "k1", alg: "RS256" };
 * const issuer = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   () => Response.json({ keys: [jwk] }),
 * );
 * const jwksUrl = `http://127.0.0.1:${issuer.addr.port}/jwks.json`;
 * const token = await new SignJWT({ sub: "workload-1" })
 *   .setProtectedHeader({ alg: "RS256", kid: "k1" })
 *   .setExpirationTime("5m")
 *   .sign(privateKey);
 *
 * // A plugin passes `ctx.outboundRefusal`: the same guard, here allowing this loopback address.
 * const keysAt = remoteJwksCache(outboundGuard({ allowPrivate: ["127.0.0.1"] }));
 * const { payload } = await jwtVerify(token, keysAt(jwksUrl), { algorithms: ["RS256"] });
 * assert.equal(payload.sub, "workload-1");
 *
 * // Under the default policy the private address is refused before any fetch.
 * const publicOnly = remoteJwksCache(outboundGuard({ allowPrivate: [] }));
 * await assert.rejects(jwtVerify(token, publicOnly(jwksUrl)), /refused \(private_address\)/);
 * await issuer.shutdown();
 * ```
 */
export function remoteJwksCache(
  refusal: (url: string) => Promise<string | null>,
): (uri: string) => JWTVerifyGetKey {
  const sets = new Map<string, JWTVerifyGetKey>();
  const guarded: FetchImplementation = async (url, options) => {
    const refused = await refusal(url);
    if (refused !== null) throw new Error(`fetching keys from this address is refused (${refused})`);
    return await fetch(url, options);
  };
  return (uri) => {
    let set = sets.get(uri);
    if (set === undefined) {
      set = createRemoteJWKSet(new URL(uri), {
        timeoutDuration: 5000,
        cooldownDuration: 30_000,
        cacheMaxAge: 600_000,
        [customFetch]: guarded,
      });
      if (sets.size >= MAX_SETS) sets.delete(sets.keys().next().value!);
      sets.set(uri, set);
    }
    return set;
  };
}
