import { strict as assert } from "node:assert";
import {
  captchaProviderFromConfig,
  type FetchLike,
  HCAPTCHA_SITEVERIFY_URL,
  hcaptchaProvider,
  RECAPTCHA_SITEVERIFY_URL,
  recaptchaProvider,
  TestCaptchaProvider,
  TURNSTILE_SITEVERIFY_URL,
  turnstileProvider,
} from "../../../core/abuse/captcha.ts";
import { loadConfig } from "../../../core/config/load.ts";
import { ValidationError } from "../../../core/errors.ts";

interface Seen {
  url: string;
  method: string;
  contentType: string | null;
  form: Record<string, string>;
  signal: AbortSignal | null;
  redirect: RequestRedirect | undefined;
}

/** A fake fetch answering each call with the next reply, recording the requests. */
function fakeFetch(...replies: (unknown | ((seen: Seen) => Promise<Response>))[]) {
  const seen: Seen[] = [];
  const fetch: FetchLike = (url, init) => {
    const s: Seen = {
      url,
      method: init.method ?? "GET",
      contentType: new Headers(init.headers).get("content-type"),
      form: Object.fromEntries(new URLSearchParams(String(init.body))),
      signal: init.signal ?? null,
      redirect: init.redirect,
    };
    seen.push(s);
    const reply = replies[seen.length - 1];
    if (typeof reply === "function") return reply(s);
    return Promise.resolve(Response.json(reply));
  };
  return { fetch, seen };
}

Deno.test("captcha: Turnstile posts the form and checks success, hostname and action", async () => {
  const { fetch, seen } = fakeFetch(
    { success: true, hostname: "login.example.com", action: "login", "error-codes": [] },
    { success: true, hostname: "evil.example.net", action: "login" },
    { success: true, hostname: "LOGIN.example.com", action: "signup" },
    { success: false, "error-codes": ["timeout-or-duplicate"] },
  );
  const provider = turnstileProvider({
    secret: "0x-secret",
    siteKey: "0x-site",
    hostnames: ["login.example.com"],
    action: "login",
    fetch,
  });
  assert.equal(provider.name, "turnstile");
  assert.equal(provider.siteKey, "0x-site");
  const ok = await provider.verify("tok-1", { remoteIp: "203.0.113.9" });
  assert.deepEqual(ok, { success: true, errorCodes: [], hostname: "login.example.com", action: "login" });
  assert.equal(seen[0].url, TURNSTILE_SITEVERIFY_URL);
  assert.equal(seen[0].method, "POST");
  assert.equal(seen[0].contentType, "application/x-www-form-urlencoded");
  assert.deepEqual(seen[0].form, { secret: "0x-secret", response: "tok-1", remoteip: "203.0.113.9" });
  assert.ok(seen[0].signal instanceof AbortSignal && !seen[0].signal.aborted);
  assert.equal(seen[0].redirect, "error");

  assert.deepEqual((await provider.verify("tok-2")).errorCodes, ["hostname-mismatch"]);
  assert.equal(seen[1].form.remoteip, undefined);
  assert.deepEqual((await provider.verify("tok-3")).errorCodes, ["action-mismatch"]);
  const rejected = await provider.verify("tok-4");
  assert.equal(rejected.success, false);
  assert.deepEqual(rejected.errorCodes, ["timeout-or-duplicate"]);
});

Deno.test("captcha: hCaptcha sends the site key; a missing action is not checked", async () => {
  const { fetch, seen } = fakeFetch({ success: true, hostname: "login.example.com" });
  const provider = hcaptchaProvider({
    secret: "0xhsecret",
    siteKey: "10000000-ffff-ffff-ffff-000000000001",
    hostnames: ["login.example.com"],
    action: "login",
    fetch,
  });
  assert.equal((await provider.verify("P1_token", { remoteIp: "2001:db8::1" })).success, true);
  assert.equal(seen[0].url, HCAPTCHA_SITEVERIFY_URL);
  assert.deepEqual(seen[0].form, {
    secret: "0xhsecret",
    response: "P1_token",
    remoteip: "2001:db8::1",
    sitekey: "10000000-ffff-ffff-ffff-000000000001",
  });
});

