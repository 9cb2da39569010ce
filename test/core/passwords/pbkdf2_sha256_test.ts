/**
 * `pbkdf2-sha256` (verify-only) in both stored forms, against hashes made by the original
 * implementations:
 *
 * - passlib's modular crypt form: `passlib/tests/test_handlers_pbkdf2.py`, class
 *   `pbkdf2_sha256_test`, `known_correct_hashes` (and the malformed shapes of its
 *   `pbkdf2_sha1_test.known_malformed_hashes`, transposed to the sha256 handler);
 * - the canonical PHC form: RustCrypto `password-hashes`, `pbkdf2/tests/phc.rs`
 *   (`EXPECTED_HASH`) and `pbkdf2/tests/simple.rs` (P="password", S="salt", c=4096, dkLen=32,
 *   hex output c5e478d5…134a, encoded here as a PHC string).
 */
import assert from "node:assert/strict";
import { toBase64 } from "../../../core/encoding.ts";
import { fromHex } from "../../../core/encoding.ts";
import { parsePbkdf2Sha256, verifyPbkdf2Sha256 } from "../../../core/passwords/pbkdf2-sha256.ts";
import { verifyPasswordHash } from "../../../core/passwords/registry.ts";

const UPASS_WAV = "\u0399\u03c9\u03b1\u03bd\u03bd\u03b7\u03c2";

const PASSLIB: [string, string][] = [
  ["password", "$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ"],
  [UPASS_WAV, "$pbkdf2-sha256$1212$3SABFJGDtyhrQMVt1uABPw$WyaUoqCLgvz97s523nF4iuOqZNbp5Nt8do/cuaa7AiI"],
];

const RUSTCRYPTO_SIMPLE_HEX = "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a";
const PHC: [string, string][] = [
  [
    "passwordPASSWORDpassword",
    "$pbkdf2-sha256$i=4096,l=40$c2FsdFNBTFRzYWx0U0FMVHNhbHRTQUxUc2FsdFNBTFRzYWx0$NIyJ28vTKy8y2BS4EW6EzysXNH68GAAYHE4qH7jdU+HGNVGMfaxH6Q",
  ],
  [
    "password",
    `$pbkdf2-sha256$i=4096,l=32$c2FsdA$${toBase64(fromHex(RUSTCRYPTO_SIMPLE_HEX)).replace(/=+$/, "")}`,
  ],
];

Deno.test("pbkdf2-sha256: passlib's known_correct_hashes verify", async () => {
  for (const [password, hash] of PASSLIB) {
    assert.equal(parsePbkdf2Sha256(hash)?.form, "passlib");
    assert.equal(await verifyPbkdf2Sha256(password, hash), true, hash);
    assert.equal(await verifyPasswordHash("pbkdf2-sha256", hash, password), true);
  }
});

Deno.test("pbkdf2-sha256: RustCrypto's canonical PHC vectors verify", async () => {
  for (const [password, hash] of PHC) {
    const parsed = parsePbkdf2Sha256(hash);
    assert.equal(parsed?.form, "phc");
    assert.equal(parsed?.iterations, 4096);
    assert.equal(await verifyPbkdf2Sha256(password, hash), true, hash);
  }
  // `,l=` is optional: the key length is then the decoded hash's.
  assert.equal(await verifyPbkdf2Sha256(PHC[1][0], PHC[1][1].replace(",l=32", "")), true);
});

Deno.test("pbkdf2-sha256: must-fail cases", async () => {
  const [pw, passlib] = PASSLIB[0];
  const [pw2, phc] = PHC[0];
  const cases: [string, string, string][] = [
    [passlib, "Password", "passlib: wrong password"],
    [passlib, UPASS_WAV, "passlib: the other vector's password"],
    [passlib.replace("$1212$", "$01212$"), pw, "passlib: zero-padded rounds"],
    [passlib.replace("$1212$", "$$"), pw, "passlib: empty rounds"],
    [passlib.replace("$1212$", "$1213$"), pw, "passlib: other rounds"],
    [passlib + "$", pw, "passlib: too many fields"],
    [passlib + "A", pw, "passlib: trailing character"],
    [passlib.slice(0, -1), pw, "passlib: truncated checksum"],
    [passlib.slice(0, -2), pw, "passlib: truncated checksum (whole byte)"],
    [passlib.replace(".tmQ", "+tmQ"), pw, "passlib: `+` is not ab64"],
    [passlib.replace("pbkdf2-sha256", "pbkdf2-sha512"), pw, "another handler's prefix"],
    [phc, "passwordPASSWORDpassworD", "phc: wrong password"],
    [phc.replace("l=40", "l=32"), pw2, "phc: l disagrees with the hash length"],
    [phc.replace("i=4096", "i=04096"), pw2, "phc: zero-padded iterations"],
    [phc.replace("i=4096,l=40", "l=40,i=4096"), pw2, "phc: parameters out of order"],
    [phc + "=", pw2, "phc: padding"],
    [phc + "$", pw2, "phc: trailing field"],
    [phc.slice(0, -1), pw2, "phc: truncated hash"],
    [phc.replace("+", "."), pw2, "phc: ab64 alphabet in the PHC form"],
    [phc.replace("$pbkdf2-sha256$", "$pbkdf2-sha256$ "), pw2, "phc: whitespace"],
    ["", pw, "empty"],
  ];
  for (const [hash, password, why] of cases) {
    assert.equal(await verifyPbkdf2Sha256(password, hash), false, why);
  }
});
