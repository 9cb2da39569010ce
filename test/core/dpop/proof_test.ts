import { strict as assert } from "node:assert";
import fc from "fast-check";
import { exportJWK, generateKeyPair } from "jose";
import { toBase64Url, utf8 } from "../../../core/encoding.ts";
import {
  accessTokenHash,
  DpopNonceError,
  DpopProofError,
  type DpopProofReason,
  MAX_PROOF_LENGTH,
  normalizeHtu,
  verifyDpopProof,
} from "../../../core/dpop/proof.ts";
import { dpopKey, dpopProof, type DpopTestKey } from "../../support/dpop.ts";

const URL_ = "https://id.example.com/oidc/token";
const NOW = Date.UTC(2026, 10, 27, 6, 0, 0);
const NOW_S = NOW / 1000;

async function rejects(promise: Promise<unknown>, reason: DpopProofReason): Promise<void> {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof DpopProofError, `expected DpopProofError, got ${error}`);
    assert.equal(error.reason, reason);
    assert.equal(error.code, "invalid_dpop_proof");
    return true;
  });
}

function unsigned(header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const part = (value: unknown) => toBase64Url(utf8(JSON.stringify(value)));
  return `${part(header)}.${part(payload)}.${toBase64Url(new Uint8Array(64))}`;
}

Deno.test("verifyDpopProof accepts a good proof and returns its key thumbprint and jti", async () => {
  const key = await dpopKey();
  const proof = await dpopProof(key, { htm: "POST", htu: URL_, iat: NOW_S, jti: "one" });
  const verified = await verifyDpopProof(proof, { method: "POST", url: URL_, now: NOW });
  assert.equal(verified.jkt, key.jkt);
  assert.equal(verified.jti, "one");
  assert.equal(verified.iat, NOW_S);
  assert.equal(verified.replayUntil, NOW + 120_000, "remembered as long as iat accepts it");
});

