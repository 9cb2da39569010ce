import { strict as assert } from "node:assert";
import fc from "fast-check";
import { DpopNonces } from "../../../core/dpop/nonce.ts";

const secret = new Uint8Array(32).fill(7);
const otherSecret = new Uint8Array(32).fill(8);

Deno.test("DpopNonces: a nonce is valid in its window and the next, then refused (property)", () => {
  const nonces = new DpopNonces(secret, 300);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 4e12 }),
      fc.integer({ min: 0, max: 2000_000 }),
      (issuedAt, later) => {
        const nonce = nonces.current(issuedAt);
        const issuedWindow = Math.floor(issuedAt / 300_000);
        const checkWindow = Math.floor((issuedAt + later) / 300_000);
        assert.equal(nonces.valid(nonce, issuedAt + later), checkWindow - issuedWindow <= 1);
      },
    ),
  );
});

Deno.test("DpopNonces: another secret's nonces and altered nonces are refused (property)", () => {
  const nonces = new DpopNonces(secret);
  const other = new DpopNonces(otherSecret);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 4e12 }),
      fc.nat(60),
      fc.string({ minLength: 1, maxLength: 1 }),
      (now, at, c) => {
        assert.equal(nonces.valid(other.current(now), now), false);
        const nonce = nonces.current(now);
        const position = at % nonce.length;
        const altered = nonce.slice(0, position) + c + nonce.slice(position + 1);
        if (altered !== nonce) assert.equal(nonces.valid(altered, now), false);
      },
    ),
  );
  assert.equal(nonces.valid("", 0), false);
  assert.equal(nonces.valid("x".repeat(5000), 0), false);
});

Deno.test("DpopNonces: instances with one secret agree; the nonce rotates with the window", () => {
  const a = new DpopNonces(secret, 60);
  const b = new DpopNonces(secret, 60);
  assert.equal(a.current(1_000), b.current(59_000));
  assert.notEqual(a.current(1_000), a.current(61_000));
  assert.ok(b.valid(a.current(1_000), 61_000));
  assert.throws(() => new DpopNonces(new Uint8Array(16)));
});
