import { strict as assert } from "node:assert";
import { ERASED, redaction } from "../../../core/audit/redaction.ts";

Deno.test("redaction: whole addresses only, any case, escaped forms, webhook bodies keep their shape", () => {
  const r = redaction({ emails: ["o'hara@example.test"], ipAddresses: ["10.0.0.1", "2001:DB8::5"] });
  assert.equal(
    r.text("From 10.0.0.1, not 10.0.0.12 or 110.0.0.1; mail O'Hara@Example.test."),
    `From ${ERASED}, not 10.0.0.12 or 110.0.0.1; mail ${ERASED}.`,
  );
  assert.equal(r.text('<a href="mailto:o&#39;hara@example.test">'), `<a href="mailto:${ERASED}">`);
  assert.equal(r.text("lo'hara@example.test x@2001:db8::5"), "lo'hara@example.test x@" + ERASED);
  const body = JSON.stringify({ kind: "risk.evaluated", userId: null, data: { ip: "10.0.0.1", n: 3 } });
  assert.deepEqual(JSON.parse(r.webhookBody(body, "u1")), {
    kind: "risk.evaluated",
    userId: null,
    data: { ip: ERASED, n: 3 },
  });
  const own = JSON.stringify({ kind: "login.succeeded", userId: "u1", data: { device: "Firefox" } });
  assert.deepEqual(JSON.parse(r.webhookBody(own, "u1")).data, {});
  assert.equal(r.webhookBody("not json 10.0.0.1", "u1"), `not json ${ERASED}`);
});
