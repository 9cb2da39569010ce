/**
 * The Node adapter's RS256 signer (`cli/node-rs256.ts`): the same tokens as jose's `SignJWT`
 * byte for byte, through `signCompactJwt`'s fast path; other keys and algorithms left to jose.
 * Runs on Deno's `node:crypto`; `svc start` on Node (the smoke test's) signs through it.
 */
import assert from "node:assert/strict";
import { generateKeyPair, importJWK, jwtVerify, SignJWT } from "jose";
import { nodeRs256Signer } from "../../cli/node-rs256.ts";
import { signCompactJwt } from "../../core/keys/jws.ts";

Deno.test("node RS256 signer: jose's token byte for byte, and it verifies", async () => {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const signer = nodeRs256Signer("3.0.0");
  assert.equal(signer.name, "node:crypto (openssl 3.0.0)");
  let used = 0;
  const counted = {
    name: signer.name,
    sign: (alg: string, key: CryptoKey, input: Uint8Array) => {
      used++;
      return signer.sign(alg, key, input);
    },
  };
  for (const claims of [{ sub: "a", iat: 1, exp: 2 }, { sub: "ü ☃", scope: "x y", nested: { a: [1, 2] } }]) {
    const header = { alg: "RS256", typ: "at+jwt", kid: "k1" };
    const fast = await signCompactJwt(header, claims, privateKey, counted);
    const jose = await new SignJWT(claims).setProtectedHeader(header).sign(privateKey);
    assert.equal(fast, jose);
    const { payload } = await jwtVerify(fast, publicKey, { currentDate: new Date(1000) });
    assert.deepEqual(payload, claims);
  }
  assert.equal(used, 2, "the fast path signed both");
});

Deno.test("node RS256 signer: declines other algorithms and keys", async () => {
  const signer = nodeRs256Signer(undefined);
  assert.equal(signer.name, "node:crypto");
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  assert.equal(signer.sign("RS384", privateKey, new Uint8Array(1)), null);
  const es = await generateKeyPair("ES256", { extractable: true });
  assert.equal(signer.sign("RS256", es.privateKey, new Uint8Array(1)), null);
  // A public key never signs.
  const jwk = await crypto.subtle.exportKey(
    "jwk",
    (await generateKeyPair("RS256", { extractable: true })).publicKey,
  );
  const publicKey = await importJWK({ ...jwk, alg: "RS256" }, "RS256") as CryptoKey;
  assert.equal(signer.sign("RS256", publicKey, new Uint8Array(1)), null);
});
