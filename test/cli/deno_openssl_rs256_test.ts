/**
 * The Deno adapter's RS256 signer on OpenSSL's libcrypto (`cli/deno-openssl-rs256.ts`): the
 * tokens it signs are jose's byte for byte and verify; keys it cannot use and failures go to
 * jose; concurrent signatures are all right; a key ring with it mints the same tokens.
 *
 * Skipped only where no OpenSSL 3 libcrypto loads (this test says so when it is).
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { jwtVerify, SignJWT } from "jose";
import { lazyOpenSslRs256Signer, openSslRs256Signer } from "../../cli/deno-openssl-rs256.ts";
import { ManualClock } from "../../core/clock.ts";
import { type JwsHeader, type JwsSigner, signCompactJwt } from "../../core/keys/jws.ts";
import { KeyRing } from "../../core/keys/ring.ts";
import { seededRandom } from "../../core/random.ts";
import { mintToken } from "../../core/tokens/mint.ts";
import { createSqlStorage } from "../../storage/storage.ts";
import { T0 } from "../support/auth.ts";
import { freshEmbedded } from "../support/db.ts";
import { seeder } from "../support/seed.ts";

const RS256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;
const openssl = openSslRs256Signer();
if (openssl === null) console.warn("deno_openssl_rs256_test: skipped, no OpenSSL 3 libcrypto loads here");

async function rsaKeys(modulusLength: number, extractable = true) {
  return await crypto.subtle.generateKey(
    { ...RS256, modulusLength, publicExponent: new Uint8Array([1, 0, 1]) },
    extractable,
    ["sign", "verify"],
  ) as CryptoKeyPair;
}

/** `signer`, counting the signatures it made (not declined). */
function counted(signer: JwsSigner) {
  const counts = { signed: 0 };
  const wrapped: JwsSigner = {
    name: signer.name,
    sign(alg, key, input) {
      const result = signer.sign(alg, key, input);
      return result === null ? null : result.then((sig) => {
        if (sig !== null) counts.signed++;
        return sig;
      });
    },
  };
  return { signer: wrapped, counts };
}

const joseToken = (header: JwsHeader, claims: Record<string, unknown>, key: CryptoKey) =>
  new SignJWT(claims).setProtectedHeader(header).sign(key);

const REGISTERED = new Set(["iss", "sub", "aud", "iat", "nbf", "exp", "jti"]);
const NOW = Math.floor(Date.now() / 1000);
const claimsArb = fc.record({
  extra: fc.dictionary(
    fc.string().filter((name) => !REGISTERED.has(name)),
    fc.jsonValue({ maxDepth: 3 }),
    { maxKeys: 8 },
  ),
  sub: fc.string(),
  ttl: fc.integer({ min: 60, max: 86_400 }),
}).map(({ extra, sub, ttl }) => ({
  iss: "https://id.example.test",
  sub,
  ...extra,
  iat: NOW,
  exp: NOW + ttl,
}));
const headerArb = fc.record({ typ: fc.constantFrom("at+svc", "id+jwt", "at+jwt", "JWT"), kid: fc.string() })
  .map(({ typ, kid }) => ({ alg: "RS256", typ, kid }));

