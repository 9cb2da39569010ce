import { strict as assert } from "node:assert";
import fc from "fast-check";
import { decodeBase32, encodeBase32 } from "../../../core/totp/base32.ts";
import { utf8 } from "../../../core/encoding.ts";

Deno.test("base32: RFC 4648 section 10 vectors", () => {
  const vectors: [string, string][] = [
    ["", ""],
    ["f", "MY======"],
    ["fo", "MZXQ===="],
    ["foo", "MZXW6==="],
    ["foob", "MZXW6YQ="],
    ["fooba", "MZXW6YTB"],
    ["foobar", "MZXW6YTBOI======"],
  ];
  for (const [plain, encoded] of vectors) {
    assert.equal(encodeBase32(utf8(plain), { padding: true }), encoded);
    assert.equal(encodeBase32(utf8(plain)), encoded.replace(/=+$/, ""));
    assert.deepEqual(decodeBase32(encoded), utf8(plain));
  }
  // The RFC 6238 SHA1 seed as apps know it.
  assert.equal(encodeBase32(utf8("12345678901234567890")), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
});

Deno.test("base32: decoding is lenient with case, spaces and hyphens, strict with the rest", () => {
  assert.deepEqual(decodeBase32("mzxw 6ytb-oi"), utf8("foobar"));
  assert.throws(() => decodeBase32("MZXW1"), TypeError, "1 is not in the alphabet");
  assert.throws(() => decodeBase32("M"), TypeError, "impossible length");
  assert.throws(() => decodeBase32("MZ"), TypeError, "non-zero trailing bits");
});

Deno.test("base32: property: decode(encode(bytes)) is bytes", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), fc.boolean(), (bytes, padding) => {
      const text = encodeBase32(bytes, { padding });
      assert.match(text, /^[A-Z2-7]*=*$/);
      assert.deepEqual(decodeBase32(text), bytes);
      assert.deepEqual(decodeBase32(text.toLowerCase()), bytes);
    }),
    { numRuns: 300 },
  );
});
