/**
 * `signCompactJwt`: with a signer, the compact JWS svc builds itself is jose's `SignJWT` output
 * byte for byte; whatever the signer declines or fails, and whatever the fast path leaves alone,
 * jose signs (or refuses) as before.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { compactVerify, SignJWT } from "jose";
import { type JwsHeader, type JwsSigner, lazyJwsSigner, signCompactJwt } from "../../../core/keys/jws.ts";

const RS256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

async function rsaKeys(modulusLength: number, extractable = true) {
  return await crypto.subtle.generateKey(
    { ...RS256, modulusLength, publicExponent: new Uint8Array([1, 0, 1]) },
    extractable,
    ["sign", "verify"],
  ) as CryptoKeyPair;
}

/** A signer over WebCrypto itself, counting what it was asked and what it answered. */
function countingSigner(answer?: (input: Uint8Array) => Promise<Uint8Array | null> | null) {
  const counts = { asked: 0, answered: 0 };
  const signer: JwsSigner = {
    name: "webcrypto (test)",
    sign(alg, key, input) {
      counts.asked++;
      assert.equal(alg, "RS256");
      const result = answer?.(input) ??
        crypto.subtle.sign(RS256, key, input as Uint8Array<ArrayBuffer>).then((sig) => new Uint8Array(sig));
      return Promise.resolve(result).then((sig) => {
        if (sig !== null) counts.answered++;
        return sig;
      });
    },
  };
  return { signer, counts };
}

const joseToken = (header: JwsHeader, claims: Record<string, unknown>, key: CryptoKey) =>
  new SignJWT(claims).setProtectedHeader(header).sign(key);

/** Header members beside `alg`: any JSON but `crit` and `b64` (which the fast path leaves to jose). */
const headerArb = fc.record({
  typ: fc.string(),
  kid: fc.string(),
  extra: fc.dictionary(
    fc.string().filter((name) => name !== "crit" && name !== "b64" && name !== "alg"),
    fc.jsonValue(),
    { maxKeys: 3 },
  ),
}, { requiredKeys: [] }).map(({ typ, kid, extra }) =>
  ({
    alg: "RS256",
    ...(typ === undefined ? {} : { typ }),
    ...(kid === undefined ? {} : { kid }),
    ...extra,
  }) as JwsHeader
);

const claimsArb = fc.record({
  claims: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }),
  iat: fc.option(fc.integer({ min: 0, max: 2 ** 40 }), { nil: undefined }),
  exp: fc.option(fc.integer({ min: 0, max: 2 ** 40 }), { nil: undefined }),
}).map(({ claims, iat, exp }) => ({
  ...claims,
  ...(iat === undefined ? {} : { iat }),
  ...(exp === undefined ? {} : { exp }),
}));

