/** Remote JWK Sets for plugins: cached per URL, and never fetched when the SSRF guard refuses the address. */
import { strict as assert } from "node:assert";
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { remoteJwksCache } from "../../plugins/remote-jwks.ts";
import { testOutbound } from "../support/outbound.ts";

Deno.test("remoteJwksCache: fetches through the guard, caches, and refuses what the guard refuses", async () => {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const jwk = { ...await exportJWK(publicKey), kid: "k1" };
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return Response.json({ keys: [jwk] });
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}/jwks.json`;
    const token = await new SignJWT({ sub: "x" }).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(
      privateKey,
    );
    const asked: string[] = [];
    const allowed = remoteJwksCache(testOutbound({
      allowPrivate: ["127.0.0.1"],
      fetch: (input, init) => {
        asked.push(String(input));
        return fetch(input, init);
      },
    }));
    assert.equal((await jwtVerify(token, allowed(url))).payload.sub, "x");
    assert.equal((await jwtVerify(token, allowed(url))).payload.sub, "x");
    assert.equal(hits, 1, "cached");
    assert.deepEqual(asked, [url]);

    const refused = remoteJwksCache(testOutbound());
    await assert.rejects(() => jwtVerify(token, refused(url)), { code: "outbound_address_refused" });
    assert.equal(hits, 1, "never fetched");
  } finally {
    await server.shutdown();
  }
});