Deno.test("verifyDpopProof: every rejection reason", async (t) => {
  const key = await dpopKey();
  const other = await dpopKey();
  const check = { method: "POST", url: URL_, now: NOW };
  const base = { htm: "POST", htu: URL_, iat: NOW_S };

  await t.step("malformed: not a compact JWS, too long, or a JSON serialization", async () => {
    await rejects(verifyDpopProof("nope", check), "malformed");
    await rejects(verifyDpopProof("a.b", check), "malformed");
    await rejects(verifyDpopProof(`${"a".repeat(MAX_PROOF_LENGTH)}.b.c`, check), "malformed");
    await rejects(verifyDpopProof("!!!.b.c", check), "malformed");
    await rejects(verifyDpopProof(undefined as unknown as string, check), "malformed");
  });
  await t.step("typ: anything but dpop+jwt", async () => {
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, header: { typ: "JWT" } }), check), "typ");
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, header: { typ: undefined } }), check),
      "typ",
    );
  });
  await t.step("alg: none, symmetric, or outside the allow-list", async () => {
    const claims = { jti: "x", htm: "POST", htu: URL_, iat: NOW_S };
    for (const alg of ["none", "HS256", "RSA-OAEP", "ES256K"]) {
      await rejects(
        verifyDpopProof(unsigned({ alg, typ: "dpop+jwt", jwk: key.publicJwk }, claims), check),
        "alg",
      );
    }
    const ed = await dpopKey("EdDSA");
    const proof = await dpopProof(ed, base);
    assert.equal((await verifyDpopProof(proof, check)).jkt, ed.jkt, "EdDSA is on the default list");
    await rejects(verifyDpopProof(proof, { ...check, algorithms: ["ES256"] }), "alg");
    // An allow-list cannot add what svc never accepts.
    await rejects(
      verifyDpopProof(unsigned({ alg: "HS256", typ: "dpop+jwt", jwk: { kty: "oct", k: "AAAA" } }, claims), {
        ...check,
        algorithms: ["HS256"],
      }),
      "alg",
    );
  });
  await t.step("jwk: missing, private, symmetric, of another curve, or oversized", async () => {
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, header: { jwk: undefined } }), check),
      "jwk",
    );
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, header: { jwk: privateJwk } }), check),
      "jwk",
    );
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, header: { jwk: { kty: "oct", k: "AAAA" } } }), check),
      "jwk",
    );
    const p384 = await dpopKey("ES384");
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, header: { jwk: p384.publicJwk } }), check),
      "jwk",
    );
    await rejects(
      verifyDpopProof(
        await dpopProof(key, { ...base, header: { jwk: { ...key.publicJwk, pad: "x".repeat(3000) } } }),
        check,
      ),
      "jwk",
    );
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, header: { jwk: "key" } }), check), "jwk");
  });
  await t.step("signature: signed by another key than the jwk names, or altered", async () => {
    await rejects(
      verifyDpopProof(await dpopProof(other, { ...base, header: { jwk: key.publicJwk } }), check),
      "signature",
    );
    const proof = await dpopProof(key, base);
    const [h, , s] = proof.split(".");
    const altered = toBase64Url(utf8(JSON.stringify({ jti: "x", htm: "POST", htu: URL_, iat: NOW_S + 1 })));
    await rejects(verifyDpopProof(`${h}.${altered}.${s}`, check), "signature");
  });
  await t.step("claims: a required claim missing or of the wrong type", async () => {
    for (
      const claims of [
        { jti: undefined },
        { jti: "" },
        { jti: "j".repeat(257) },
        { htm: undefined },
        { htu: undefined },
        { htu: 5 },
        { iat: undefined },
        { iat: "now" },
        { ath: 7 },
        { nonce: 7 },
      ]
    ) {
      await rejects(verifyDpopProof(await dpopProof(key, { ...base, claims }), check), "claims");
    }
  });
  await t.step("htm: another method", async () => {
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, htm: "GET" }), check), "htm");
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, htm: "post" }), check), "htm");
  });
  await t.step("htu: another URI; query and fragment ignored; normalized", async () => {
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, htu: `${URL_}x` }), check), "htu");
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, htu: "https://evil.example.com/oidc/token" }), check),
      "htu",
    );
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, htu: "http://id.example.com/oidc/token" }), check),
      "htu",
    );
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, htu: "not a url" }), check), "htu");
    for (
      const htu of [
        `${URL_}?a=1#f`,
        "HTTPS://ID.Example.COM:443/oidc/token",
        "https://id.example.com/oidc/x/../token",
      ]
    ) {
      await verifyDpopProof(await dpopProof(key, { ...base, htu }), check);
    }
    await verifyDpopProof(await dpopProof(key, base), { ...check, url: `${URL_}?q=1` });
  });
  await t.step("iat: older than the window or too far ahead", async () => {
    await verifyDpopProof(await dpopProof(key, { ...base, iat: NOW_S - 120 }), check);
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, iat: NOW_S - 121 }), check), "iat");
    await verifyDpopProof(await dpopProof(key, { ...base, iat: NOW_S + 10 }), check);
    await rejects(verifyDpopProof(await dpopProof(key, { ...base, iat: NOW_S + 11 }), check), "iat");
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, iat: NOW_S - 30 }), { ...check, maxAgeSeconds: 20 }),
      "iat",
    );
  });
  await t.step("ath: missing or not the access token's hash", async () => {
    const withToken = { ...check, accessToken: "token-a" };
    await verifyDpopProof(await dpopProof(key, { ...base, accessToken: "token-a" }), withToken);
    await rejects(verifyDpopProof(await dpopProof(key, base), withToken), "ath");
    await rejects(
      verifyDpopProof(await dpopProof(key, { ...base, accessToken: "token-b" }), withToken),
      "ath",
    );
  });
  await t.step("key_mismatch: a proof of another key than the token is bound to", async () => {
    await verifyDpopProof(await dpopProof(key, base), { ...check, boundJkt: key.jkt });
    await rejects(
      verifyDpopProof(await dpopProof(other, base), { ...check, boundJkt: key.jkt }),
      "key_mismatch",
    );
  });
  await t.step("nonce: missing, or not current, when nonces are required", async () => {
    const nonce = (value: string) => value === "good";
    await verifyDpopProof(await dpopProof(key, { ...base, nonce: "good" }), { ...check, nonce });
    await assert.rejects(
      verifyDpopProof(await dpopProof(key, base), { ...check, nonce }),
      (error) => error instanceof DpopNonceError && error.sent === false && error.code === "use_dpop_nonce",
    );
    await assert.rejects(
      verifyDpopProof(await dpopProof(key, { ...base, nonce: "stale" }), { ...check, nonce }),
      (error) => error instanceof DpopNonceError && error.sent === true,
    );
  });
});

