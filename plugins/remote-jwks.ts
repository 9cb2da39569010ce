/**
 * Remote JWK Sets for plugins that verify other parties' JWTs (client assertions, workload
 * tokens): one jose `createRemoteJWKSet` per URL, cached (refetched on an unknown `kid`, at most
 * every 30 s), each fetch made through svc's outbound guard (`PluginContext.outbound`): private
 * and loopback addresses refused after DNS resolution, redirects never followed, the body capped.
 *
 * @module
 */
import { createRemoteJWKSet, customFetch, type FetchImplementation, type JWTVerifyGetKey } from "jose";
import type { OutboundFetch } from "../core/net/outbound.ts";

/** Most URLs kept at once (the oldest is dropped first). */
const MAX_SETS = 1000;

/** Largest key set read, in bytes. */
const MAX_JWKS_BYTES = 256 * 1024;

/**
 * A cache of remote key sets by URL, fetched through `outbound` (the guard refuses what it must).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
 * import { createOutboundFetch, remoteJwksCache } from "@svc/svc";
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
 * // A plugin passes `ctx.outbound`: the same guard, here allowing this loopback address.
 * const guard = (allowPrivate: string[]) =>
 *   createOutboundFetch({
 *     policy: { allowPrivate },
 *     resolveHost: (name) => Deno.resolveDns(name, "A"),
 *     fetch: (input, init) => fetch(input, init),
 *   });
 * const keysAt = remoteJwksCache(guard(["127.0.0.1"]));
 * const { payload } = await jwtVerify(token, keysAt(jwksUrl), { algorithms: ["RS256"] });
 * assert.equal(payload.sub, "workload-1");
 *
 * // Under the default policy the private address is refused before any fetch.
 * const publicOnly = remoteJwksCache(guard([]));
 * await assert.rejects(jwtVerify(token, publicOnly(jwksUrl)), { code: "outbound_address_refused" });
 * await issuer.shutdown();
 * ```
 */
export function remoteJwksCache(outbound: OutboundFetch): (uri: string) => JWTVerifyGetKey {
  const sets = new Map<string, JWTVerifyGetKey>();
  const guarded: FetchImplementation = (url, options) =>
    outbound(url, { ...options, maxRedirects: 0, maxResponseBytes: MAX_JWKS_BYTES });
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
