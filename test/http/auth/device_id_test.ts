import { strict as assert } from "node:assert";
import { Hono } from "hono";
import { seededRandom } from "../../../core/random.ts";
import { DEVICE_COOKIE, DEVICE_HEADER, issueDevice, requestDevice } from "../../../http/auth/device-id.ts";
import type { CookieSettings } from "../../../http/auth/cookies.ts";
import type { SvcEnv } from "../../../http/request-id.ts";

function app(settings: CookieSettings, fingerprint?: string) {
  const random = seededRandom(1);
  const hono = new Hono<SvcEnv>();
  hono.post("/sign-in", (c) => {
    const device = requestDevice(c, random, fingerprint);
    issueDevice(c, settings, random, c.req.header("X-Svc-Transport") === "cookie" ? "cookie" : "bearer");
    return c.json(device);
  });
  return hono;
}

Deno.test("device id: the cookie follows the cookie settings and the path base", async () => {
  const hono = app({ pathBase: "/svc", secure: true, sameSite: "Strict" });
  const res = await hono.request("/sign-in", { method: "POST", headers: { "X-Svc-Transport": "cookie" } });
  const device = await res.json();
  assert.equal(device.presented, false);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${DEVICE_COOKIE}=`))!;
  assert.equal(
    cookie,
    `${DEVICE_COOKIE}=${device.id}; Max-Age=34560000; Path=/svc; HttpOnly; Secure; SameSite=Strict`,
  );
  assert.equal(
    res.headers.get(DEVICE_HEADER),
    null,
    "a cookie-transport answer keeps the id in the cookie only",
  );
});

Deno.test("device id: cookie first, then the header, then the fingerprint; malformed values are not ids", async () => {
  const settings: CookieSettings = { pathBase: "", secure: false, sameSite: "Lax" };
  const id = (c: string) => c.repeat(43);
  const ask = async (headers: Record<string, string>, fingerprint?: string) => {
    const res = await app(settings, fingerprint).request("/sign-in", { method: "POST", headers });
    return { device: await res.json(), issued: res.headers.get(DEVICE_HEADER) };
  };
  let r = await ask({ Cookie: `${DEVICE_COOKIE}=${id("a")}`, [DEVICE_HEADER]: id("b") }, "fp");
  assert.deepEqual(r.device, { id: id("a"), presented: true });
  assert.equal(r.issued, null);
  r = await ask({ [DEVICE_HEADER]: id("b") }, "fp");
  assert.deepEqual(r.device, { id: id("b"), presented: true });
  r = await ask({ Cookie: `${DEVICE_COOKIE}=short`, [DEVICE_HEADER]: "has spaces in it, not an id" }, "fp");
  assert.deepEqual(r.device, { id: "fp", presented: true });
  r = await ask({ Cookie: `${DEVICE_COOKIE}=short` });
  assert.equal(r.device.presented, false);
  assert.match(r.device.id, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(r.issued, r.device.id);
});
