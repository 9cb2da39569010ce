/**
 * The provider's issuer under a path base (`issuer.ts`): the base appears exactly once at the end
 * of the issuer's path, whether `SVC_BASE_URL` carries it or not, and redirects within svc use
 * the issuer's path (property).
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { providerRoot, rootPath } from "../../../plugins/oidc-provider/issuer.ts";

const segment = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
const mount = fc.array(segment, { minLength: 0, maxLength: 3 }).map((parts) =>
  parts.map((p) => `/${p}`).join("")
);
const host = fc.constantFrom("https://id.example.com", "http://127.0.0.1:8080", "https://example.org:8443");

Deno.test("oidc-provider issuer: the path base once, with or without it in the base URL (property)", () => {
  fc.assert(fc.property(host, mount, mount, (origin, prefix, base) => {
    // A proxy prefix that itself ends with the path base is indistinguishable from a base URL that
    // already carries the path base (the rule `issuer.ts` documents): such setups are not this
    // property's to judge.
    fc.pre(base === "" || !prefix.endsWith(base));
    // The base URL as written: the host, a proxy prefix, and sometimes the path base already.
    for (const baseUrl of [`${origin}${prefix}`, `${origin}${prefix}${base}`]) {
      const issuer = providerRoot(baseUrl, base);
      const path = new URL(issuer).pathname.replace(/\/$/, "");
      assert.ok(path.endsWith(base), `${issuer} ends with ${base}`);
      assert.ok(!(base !== "" && path.endsWith(`${base}${base}`)), `${issuer}: ${base} doubled`);
      assert.equal(new URL(issuer).origin, origin);
      assert.ok(!issuer.endsWith("/"), issuer);
      assert.equal(rootPath(issuer, "/oidc/consent"), `${path}/oidc/consent`);
    }
  }));
});

Deno.test("oidc-provider issuer: the issue's setups", () => {
  assert.equal(providerRoot("http://localhost:8080", "/idp"), "http://localhost:8080/idp");
  assert.equal(providerRoot("http://localhost:8080/idp", "/idp"), "http://localhost:8080/idp");
  assert.equal(providerRoot("http://localhost:8080", ""), "http://localhost:8080");
  assert.equal(providerRoot("http://localhost:8080/idp", ""), "http://localhost:8080/idp");
  assert.equal(rootPath("http://localhost:8080", "/oidc/consent"), "/oidc/consent");
});
