import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ValidationError } from "../../../core/errors.ts";
import { utf8 } from "../../../core/encoding.ts";
import { buildOtpauthUri, parseOtpauthUri } from "../../../core/totp/uri.ts";

Deno.test("otpauth: the key URI names issuer, account, secret, algorithm, digits and period", () => {
  const uri = buildOtpauthUri({
    issuer: "Example Inc",
    account: "alice+mfa@example.com",
    secret: utf8("12345678901234567890"),
  });
  assert.equal(
    uri,
    "otpauth://totp/Example%20Inc:alice%2Bmfa%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" +
      "&issuer=Example%20Inc&algorithm=SHA1&digits=6&period=30",
  );
  const parsed = parseOtpauthUri(uri);
  assert.equal(parsed.issuer, "Example Inc");
  assert.equal(parsed.account, "alice+mfa@example.com");
  assert.deepEqual(parsed.secret, utf8("12345678901234567890"));
  assert.deepEqual([parsed.algorithm, parsed.digits, parsed.period], ["SHA1", 6, 30]);

  const custom = buildOtpauthUri({
    issuer: "svc",
    account: "bob",
    secret: "gezdgnbv gy3tqojq",
    digits: 8,
    period: 60,
    algorithm: "SHA256",
  });
  assert.match(custom, /secret=GEZDGNBVGY3TQOJQ&issuer=svc&algorithm=SHA256&digits=8&period=60$/);
});

Deno.test("otpauth: colons and empty labels are refused; foreign URIs do not parse", () => {
  const secret = new Uint8Array(20);
  assert.throws(() => buildOtpauthUri({ issuer: "a:b", account: "x", secret }), ValidationError);
  assert.throws(() => buildOtpauthUri({ issuer: "svc", account: "x:y", secret }), ValidationError);
  assert.throws(() => buildOtpauthUri({ issuer: " ", account: "x", secret }), ValidationError);
  assert.throws(() => buildOtpauthUri({ issuer: "svc", account: "a\nb", secret }), ValidationError);
  assert.throws(() => parseOtpauthUri("otpauth://hotp/svc:x?secret=AAAA"), ValidationError);
  assert.throws(() => parseOtpauthUri("otpauth://totp/svc:x"), ValidationError);
  assert.throws(() => parseOtpauthUri("otpauth://totp/svc:x?secret=1111"), ValidationError);
  assert.throws(() => parseOtpauthUri("otpauth://totp/svc:x?secret=AAAAAAAA&digits=5"), ValidationError);
  // Defaults and a label-only issuer.
  const p = parseOtpauthUri("otpauth://totp/Acme:carol?secret=AAAAAAAA");
  assert.deepEqual([p.issuer, p.account, p.digits, p.period, p.algorithm], ["Acme", "carol", 6, 30, "SHA1"]);
});

Deno.test("otpauth: property: build then parse round-trips any label without a colon", () => {
  const label = fc.string({ minLength: 1, maxLength: 30 }).filter((s) =>
    !s.includes(":") && s.trim() !== "" && ![...s].some((c) => c.charCodeAt(0) < 0x20) && s.trim() === s
  );
  fc.assert(
    fc.property(label, label, fc.uint8Array({ minLength: 1, maxLength: 40 }), (issuer, account, secret) => {
      const parsed = parseOtpauthUri(buildOtpauthUri({ issuer, account, secret }));
      assert.equal(parsed.issuer, issuer);
      assert.equal(parsed.account, account);
      assert.deepEqual(parsed.secret, secret);
    }),
    { numRuns: 200 },
  );
});
