/**
 * `core/encoding.ts`: the table encoders (hex, base64, base64url) give what the runtime's own
 * encoders give, at every length around the table limit and the padding cases.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { fromBase64, fromBase64Url, fromHex, toBase64, toBase64Url, toHex } from "../../core/encoding.ts";
import { cryptoRandom, seededRandom } from "../../core/random.ts";

const lengths = [0, 1, 2, 3, 4, 5, 6, 31, 32, 33, 255, 256, 257, 4094, 4095, 4096, 4097, 4098, 70_000];

Deno.test("toBase64, toBase64Url, toHex: the same text as Buffer's encoders, and back", () => {
  const random = seededRandom(11);
  for (const length of lengths) {
    for (
      const bytes of [random.bytes(length), cryptoRandom.bytes(length), new Uint8Array(length).fill(255)]
    ) {
      const buffer = Buffer.from(bytes);
      assert.equal(toBase64(bytes), buffer.toString("base64"), `base64 of ${length} bytes`);
      assert.equal(toBase64Url(bytes), buffer.toString("base64url"), `base64url of ${length} bytes`);
      assert.equal(toHex(bytes), buffer.toString("hex"), `hex of ${length} bytes`);
      assert.deepEqual(fromBase64(toBase64(bytes)), bytes);
      assert.deepEqual(fromBase64Url(toBase64Url(bytes)), bytes);
      assert.deepEqual(fromHex(toHex(bytes)), bytes);
    }
  }
  // Every 12-bit value (both table halves), in both alphabets.
  const all = new Uint8Array(3 * 4096);
  for (let n = 0; n < 4096; n++) all.set([n >> 4, ((n & 15) << 4) | (n >> 8), n & 255], n * 3);
  assert.equal(toBase64Url(all.subarray(0, 4095)), Buffer.from(all.subarray(0, 4095)).toString("base64url"));
  assert.equal(toBase64(all), Buffer.from(all).toString("base64"));
});
