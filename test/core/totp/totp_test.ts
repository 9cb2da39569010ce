import { strict as assert } from "node:assert";
import fc from "fast-check";
import { utf8 } from "../../../core/encoding.ts";
import {
  findTotpStep,
  hotp,
  matchingTotpSteps,
  normalizeTotpCode,
  type TotpAlgorithm,
  totpCode,
  totpStep,
} from "../../../core/totp/totp.ts";

// RFC 6238 Appendix B: the seeds are the ASCII digits 1234567890 repeated to the hash's size.
const SEEDS: Record<TotpAlgorithm, Uint8Array> = {
  SHA1: utf8("12345678901234567890"),
  SHA256: utf8("12345678901234567890123456789012"),
  SHA512: utf8("1234567890123456789012345678901234567890123456789012345678901234"),
};

// [unix seconds, T (hex), SHA1, SHA256, SHA512], 8 digits, 30 s step.
const APPENDIX_B: [number, string, string, string, string][] = [
  [59, "0000000000000001", "94287082", "46119246", "90693936"],
  [1111111109, "00000000023523EC", "07081804", "68084774", "25091201"],
  [1111111111, "00000000023523ED", "14050471", "67062674", "99943326"],
  [1234567890, "000000000273EF07", "89005924", "91819424", "93441116"],
  [2000000000, "0000000003F940AA", "69279037", "90698825", "38618901"],
  [20000000000, "0000000027BC86AA", "65353130", "77737706", "47863826"],
];

Deno.test("totp: RFC 6238 Appendix B, SHA1 rows (8 digits, and the 6-digit code is its last 6 digits)", () => {
  for (const [seconds, t, sha1] of APPENDIX_B) {
    const ms = seconds * 1000;
    assert.equal(totpStep(ms), parseInt(t, 16), `T at ${seconds}`);
    assert.equal(totpCode(SEEDS.SHA1, ms, { digits: 8 }), sha1, `8 digits at ${seconds}`);
    assert.equal(totpCode(SEEDS.SHA1, ms), sha1.slice(-6), `6 digits at ${seconds}`);
    assert.equal(totpCode(SEEDS.SHA1, ms, { digits: 7 }), sha1.slice(-7), `7 digits at ${seconds}`);
    // Within the step the code holds: the step's first and last second give the same code.
    const start = parseInt(t, 16) * 30 * 1000;
    assert.equal(totpCode(SEEDS.SHA1, start, { digits: 8 }), sha1);
    assert.equal(totpCode(SEEDS.SHA1, start + 29_999, { digits: 8 }), sha1);
  }
});

Deno.test("totp: RFC 6238 Appendix B, SHA256 and SHA512 rows", () => {
  for (const [seconds, , , sha256, sha512] of APPENDIX_B) {
    assert.equal(totpCode(SEEDS.SHA256, seconds * 1000, { digits: 8, algorithm: "SHA256" }), sha256);
    assert.equal(totpCode(SEEDS.SHA512, seconds * 1000, { digits: 8, algorithm: "SHA512" }), sha512);
  }
});

Deno.test("hotp: RFC 4226 Appendix D", () => {
  const expected = [
    "755224",
    "287082",
    "359152",
    "969429",
    "338314",
    "254676",
    "287922",
    "162583",
    "399871",
    "520489",
  ];
  expected.forEach((code, counter) => assert.equal(hotp(SEEDS.SHA1, counter), code));
  assert.throws(() => hotp(SEEDS.SHA1, -1), RangeError);
  assert.throws(() => hotp(SEEDS.SHA1, 1, { digits: 5, algorithm: "SHA1" }), RangeError);
});

Deno.test("totp: codes are normalized (spaces) and must be exactly the digits", () => {
  assert.equal(normalizeTotpCode(" 287 082 "), "287082");
  assert.equal(normalizeTotpCode("28708"), null);
  assert.equal(normalizeTotpCode("2870822"), null);
  assert.equal(normalizeTotpCode("28708a"), null);
  assert.equal(normalizeTotpCode("２８７０８２"), null, "full-width digits are not digits");
  assert.equal(normalizeTotpCode("12345678", 8), "12345678");
});

Deno.test("totp: the drift window is the current step plus or minus one", () => {
  const secret = SEEDS.SHA1;
  const now = 1111111111 * 1000;
  const step = totpStep(now);
  for (const offset of [-3, -2, -1, 0, 1, 2, 3]) {
    const code = hotp(secret, step + offset);
    const matched = matchingTotpSteps(secret, code, now);
    assert.deepEqual(matched, Math.abs(offset) <= 1 ? [step + offset] : [], `offset ${offset}`);
  }
  // A drift of 0 accepts only the current step; a drift of 2 reaches two steps.
  assert.deepEqual(matchingTotpSteps(secret, hotp(secret, step - 1), now, { driftSteps: 0 }), []);
  assert.deepEqual(matchingTotpSteps(secret, hotp(secret, step - 2), now, { driftSteps: 2 }), [step - 2]);
  // `after` excludes the last accepted step and older ones.
  assert.equal(findTotpStep(secret, hotp(secret, step), now, {}, step), null);
  assert.equal(findTotpStep(secret, hotp(secret, step), now, {}, step - 1), step);
  assert.equal(findTotpStep(secret, hotp(secret, step + 1), now, {}, step), step + 1);
  // Garbage never matches; steps before the epoch are skipped.
  assert.deepEqual(matchingTotpSteps(secret, "abcdef", now), []);
  assert.deepEqual(matchingTotpSteps(secret, hotp(secret, 0), 0), [0]);
});

Deno.test("totp: property: a code is accepted exactly within its window (any secret, time, offset)", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 10, maxLength: 64 }),
      fc.integer({ min: 300_000, max: 4_000_000_000_000 }),
      fc.integer({ min: -4, max: 4 }),
      (secret, now, offset) => {
        const step = totpStep(now) + offset;
        const matched = matchingTotpSteps(secret, hotp(secret, step), now);
        if (Math.abs(offset) <= 1) return matched.includes(step);
        // Outside the window only an accidental collision with a window step could match.
        return !matched.includes(step);
      },
    ),
    { numRuns: 300 },
  );
});

/** An independent HOTP over WebCrypto with a BigInt counter, to check the 64-bit counter encoding. */
async function referenceHotp(secret: Uint8Array, counter: number, digits: number): Promise<string> {
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(counter));
  const key = await crypto.subtle.importKey(
    "raw",
    secret as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-1" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  const o = mac[19] & 0xf;
  const n = ((mac[o] & 0x7f) * 2 ** 24) + (mac[o + 1] << 16) + (mac[o + 2] << 8) + mac[o + 3];
  return String(n % 10 ** digits).padStart(digits, "0");
}

Deno.test("hotp: property: agrees with a WebCrypto reference for counters up to 2^53 (high word included)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uint8Array({ minLength: 1, maxLength: 64 }),
      fc.oneof(fc.integer({ min: 0, max: 2 ** 32 + 10 }), fc.maxSafeNat()),
      fc.integer({ min: 6, max: 8 }),
      async (secret, counter, digits) => {
        assert.equal(
          hotp(secret, counter, { digits, algorithm: "SHA1" }),
          await referenceHotp(secret, counter, digits),
        );
      },
    ),
    { numRuns: 200 },
  );
});
