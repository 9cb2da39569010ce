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
 * import { jwtVerify } from "jose";
 * import type { PluginContext } from "@svc/svc";
 * import { remoteJwksCache } from "@svc/svc";
 *
 * declare const ctx: PluginContext;
 * declare const token: string;
 * const keysAt = remoteJwksCache(ctx.outboundRefusal);
 * await jwtVerify(token, keysAt("https://issuer.example/jwks.json"), { algorithms: ["RS256"] });
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
