/**
 * `publicRoot`: the one rule for svc's public URL under a path base, as properties over base URLs
 * with and without a path and with and without trailing slashes.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { publicRoot, publicUrl } from "../../../core/net/public-url.ts";

const segment = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
const mount = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => `/${parts.join("/")}`);
const origin = fc.constantFrom("https://id.example.com", "http://127.0.0.1:8080", "http://[::1]:9000");
const slashes = fc.constantFrom("", "/", "//");

Deno.test("publicRoot: the path base appears once at the end, whether or not the base URL has it", () => {
  fc.assert(fc.property(origin, mount, slashes, fc.boolean(), (host, base, trailing, written) => {
    const baseUrl = `${host}${written ? base : ""}${trailing}`;
    const root = publicRoot({ baseUrl, pathBase: base });
    assert.equal(root, `${host}${base}`);
    assert.equal(new URL(root).pathname, base, root);
    // Idempotent: the root taken as the base URL gives itself.
    assert.equal(publicRoot({ baseUrl: root, pathBase: base }), root);
  }));
});

Deno.test("publicRoot: without a path base the base URL (and its path) is kept", () => {
  fc.assert(fc.property(origin, fc.option(mount, { nil: "" }), slashes, (host, path, trailing) => {
    assert.equal(publicRoot({ baseUrl: `${host}${path}${trailing}`, pathBase: "" }), `${host}${path}`);
  }));
});

Deno.test("publicRoot: a base URL with another path gets the path base appended", () => {
  assert.equal(publicRoot({ baseUrl: "https://x.test/auth", pathBase: "/idp" }), "https://x.test/auth/idp");
  assert.equal(publicRoot({ baseUrl: "https://x.test/a/idp", pathBase: "/idp" }), "https://x.test/a/idp");
  // A path that merely ends with the same letters is another path.
  assert.equal(publicRoot({ baseUrl: "https://x.test/xidp", pathBase: "/idp" }), "https://x.test/xidp/idp");
  assert.equal(
    publicUrl({ baseUrl: "https://x.test/idp", pathBase: "/idp" }, "/oidc/token"),
    "https://x.test/idp/oidc/token",
  );
  assert.equal(publicUrl({ baseUrl: "https://x.test", pathBase: "" }, "scim/v2"), "https://x.test/scim/v2");
});
