/**
 * `formFields`: the token, revocation, introspection, PAR and logout endpoints' form, read as
 * text and split by `URLSearchParams` (before: Hono's `parseBody({ all: true })` through a
 * `FormData`), with the same refusals: repeated fields, `name[]` fields, U+0000, values over
 * 8192 characters, and anything but `application/x-www-form-urlencoded`.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { formFields } from "../../../plugins/oidc-provider/shared.ts";

function formApp() {
  const app = new Hono();
  app.post("/form", async (c) => {
    const form = await formFields(c);
    // Asked twice, as the token endpoint does: the same fields, read once.
    assert.equal(await formFields(c), form);
    return c.json({ form });
  });
  return app;
}

async function post(body: string, type = "application/x-www-form-urlencoded"): Promise<unknown> {
  const res = await formApp().request("/form", { method: "POST", headers: { "Content-Type": type }, body });
  assert.equal(res.status, 200);
  return (await res.json()).form;
}

Deno.test("formFields: the fields of a urlencoded form, decoded as Request.formData() decodes them", async () => {
  assert.deepEqual(
    await post("grant_type=refresh_token&refresh_token=srt_a%2Bb&scope=openid+email&empty="),
    { grant_type: "refresh_token", refresh_token: "srt_a+b", scope: "openid email", empty: "" },
  );
  assert.deepEqual(await post("a=%C3%A9t%C3%A9", "application/x-www-form-urlencoded; charset=UTF-8"), {
    a: "été",
  });
  assert.deepEqual(await post(""), {});
});

Deno.test("formFields: repeated fields, name[] fields, U+0000 and values over 8192 characters are refused", async () => {
  for (
    const body of [
      "grant_type=refresh_token&grant_type=client_credentials",
      "scope[]=openid",
      "a=1&b=2&a=1",
      "code=abc%00def",
      `code=${"x".repeat(8193)}`,
    ]
  ) {
    assert.equal(await post(body), null, body.slice(0, 60));
  }
  assert.deepEqual(await post(`code=${"x".repeat(8192)}`), { code: "x".repeat(8192) });
});

Deno.test("formFields: not a urlencoded form is null", async () => {
  assert.equal(await post('{"grant_type":"refresh_token"}', "application/json"), null);
  assert.equal(await post("grant_type=refresh_token", "text/plain"), null);
});
