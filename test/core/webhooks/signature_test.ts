import { strict as assert } from "node:assert";
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { signWebhookPayload, verifyWebhookSignature } from "../../../core/webhooks/signature.ts";
import { independentVerify } from "../../support/webhook-receiver.ts";

const SECRET = "whsec_test_secret_0123456789";
const OLD = "whsec_old_secret";
const T = 1_767_225_600; // 2026-01-01T00:00:00Z

Deno.test("signWebhookPayload: t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw body>'>", async () => {
  const body = '{"kind":"login.succeeded","data":{"x":1}}';
  const header = await signWebhookPayload(body, [SECRET], T);
  const expected = createHmac("sha256", SECRET).update(`${T}.${body}`).digest("hex");
  assert.equal(header, `t=${T},v1=${expected}`);
});

Deno.test("during a rotation both secrets sign, as two v1 values (current first)", async () => {
  const header = await signWebhookPayload("{}", [SECRET, OLD], T);
  const parts = header.split(",");
  assert.equal(parts.length, 3);
  assert.equal(parts[1], `v1=${createHmac("sha256", SECRET).update(`${T}.{}`).digest("hex")}`);
  assert.equal(parts[2], `v1=${createHmac("sha256", OLD).update(`${T}.{}`).digest("hex")}`);
  assert.equal(independentVerify(header, "{}", [OLD], T), true);
  assert.equal(independentVerify(header, "{}", [SECRET], T), true);
});

Deno.test("property: the independent verifier accepts what svc signs, and svc's verifier agrees", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.integer({ min: 0, max: 4_000_000_000 }),
      async (body, secretTail, t) => {
        const secret = `whsec_${secretTail}`;
        const header = await signWebhookPayload(body, [secret], t);
        assert.equal(independentVerify(header, body, [secret], t), true);
        assert.equal(independentVerify(header, body + "x", [secret], t), false);
        const ok = await verifyWebhookSignature({ body, header, secret, now: t * 1000 });
        assert.deepEqual(ok, { ok: true, timestamp: t });
        const bytes = await verifyWebhookSignature({
          body: new TextEncoder().encode(body),
          header,
          secret,
          now: t * 1000,
        });
        assert.equal(bytes.ok, true);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("verifyWebhookSignature refuses tampering, wrong secrets, stale and malformed headers", async () => {
  const body = '{"a":1}';
  const header = await signWebhookPayload(body, [SECRET], T);
  const at = (seconds: number) => (T + seconds) * 1000;
  assert.deepEqual(await verifyWebhookSignature({ body: '{"a":2}', header, secret: SECRET, now: at(0) }), {
    ok: false,
    reason: "no_matching_signature",
  });
  assert.equal((await verifyWebhookSignature({ body, header, secret: "whsec_other", now: at(0) })).ok, false);
  assert.equal(
    (await verifyWebhookSignature({ body, header, secret: ["whsec_x", SECRET], now: at(0) })).ok,
    true,
  );
  // Default tolerance: 300 seconds either way.
  assert.equal((await verifyWebhookSignature({ body, header, secret: SECRET, now: at(300) })).ok, true);
  assert.deepEqual(await verifyWebhookSignature({ body, header, secret: SECRET, now: at(301) }), {
    ok: false,
    reason: "timestamp_outside_tolerance",
  });
  assert.equal((await verifyWebhookSignature({ body, header, secret: SECRET, now: at(-301) })).ok, false);
  assert.equal(
    (await verifyWebhookSignature({ body, header, secret: SECRET, now: at(900), toleranceSeconds: 1000 })).ok,
    true,
  );
  for (const bad of ["", "v1=abc", `t=abc,v1=${"0".repeat(64)}`, `t=${T}`, `t=${T},v1=zz`]) {
    const result = await verifyWebhookSignature({ body, header: bad, secret: SECRET, now: at(0) });
    assert.equal(result.ok, false, bad);
  }
  assert.deepEqual(await verifyWebhookSignature({ body, header: null, secret: SECRET, now: at(0) }), {
    ok: false,
    reason: "missing_header",
  });
  // Unknown schemes (v0=…) are ignored; a v1 among them still counts.
  const v1 = header.split(",")[1];
  assert.equal(
    (await verifyWebhookSignature({ body, header: `t=${T},v0=deadbeef,${v1}`, secret: SECRET, now: at(0) }))
      .ok,
    true,
  );
});
