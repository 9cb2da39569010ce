import { strict as assert } from "node:assert";
import fc from "fast-check";
import { fromBase64Url } from "../../../core/encoding.ts";
import {
  isFirstFactorEligible,
  passkeyFactor,
  PasskeyLoginError,
  PasskeyNotEligibleError,
  readAuthenticatorData,
  signCountOutcome,
} from "../../../core/passkeys/rules.ts";
import { recorded } from "./fixtures.ts";

Deno.test("authenticator data of recorded assertions: UV flag and sign count", () => {
  const [first, second] = recorded.userVerifying.assertions;
  const data = (a: typeof first) =>
    readAuthenticatorData(fromBase64Url(a.response.response.authenticatorData))!;
  assert.deepEqual(
    { up: data(first).userPresent, uv: data(first).userVerified, count: data(first).signCount },
    { up: true, uv: true, count: 2 },
  );
  assert.equal(data(second).signCount, 3);
  assert.equal(data(recorded.userVerifying.cloneAssertion).signCount, 1);
  const plain = data(recorded.withoutUserVerification.assertion);
  assert.deepEqual({ up: plain.userPresent, uv: plain.userVerified }, { up: true, uv: false });
  assert.equal(readAuthenticatorData(new Uint8Array(36)), null);
});

Deno.test("first-factor eligibility: a UV-capable credential AND UV in this assertion", () => {
  const table: [boolean, boolean, boolean][] = [
    [true, true, true],
    [true, false, false],
    [false, true, false],
    [false, false, false],
  ];
  for (const [userVerificationCapable, userVerified, eligible] of table) {
    assert.equal(isFirstFactorEligible({ userVerificationCapable, userVerified }), eligible);
    assert.equal(passkeyFactor({ userVerificationCapable, userVerified }), eligible ? "first" : "second");
  }
  // The recorded assertions: the UV authenticator's is eligible, the other's is not.
  const uv = readAuthenticatorData(
    fromBase64Url(recorded.userVerifying.assertions[0].response.response.authenticatorData),
  )!;
  const plain = readAuthenticatorData(
    fromBase64Url(recorded.withoutUserVerification.assertion.response.response.authenticatorData),
  )!;
  assert.equal(isFirstFactorEligible({ userVerificationCapable: true, userVerified: uv.userVerified }), true);
  assert.equal(
    isFirstFactorEligible({ userVerificationCapable: false, userVerified: plain.userVerified }),
    false,
  );
});

Deno.test("sign count: only forward; 0 staying 0 is not a regression", () => {
  assert.equal(signCountOutcome(0, 0), "no_counter");
  assert.equal(signCountOutcome(0, 1), "advanced");
  assert.equal(signCountOutcome(5, 6), "advanced");
  assert.equal(signCountOutcome(5, 5), "regression");
  assert.equal(signCountOutcome(5, 1), "regression");
  assert.equal(signCountOutcome(5, 0), "regression");
  fc.assert(
    fc.property(fc.nat(2 ** 32 - 1), fc.nat(2 ** 32 - 1), (stored, presented) => {
      const outcome = signCountOutcome(stored, presented);
      if (stored === 0 && presented === 0) return outcome === "no_counter";
      return (outcome === "advanced") === (presented > stored) &&
        (outcome === "regression") === (presented <= stored);
    }),
  );
});

Deno.test("errors: passkey_not_eligible is 401; every login failure is the same generic 401", () => {
  const notEligible = new PasskeyNotEligibleError();
  assert.deepEqual([notEligible.code, notEligible.status], ["passkey_not_eligible", 401]);
  const a = new PasskeyLoginError("sign count regression");
  const b = new PasskeyLoginError("unknown credential");
  assert.deepEqual([a.code, a.status, a.message], [b.code, b.status, b.message]);
  assert.equal(a.code, "invalid_credentials");
});
