/**
 * The sign-in page's `returnTo` guard (issue 14, no open redirect): examples, and the property
 * that whatever it accepts is on the page's origin or a configured one, as an http(s) URL.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { allowedReturnTo } from "../../console/account/return-to.ts";

const PAGE = "https://id.example.com";
const ORIGINS = ["https://app.example.com"];

Deno.test("returnTo: configured origins and own paths pass; everything else is refused", () => {
  assert.equal(
    allowedReturnTo("https://app.example.com/home?x=1", ORIGINS, PAGE),
    "https://app.example.com/home?x=1",
  );
  assert.equal(allowedReturnTo("/account/", ORIGINS, PAGE), "https://id.example.com/account/");
  assert.equal(allowedReturnTo("https://id.example.com/x", ORIGINS, PAGE), "https://id.example.com/x");
  for (
    const bad of [
      "",
      "https://evil.example/steal",
      "//evil.example/x",
      "/\\evil.example",
      "\\\\evil.example",
      "javascript:alert(1)",
      "data:text/html,hi",
      "https://user:pw@app.example.com/",
      "https://app.example.com.evil.example/",
      "http://app.example.com/",
      "account",
      " https://evil.example",
      "/\tevil",
    ]
  ) {
    assert.equal(allowedReturnTo(bad, ORIGINS, PAGE), null, JSON.stringify(bad));
  }
});

Deno.test("returnTo: anything accepted stays on the page's origin or a configured one (property)", () => {
  const candidate = fc.oneof(
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.string(),
    fc.constantFrom("//", "/\\", "https://", "http://", "javascript:", "/").chain((p) =>
      fc.string().map((s) => p + s)
    ),
  );
  fc.assert(
    fc.property(candidate, (returnTo) => {
      const out = allowedReturnTo(returnTo, ORIGINS, PAGE);
      if (out === null) return true;
      const url = new URL(out);
      return (url.origin === PAGE || ORIGINS.includes(url.origin)) &&
        (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password;
    }),
    { numRuns: 2000 },
  );
});