Deno.test("captcha: reCAPTCHA v3 checks the score and action; v2 has neither", async () => {
  const { fetch, seen } = fakeFetch(
    { success: true, score: 0.9, action: "login", hostname: "login.example.com" },
    { success: true, score: 0.3, action: "login", hostname: "login.example.com" },
    { success: true, hostname: "login.example.com" },
  );
  const provider = recaptchaProvider({ secret: "6L-secret", action: "login", minScore: 0.5, fetch });
  assert.deepEqual(await provider.verify("v3-good"), {
    success: true,
    errorCodes: [],
    hostname: "login.example.com",
    action: "login",
    score: 0.9,
  });
  assert.deepEqual((await provider.verify("v3-bot")).errorCodes, ["score-too-low"]);
  assert.equal((await provider.verify("v2")).success, true);
  assert.equal(seen[0].url, RECAPTCHA_SITEVERIFY_URL);
  assert.deepEqual(seen[0].form, { secret: "6L-secret", response: "v3-good" });
});

Deno.test("captcha: timeouts, network errors, bad answers and bad tokens reject", async () => {
  const timeout = () => Promise.reject(new DOMException("timed out", "TimeoutError"));
  const abort = (s: Seen) => {
    // A provider that never answers: the adapter's own timer aborts the request.
    return new Promise<Response>((_, reject) => {
      s.signal!.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
    });
  };
  const { fetch, seen } = fakeFetch(
    timeout,
    () => Promise.reject(new TypeError("connection refused")),
    () => Promise.resolve(new Response("upstream down", { status: 503 })),
    () => Promise.resolve(new Response("<html>", { status: 200 })),
    { ok: true },
    abort,
  );
  const provider = turnstileProvider({ secret: "s", fetch, timeoutMs: 1 });
  assert.deepEqual(await provider.verify("a"), { success: false, errorCodes: ["timeout"] });
  assert.deepEqual(await provider.verify("b"), { success: false, errorCodes: ["network-error"] });
  assert.deepEqual(await provider.verify("c"), { success: false, errorCodes: ["http-503"] });
  assert.deepEqual(await provider.verify("d"), { success: false, errorCodes: ["invalid-response"] });
  assert.deepEqual(await provider.verify("e"), { success: false, errorCodes: ["invalid-response"] });
  // The adapter's own 1 ms timer aborts a provider that never answers.
  assert.deepEqual(await provider.verify("f"), { success: false, errorCodes: ["timeout"] });
  assert.equal(seen.length, 6);
  assert.deepEqual(await provider.verify(""), { success: false, errorCodes: ["missing-input-response"] });
  assert.deepEqual(await provider.verify("x".repeat(5000)), {
    success: false,
    errorCodes: ["invalid-input-response"],
  });
  assert.equal(seen.length, 6, "no call for an empty or oversized token");
});

Deno.test("captcha: the test adapter and the configured provider", async () => {
  const test = new TestCaptchaProvider();
  assert.equal((await test.verify("test-pass")).success, true);
  assert.equal((await test.verify("other")).success, false);

  assert.equal(captchaProviderFromConfig(loadConfig({ env: {} }).config.abuse.captcha), null);
  assert.throws(
    () =>
      captchaProviderFromConfig(
        loadConfig({ env: { SVC_ABUSE_CAPTCHA_PROVIDER: "turnstile" } }).config.abuse.captcha,
      ),
    (e: unknown) => e instanceof ValidationError && /SVC_ABUSE_CAPTCHA_SECRET/.test(e.message),
  );
  const { fetch, seen } = fakeFetch({ success: true, score: 0.6, hostname: "a.example" });
  const { config } = loadConfig({
    env: {
      SVC_ABUSE_CAPTCHA_PROVIDER: "recaptcha",
      SVC_ABUSE_CAPTCHA_SECRET: "sekrit",
      SVC_ABUSE_CAPTCHA_SITE_KEY: "site",
      SVC_ABUSE_CAPTCHA_HOSTNAMES: "a.example,b.example",
      SVC_ABUSE_CAPTCHA_MIN_SCORE_PERCENT: "70",
    },
  });
  const provider = captchaProviderFromConfig(config.abuse.captcha, { fetch })!;
  assert.equal(provider.name, "recaptcha");
  assert.equal(provider.siteKey, "site");
  assert.deepEqual((await provider.verify("t")).errorCodes, ["score-too-low"]);
  assert.equal(seen[0].form.secret, "sekrit");
});