Deno.test("signCompactJwt", async (t) => {
  const key2048 = await rsaKeys(2048);
  const key3072 = await rsaKeys(3072);

  await t.step("with a signer: jose's token byte for byte, and its signature verifies", async () => {
    for (const pair of [key2048, key3072]) {
      const { signer, counts } = countingSigner();
      await fc.assert(
        fc.asyncProperty(headerArb, claimsArb, async (header, claims) => {
          const answered = counts.answered;
          const token = await signCompactJwt(header, claims, pair.privateKey, signer);
          assert.equal(counts.answered, answered + 1, "the signer signed it");
          assert.equal(token, await joseToken(header, claims, pair.privateKey));
          // The JWS verifies (the JWT claims' own checks, exp and such, are not the point here).
          const { payload, protectedHeader } = await compactVerify(token, pair.publicKey);
          assert.deepEqual(protectedHeader, JSON.parse(JSON.stringify(header)));
          assert.deepEqual(JSON.parse(new TextDecoder().decode(payload)), JSON.parse(JSON.stringify(claims)));
        }),
        { numRuns: 60 },
      );
    }
  });

  await t.step("a signer that declines or fails: jose signs the same token", async () => {
    const header = { alg: "RS256", typ: "at+svc", kid: "k1" };
    const claims = { sub: "u1", iat: 1_700_000_000, exp: 1_700_000_600, ü: "ü" };
    const expected = await joseToken(header, claims, key2048.privateKey);
    const answers: [string, (input: Uint8Array) => Promise<Uint8Array | null> | null][] = [
      ["null", () => null],
      ["a promise of null", () => Promise.resolve(null)],
      ["a throw", () => {
        throw new Error("native library gone");
      }],
      ["a rejection", () => Promise.reject(new Error("EVP_DigestSign failed"))],
      ["a signature of the wrong length", () => Promise.resolve(new Uint8Array(255))],
    ];
    for (const [name, answer] of answers) {
      const { signer, counts } = countingSigner(answer);
      const token = await signCompactJwt(header, claims, key2048.privateKey, signer);
      assert.equal(counts.asked, 1, name);
      assert.equal(token, expected, name);
    }
    assert.equal(await signCompactJwt(header, claims, key2048.privateKey), expected, "no signer");
  });

  await t.step("what the fast path leaves to jose: the signer is not asked", async () => {
    const { signer, counts } = countingSigner();
    const claims = { sub: "u1" };
    // Another algorithm (jose's RS384 with a key made for it).
    const rs384 = await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        hash: "SHA-384",
        modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]),
      },
      true,
      ["sign", "verify"],
    ) as CryptoKeyPair;
    const header384 = { alg: "RS384", typ: "JWT" };
    assert.equal(
      await signCompactJwt(header384, claims, rs384.privateKey, signer),
      await joseToken(header384, claims, rs384.privateKey),
    );
    // An RS256 header with a key that is not RS256: jose refuses, and so does svc.
    await assert.rejects(signCompactJwt({ alg: "RS256" }, claims, rs384.privateKey, signer), TypeError);
    // Under 2048 bits: jose refuses.
    const small = await rsaKeys(1024);
    await assert.rejects(signCompactJwt({ alg: "RS256" }, claims, small.privateKey, signer), TypeError);
    // crit and b64: jose's own rules.
    await assert.rejects(signCompactJwt({ alg: "RS256", crit: ["exp"] }, claims, key2048.privateKey, signer));
    await assert.rejects(
      signCompactJwt({ alg: "RS256", b64: false, crit: ["b64"] }, claims, key2048.privateKey, signer),
    );
    // A claim jose refuses.
    await assert.rejects(
      signCompactJwt({ alg: "RS256" }, { exp: Number.POSITIVE_INFINITY }, key2048.privateKey, signer),
      TypeError,
    );
    // Claims that are not a plain object.
    await assert.rejects(
      signCompactJwt(
        { alg: "RS256" },
        new Map() as unknown as Record<string, unknown>,
        key2048.privateKey,
        signer,
      ),
      TypeError,
    );
    assert.equal(counts.asked, 0);
  });

  await t.step("claims are serialized from a structured clone, as jose does", async () => {
    const { signer, counts } = countingSigner();
    class Claim {
      constructor(readonly value: string) {}
      toJSON() {
        return "from toJSON";
      }
    }
    const claims = { at: new Date(0), nested: { claim: new Claim("plain") }, gone: undefined };
    const token = await signCompactJwt({ alg: "RS256" }, claims, key2048.privateKey, signer);
    assert.equal(counts.answered, 1);
    assert.equal(token, await joseToken({ alg: "RS256" }, claims, key2048.privateKey));
  });
});

Deno.test("lazyJwsSigner: opens its signer on the first signature, once, and sends everything to jose when it cannot", async (t) => {
  const { privateKey } = await rsaKeys(2048);
  const header: JwsHeader = { alg: "RS256", kid: "k1" };
  const claims = { sub: "user-1", iat: 1_700_000_000 };
  const expected = await joseToken(header, claims, privateKey);

  await t.step("nothing opened before a signature; one open for concurrent first signatures", async () => {
    const inner = countingSigner();
    let opens = 0;
    const lazy = lazyJwsSigner("lazy (test)", () => {
      opens++;
      return inner.signer;
    });
    assert.equal(lazy.name, "lazy (test)");
    assert.equal(opens, 0);
    const tokens = await Promise.all(
      Array.from({ length: 20 }, () => signCompactJwt(header, claims, privateKey, lazy)),
    );
    assert.equal(opens, 1);
    assert.deepEqual(new Set(tokens), new Set([expected]));
    assert.equal(inner.counts.answered, 20);
  });

  for (
    const [what, open] of [
      ["gives no signer", () => null],
      ["throws", () => {
        throw new Error("dlopen failed");
      }],
    ] as const
  ) {
    await t.step(`an open that ${what}: jose signs, and the open is not retried`, async () => {
      let opens = 0;
      const lazy = lazyJwsSigner("lazy (test)", () => {
        opens++;
        return open();
      });
      assert.equal(await signCompactJwt(header, claims, privateKey, lazy), expected);
      assert.equal(await signCompactJwt(header, claims, privateKey, lazy), expected);
      assert.equal(opens, 1);
    });
  }
});
