/**
 * `cryptoRandom` (small requests served from a pool drawn ahead) and `randomUuid`.
 */
import assert from "node:assert/strict";
import { cryptoRandom, randomToken, randomUuid, seededRandom } from "../../core/random.ts";

Deno.test("cryptoRandom: every request gets bytes of its own, across pool refills", () => {
  const seen = new Set<string>();
  // 16-byte draws over many 4 KiB pools, mixed with odd sizes that straddle a refill.
  for (let i = 0; i < 5000; i++) {
    const bytes = cryptoRandom.bytes(i % 7 === 0 ? 33 : 16);
    assert.equal(bytes.length, i % 7 === 0 ? 33 : 16);
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    assert.ok(!seen.has(hex), "a draw repeated");
    seen.add(hex);
  }
  const a = cryptoRandom.bytes(16);
  const b = cryptoRandom.bytes(16);
  a.fill(0); // a caller writing into its bytes does not touch anyone else's
  assert.ok(b.some((x) => x !== 0));
  assert.notDeepEqual(cryptoRandom.bytes(16), cryptoRandom.bytes(16));
});

Deno.test("cryptoRandom: sizes from 0 to past the 65536-byte limit of one getRandomValues", () => {
  assert.equal(cryptoRandom.bytes(0).length, 0);
  assert.equal(cryptoRandom.bytes(256).length, 256);
  assert.equal(cryptoRandom.bytes(257).length, 257);
  const big = cryptoRandom.bytes(70_000);
  assert.equal(big.length, 70_000);
  // The tail past the first 65536 bytes is drawn too (not left zero).
  assert.ok(big.subarray(65_536).some((x) => x !== 0));
});

Deno.test("randomUuid: version 4, variant 1, the same ids from the same bytes as before", () => {
  const random = seededRandom(7);
  // Pinned from the implementation before the hex table: the same bytes, the same text.
  assert.equal(randomUuid(random), "dbc9be4b-170d-4e58-bcce-9425c1b9a1eb");
  assert.equal(randomUuid(random), "5695d193-b46b-4588-9fd6-10db150ccde3");
  for (let i = 0; i < 200; i++) {
    assert.match(
      randomUuid(cryptoRandom),
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  }
  assert.match(randomToken(cryptoRandom, 32), /^[A-Za-z0-9_-]{43}$/);
});
