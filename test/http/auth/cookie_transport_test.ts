/**
 * The cookie transport: httpOnly session cookies, the double-submit CSRF check on every
 * state-changing request, cookie paths under a configured path base (the refresh cookie on
 * the refresh endpoint only), refresh through cookies, and Secure / SameSite settings.
 */
import { strict as assert } from "node:assert";
import { authBed, bearer } from "../../support/auth.ts";

interface SetCookie {
  name: string;
  value: string;
  attributes: Map<string, string>;
}

function setCookies(res: Response): Map<string, SetCookie> {
  const out = new Map<string, SetCookie>();
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(";").map((s) => s.trim());
    const eq = pair.indexOf("=");
    const attributes = new Map<string, string>();
    for (const a of attrs) {
      const i = a.indexOf("=");
      attributes.set((i < 0 ? a : a.slice(0, i)).toLowerCase(), i < 0 ? "" : a.slice(i + 1));
    }
    out.set(pair.slice(0, eq), { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes });
  }
  return out;
}

const cookieHeader = (cookies: Record<string, string>) =>
  Object.entries(cookies).map(([k, v]) => `${k}=${v}`).join("; ");

Deno.test("cookie transport", async (t) => {
  const bed = await authBed();
  const { realmId, userId } = await bed.realmWithUser();

  await t.step("GET with the access cookie needs no CSRF header; state changes do", async () => {
    const { tokens } = await bed.signIn({ realmId, userId });
    const cookies = { svc_at: tokens.accessToken, svc_csrf: "csrf-123" };
    let res = await bed.app.request("/profile/me", { headers: { Cookie: cookieHeader(cookies) } });
    assert.equal(res.status, 200);

    for (const headers of [{}, { "X-Svc-Csrf": "wrong" }, { "X-Svc-Csrf": "" }] as Record<string, string>[]) {
      res = await bed.app.request("/auth/logout-all", {
        method: "POST",
        headers: { Cookie: cookieHeader(cookies), ...headers },
      });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error.code, "csrf_failed");
    }
    // Without the CSRF cookie, even a header cannot pass.
    res = await bed.app.request("/auth/logout-all", {
      method: "POST",
      headers: { Cookie: cookieHeader({ svc_at: tokens.accessToken }), "X-Svc-Csrf": "csrf-123" },
    });
    assert.equal(res.status, 403);
    res = await bed.app.request(`/profile/sessions/${crypto.randomUUID()}`, {
      method: "DELETE",
      headers: { Cookie: cookieHeader(cookies) },
    });
    assert.equal(res.status, 403, "DELETE is state-changing too");
    res = await bed.app.request("/auth/logout", {
      method: "POST",
      headers: { Cookie: cookieHeader(cookies) },
    });
    assert.equal(res.status, 403, "no cross-site logout");

    res = await bed.app.request("/auth/logout-all", {
      method: "POST",
      headers: { Cookie: cookieHeader(cookies), "X-Svc-Csrf": "csrf-123" },
    });
    assert.equal(res.status, 200);
    const cleared = setCookies(res);
    assert.equal(cleared.get("svc_at")?.attributes.get("max-age"), "0");
    assert.equal(cleared.get("svc_rt")?.attributes.get("path"), "/auth/refresh");
  });

  await t.step("a bearer header wins over cookies and needs no CSRF header", async () => {
    const { tokens } = await bed.signIn({ realmId, userId });
    const res = await bed.app.request("/auth/logout-all", {
      method: "POST",
      headers: { ...bearer(tokens.accessToken), Cookie: cookieHeader({ svc_at: "garbage" }) },
    });
    assert.equal(res.status, 200);
  });

  await t.step(
    "refresh through cookies: CSRF required, new httpOnly cookies, refresh cookie path only",
    async () => {
      const { tokens } = await bed.signIn({ realmId, userId });
      const cookies = { svc_rt: tokens.refreshToken, svc_csrf: "c1" };
      let res = await bed.app.request("/auth/refresh", {
        method: "POST",
        headers: { Cookie: cookieHeader(cookies) },
      });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error.code, "csrf_failed");

      res = await bed.app.request("/auth/refresh", {
        method: "POST",
        headers: { Cookie: cookieHeader(cookies), "X-Svc-Csrf": "c1" },
      });
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.deepEqual(Object.keys(body).sort(), ["csrfToken", "expiresIn"]);
      const set = setCookies(res);
      const at = set.get("svc_at")!, rt = set.get("svc_rt")!, csrf = set.get("svc_csrf")!;
      assert.equal(at.attributes.get("path"), "/");
      assert.ok(at.attributes.has("httponly"));
      assert.equal(at.attributes.get("samesite"), "Lax");
      assert.equal(at.attributes.get("max-age"), "600");
      assert.equal(rt.attributes.get("path"), "/auth/refresh");
      assert.ok(rt.attributes.has("httponly"));
      assert.equal(rt.attributes.get("max-age"), String(bed.config.tokens.refreshTokenTtlSeconds));
      assert.equal(csrf.attributes.get("path"), "/");
      assert.ok(!csrf.attributes.has("httponly"), "the page must read the CSRF cookie");
      assert.equal(csrf.value, body.csrfToken);
      assert.ok(!at.attributes.has("secure"), "http://localhost: not Secure under auto");
      assert.match(rt.value, /^srt_/);

      res = await bed.app.request("/profile/me", { headers: { Cookie: cookieHeader({ svc_at: at.value }) } });
      assert.equal(res.status, 200);
      // The old refresh cookie is now a replay.
      res = await bed.app.request("/auth/refresh", {
        method: "POST",
        headers: { Cookie: cookieHeader(cookies), "X-Svc-Csrf": "c1" },
      });
      assert.equal(res.status, 401);
      assert.equal(setCookies(res).get("svc_rt")?.attributes.get("max-age"), "0", "dead cookies are cleared");
    },
  );

  await t.step(
    "cookie paths follow a configured path base; Secure and SameSite follow the config",
    async () => {
      const based = bed.appWith({
        SVC_PATH_BASE: "/id",
        SVC_BASE_URL: "https://id.example.com",
        SVC_RP_ID: "example.com",
        SVC_RP_NAME: "Example",
        SVC_RP_ORIGINS: "https://id.example.com",
        SVC_COOKIE_SAME_SITE: "Strict",
      });
      const { tokens } = await based.auth.sessions.signIn({ realmId, userId, mfa: "Password" });
      let res = await based.app.request("/id/auth/refresh", {
        method: "POST",
        headers: { Cookie: cookieHeader({ svc_rt: tokens.refreshToken, svc_csrf: "c" }), "X-Svc-Csrf": "c" },
      });
      assert.equal(res.status, 200);
      const set = setCookies(res);
      assert.equal(set.get("svc_at")!.attributes.get("path"), "/id");
      assert.equal(set.get("svc_csrf")!.attributes.get("path"), "/id");
      assert.equal(set.get("svc_rt")!.attributes.get("path"), "/id/auth/refresh");
      for (const c of set.values()) {
        assert.ok(c.attributes.has("secure"), `${c.name} is Secure on https`);
        assert.equal(c.attributes.get("samesite"), "Strict");
      }
      res = await based.app.request("/auth/refresh", { method: "POST" });
      assert.equal(res.status, 404, "nothing outside the path base");

      res = await based.app.request("/id/auth/switch-organization", {
        method: "POST",
        headers: {
          Cookie: cookieHeader({ svc_at: set.get("svc_at")!.value, svc_csrf: "c" }),
          "X-Svc-Csrf": "c",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ orgId: await bed.seed.org(realmId, [userId]) }),
      });
      assert.equal(res.status, 200);
      const switched = setCookies(res);
      assert.equal(switched.get("svc_at")!.attributes.get("path"), "/id");
      assert.equal(switched.has("svc_rt"), false, "the refresh cookie is untouched");
    },
  );

  await bed.close();
});