Deno.test("accessTokenHash is the base64url SHA-256 of the token (RFC 9449 4.2 example)", () => {
  // The access token and ath of the RFC's Figure 7/8.
  assert.equal(
    accessTokenHash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
    "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo",
  );
});

Deno.test("normalizeHtu: equal URIs compare equal, other ones do not (property)", () => {
  const segment = fc.stringMatching(/^[a-z0-9_-]{1,8}$/);
  fc.assert(
    fc.property(
      fc.array(segment, { minLength: 1, maxLength: 4 }),
      fc.string({ maxLength: 12 }),
      (parts, query) => {
        const url = `https://id.example.com/${parts.join("/")}`;
        assert.equal(normalizeHtu(`${url}?${encodeURIComponent(query)}#frag`), normalizeHtu(url));
        assert.equal(normalizeHtu(url.replace("id.example.com", "ID.EXAMPLE.COM:443")), normalizeHtu(url));
        assert.notEqual(normalizeHtu(`${url}/x`), normalizeHtu(url));
      },
    ),
  );
});

Deno.test("verifyDpopProof: iat is accepted exactly within [now - maxAge, now + skew] (property)", async () => {
  const key: DpopTestKey = await dpopKey();
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: -400, max: 400 }),
      fc.integer({ min: 5, max: 300 }),
      async (offset, age) => {
        const proof = await dpopProof(key, { htm: "GET", htu: URL_, iat: NOW_S + offset });
        const accepted = await verifyDpopProof(proof, {
          method: "GET",
          url: URL_,
          now: NOW,
          maxAgeSeconds: age,
        })
          .then(() => true, (error) => {
            assert.ok(error instanceof DpopProofError && error.reason === "iat");
            return false;
          });
        assert.equal(accepted, offset >= -age && offset <= 10);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("verifyDpopProof: any altered character of a good proof is refused (property)", async () => {
  const key = await dpopKey();
  const proof = await dpopProof(key, { htm: "POST", htu: URL_, iat: NOW_S, jti: "p" });
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  await fc.assert(
    fc.asyncProperty(fc.nat(proof.length - 1), fc.nat(alphabet.length - 1), async (at, pick) => {
      if (proof[at] === ".") return;
      const replacement = alphabet[pick] === proof[at]
        ? alphabet[(pick + 1) % alphabet.length]
        : alphabet[pick];
      const altered = proof.slice(0, at) + replacement + proof.slice(at + 1);
      // The last character of a base64url segment may carry unused bits: an equal decoding is the same proof.
      const accepted = await verifyDpopProof(altered, { method: "POST", url: URL_, now: NOW }).then(
        (verified) => verified.jkt === key.jkt && verified.jti === "p",
        (error) => {
          assert.ok(error instanceof DpopProofError || error instanceof DpopNonceError);
          return false;
        },
      );
      if (accepted) {
        const segment = proof.slice(0, at).split(".").length - 1;
        const end = proof.split(".").slice(0, segment + 1).join(".").length - 1;
        assert.equal(at, end, "only a padding-bit change of a segment's last character may still verify");
      }
    }),
    { numRuns: 150 },
  );
});