Deno.test({
  name: "openssl rs256 signer",
  ignore: openssl === null,
  async fn(t) {
    const signer = openssl!;
    assert.match(signer.name, /^openssl 3\./);
    const pairs = [await rsaKeys(2048), await rsaKeys(3072)];

    await t.step("its tokens are jose's byte for byte and pass jwtVerify", async () => {
      for (const pair of pairs) {
        const { signer: wrapped, counts } = counted(signer);
        await fc.assert(
          fc.asyncProperty(headerArb, claimsArb, async (header, claims) => {
            const before = counts.signed;
            const token = await signCompactJwt(header, claims, pair.privateKey, wrapped);
            assert.equal(counts.signed, before + 1, "openssl signed it");
            assert.equal(token, await joseToken(header, claims, pair.privateKey));
            const { payload, protectedHeader } = await jwtVerify(token, pair.publicKey);
            assert.deepEqual(protectedHeader, header);
            assert.deepEqual(payload, JSON.parse(JSON.stringify(claims)));
          }),
          { numRuns: 80 },
        );
      }
    });

    await t.step("50 concurrent signatures (two at a time in OpenSSL) are all right", async () => {
      const limited = counted(openSslRs256Signer({ concurrency: 2 })!);
      const header = { alg: "RS256", typ: "at+svc", kid: "k" };
      const claims = Array.from(
        { length: 50 },
        (_, i) => ({ sub: `user-${i}`, iat: NOW, exp: NOW + i + 60 }),
      );
      const tokens = await Promise.all(
        claims.map((c, i) => signCompactJwt(header, c, pairs[i % 2].privateKey, limited.signer)),
      );
      assert.equal(limited.counts.signed, 50);
      for (const [i, token] of tokens.entries()) {
        assert.equal(token, await joseToken(header, claims[i], pairs[i % 2].privateKey));
        const { payload } = await jwtVerify(token, pairs[i % 2].publicKey);
        assert.equal(payload.sub, `user-${i}`);
      }
    });

    await t.step("keys it does not take, and failures, go to jose: the same token", async () => {
      const header = { alg: "RS256", typ: "at+svc", kid: "k" };
      const claims = { sub: "u", iat: NOW, exp: NOW + 60 };
      // A key that cannot be exported: declined.
      const sealed = await rsaKeys(2048, false);
      assert.equal(signer.sign("RS256", sealed.privateKey, new Uint8Array(1)), null);
      const { signer: wrapped, counts } = counted(signer);
      assert.equal(
        await signCompactJwt(header, claims, sealed.privateKey, wrapped),
        await joseToken(header, claims, sealed.privateKey),
      );
      assert.equal(counts.signed, 0);
      // Another algorithm: declined.
      assert.equal(signer.sign("PS256", pairs[0].privateKey, new Uint8Array(1)), null);
      // A signer whose library fails: jose.
      const failing: JwsSigner = {
        name: "failing",
        sign: (alg, key, input) =>
          signer.sign(alg, key, input)!.then(() => {
            throw new Error("EVP_DigestSign failed");
          }),
      };
      assert.equal(
        await signCompactJwt(header, claims, pairs[0].privateKey, failing),
        await joseToken(header, claims, pairs[0].privateKey),
      );
    });

    await t.step("no library by the given names: no signer", () => {
      assert.equal(openSslRs256Signer({ libraries: ["libsvc-no-such-crypto.so.3"] }), null);
    });

    await t.step(
      "the adapter's lazy signer: libcrypto mapped by the first signature, not before",
      async () => {
        const reported: string[] = [];
        const lazy = lazyOpenSslRs256Signer({ report: (line) => reported.push(line) })!;
        const claims = { sub: "user-1", iat: 1_700_000_000 };
        const header: JwsHeader = { alg: "RS256", kid: "k1" };
        // A fresh process (the other steps loaded libcrypto into this one) shows the mapping order.
        if (Deno.build.os === "linux") {
          const out = await new Deno.Command(Deno.execPath(), {
            args: [
              "eval",
              `
            import { lazyOpenSslRs256Signer } from ${
                JSON.stringify(new URL("../../cli/deno-openssl-rs256.ts", import.meta.url).href)
              };
            const maps = () => Deno.readTextFileSync("/proc/self/maps").includes("libcrypto");
            const signer = lazyOpenSslRs256Signer();
            const before = maps();
            const { privateKey } = await crypto.subtle.generateKey(
              { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
              true, ["sign"]);
            const signature = await signer.sign("RS256", privateKey, new TextEncoder().encode("a.b"));
            console.log(JSON.stringify({ before, after: maps(), signed: signature?.length ?? null }));
          `,
            ],
            stdout: "piped",
            stderr: "piped",
          }).output();
          assert.ok(out.success, new TextDecoder().decode(out.stderr));
          assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
            before: false,
            after: true,
            signed: 256,
          });
        }
        assert.equal(
          await signCompactJwt(header, claims, pairs[0].privateKey, lazy),
          await joseToken(header, claims, pairs[0].privateKey),
        );
        assert.deepEqual(reported, [`signing: RS256 with ${openssl!.name}, opened on the first signature`]);
        // Where no library loads, the lazy signer hands every signature to jose, and says so once.
        const missing = lazyOpenSslRs256Signer({
          libraries: ["libsvc-no-such-crypto.so.3"],
          report: (line) => reported.push(line),
        })!;
        assert.equal(missing.sign("RS256", pairs[0].privateKey, new Uint8Array(1)), null);
        assert.equal(missing.sign("RS256", pairs[0].privateKey, new Uint8Array(1)), null);
        assert.deepEqual(reported.slice(1), [
          "signing: no OpenSSL 3 libcrypto loads here; RS256 with WebCrypto",
        ]);
      },
    );

    await t.step("a key ring with the signer mints the tokens a ring without it mints", async () => {
      const database = await freshEmbedded();
      try {
        const clock = new ManualClock(T0);
        const storage = createSqlStorage(database, { clock, random: seededRandom(1) });
        const realmId = await seeder(database.db).realm();
        const ring = (native: JwsSigner | undefined) =>
          new KeyRing({
            store: storage.signingKeys,
            clock,
            random: seededRandom(2),
            overlapMs: 60_000,
            signer: native,
          });
        const { signer: wrapped, counts } = counted(signer);
        const withSigner = ring(wrapped);
        const without = ring(undefined);
        const key = await withSigner.ensurePrimary(realmId);
        const mint = (keys: KeyRing) =>
          mintToken(
            { keys, random: seededRandom(7), now: T0, issuer: "https://id.example.test" },
            "at+svc",
            { realm: realmId, aud: "app", sub: "user-1", sid: "session-1", mfa: "None" },
            600,
          );
        const [a, b] = [await mint(withSigner), await mint(without)];
        assert.equal(counts.signed, 1);
        assert.equal(a.token, b.token);
        const { protectedHeader } = await jwtVerify(a.token, key.publicKey, { currentDate: new Date(T0) });
        assert.equal(protectedHeader.kid, key.kid);
      } finally {
        await database.close();
      }
    });
  },
});
