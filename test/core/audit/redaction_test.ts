import { strict as assert } from "node:assert";
import fc from "fast-check";
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

Deno.test("redaction: names (issue 25) as whole words, any case and spacing, escaped forms; JSON texts keep their shape", () => {
  const r = redaction({ emails: [], ipAddresses: [], names: ["Zoë O'Neil", "Ada", "Al"] });
  assert.equal(
    r.text("Zoë  O'Neil invited you. ZOË O'NEIL, not Zoëy O'Neill; Ada but not Adam or Canada."),
    `${ERASED} invited you. ${ERASED}, not Zoëy O'Neill; ${ERASED} but not Adam or Canada.`,
  );
  assert.equal(r.text("<p>Zoë O&#39;Neil</p>"), `<p>${ERASED}</p>`);
  assert.equal(r.text("Al and Alan"), "Al and Alan", "a name shorter than 3 characters is not searched");
  assert.ok(!r.needles.includes("Al"));
  assert.equal(r.json('{"reason": "for Ada", "n": 1}'), JSON.stringify({ reason: `for ${ERASED}`, n: 1 }));
  const untouched = '{"reason": "for Adam"}';
  assert.equal(r.json(untouched), untouched, "unchanged JSON is returned as given");
  assert.equal(r.json("not json: Ada"), `not json: ${ERASED}`);
});

Deno.test("redaction: property: a redacted text never contains the name as a whole word", () => {
  const word = fc.stringMatching(/^[A-Za-z]{3,8}$/);
  fc.assert(
    fc.property(
      word,
      fc.array(fc.oneof(word, fc.constantFrom(" ", ", ", ".")), { maxLength: 12 }),
      (name, parts) => {
        const text = parts.join(" ") + ` ${name} ` + parts.join("");
        const redacted = redaction({ emails: [`${name}@example.test`], ipAddresses: [], names: [name] }).text(
          text,
        );
        const words = redacted.split(/[^A-Za-z@.]+/).filter((w) => w !== "");
        return !words.some((w) => w.toLowerCase() === name.toLowerCase());
      },
    ),
  );
});
