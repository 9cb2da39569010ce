/**
 * `POST /auth/sign-in/discover` on the Hono app, over the plugins' sign-in steps
 * (`signInDiscoverer`): the first plugin that answers wins, a plugin that throws or answers
 * something that is not a path of svc is skipped; the route validates its body (valibot, U+0000,
 * a body limit), refuses a `returnTo` on a foreign origin, answers `{}` without steps, and gives
 * the steps the email's domain and the realm. Properties: whatever the email, the answer is a
 * path of svc or nothing.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { createApp } from "../../../http/app.ts";
import { signInDiscoveryRoutes } from "../../../http/routes/sign-in-discovery.ts";
import { type InstalledPlugin, signInDiscoverer } from "../../../plugins/host.ts";
import { definePlugin, type PluginContext, type SignInDiscoveryRequest } from "../../../plugins/plugin.ts";
import { loginBed } from "../../support/login.ts";

function installed(
  name: string,
  answer: (request: SignInDiscoveryRequest) => { path: string } | null,
): InstalledPlugin {
  return {
    plugin: definePlugin({ name, discoverSignIn: (_ctx, request) => answer(request) }),
    context: {} as PluginContext,
  };
}

Deno.test("POST /auth/sign-in/discover: validated, asks the steps, first answer wins", async () => {
  const bed = await loginBed();
  try {
    const asked: SignInDiscoveryRequest[] = [];
    const errors: string[] = [];
    const discover = signInDiscoverer([
      installed("thrower", () => {
        throw new Error("boom");
      }),
      installed("open-redirect", (r) => r.domain === "evil.test" ? { path: "//evil.test/x" } : null),
      installed("acme", (r) => {
        asked.push(r);
        return r.domain === "acme.test" ? { path: "/federation/start?provider=p1" } : null;
      }),
      installed("late", () => ({ path: "/never" })),
    ], (line) => errors.push(line));
    const app = createApp({
      config: bed.config,
      readinessChecks: [],
      clock: bed.clock,
      random: bed.random,
      routes: [signInDiscoveryRoutes(bed.storage, discover)],
    });
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      app.request("/auth/sign-in/discover", {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });

    const acme = await post({ email: " Alice@ACME.test " });
    assert.equal(acme.status, 200);
    assert.equal(acme.headers.get("Cache-Control"), "no-store");
    // The first plugin that answers wins: "late" is never asked for acme.test.
    assert.deepEqual(await acme.json(), { redirect: "/federation/start?provider=p1" });
    assert.deepEqual(asked[0], {
      email: "alice@acme.test",
      domain: "acme.test",
      realmId: bed.realmId,
      returnTo: null,
    });
    assert.ok(errors.some((line) => line.includes("thrower")));

    // A step that answers a foreign target is skipped (the next one answers).
    const evil = await post({ email: "x@evil.test" });
    assert.deepEqual(await evil.json(), { redirect: "/never" });
    assert.ok(errors.some((line) => line.includes("open-redirect")));

    const origin = new URL(bed.config.server.baseUrl).origin;
    await post({ email: "a@acme.test", returnTo: `${origin}/app` });
    assert.equal(asked.at(-1)!.returnTo, `${origin}/app`);
    const foreign = await post({ email: "a@acme.test", returnTo: "https://evil.test/" });
    assert.equal(foreign.status, 400);
    assert.equal((await foreign.json()).error.code, "return_to_refused");
    assert.equal((await post({ email: "a@acme.test", returnTo: "//evil.test/" })).status, 400);

    assert.equal((await post({ email: "not an email" })).status, 400);
    assert.equal((await post({ email: "a\u0000@acme.test" })).status, 400);
    assert.equal((await post({ email: "a@acme.test", extra: 1 })).status, 400);
    assert.equal((await post("{")).status, 400);
    assert.equal((await post({ email: `${"a".repeat(5000)}@acme.test` })).status, 413);
    assert.deepEqual(await (await post({ email: "a@acme.test", realm: "no-such-realm" })).json(), {});

    // Without steps: always {}.
    const bare = createApp({
      config: bed.config,
      readinessChecks: [],
      clock: bed.clock,
      random: bed.random,
      routes: [signInDiscoveryRoutes(bed.storage, undefined)],
    });
    const none = await bare.request("/auth/sign-in/discover", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: "a@acme.test" }),
    });
    assert.deepEqual(await none.json(), {});

    // Whatever the email and whatever a step answers, the route answers a path of svc or nothing.
    await fc.assert(
      fc.asyncProperty(fc.emailAddress(), fc.string({ maxLength: 40 }), async (email, path) => {
        const app2 = createApp({
          config: bed.config,
          readinessChecks: [],
          clock: bed.clock,
          random: bed.random,
          routes: [
            signInDiscoveryRoutes(
              bed.storage,
              signInDiscoverer([installed("any", () => ({ path }))], () => {}),
            ),
          ],
        });
        const res = await app2.request("/auth/sign-in/discover", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ email }),
        });
        if (res.status !== 200) return;
        const body = await res.json();
        if (body.redirect !== undefined) {
          assert.match(body.redirect, /^\/(?![/\\])/);
          // deno-lint-ignore no-control-regex
          assert.ok(!/[\\\u0000-\u001f]/.test(body.redirect));
        }
      }),
      { numRuns: 60 },
    );
  } finally {
    await bed.close();
  }
});
