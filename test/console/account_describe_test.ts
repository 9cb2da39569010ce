/**
 * The account page's sessions and events read as sentences (issue 27): "Chrome on Linux ·
 * 127.0.0.1 · 2 minutes ago", "New sign-in from a new device", in English and French.
 */
import { strict as assert } from "node:assert";
import { describeEvent, describeUserAgent, line, timeAgo } from "../../console/account/describe.ts";

const CHROME_LINUX =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

Deno.test("describeUserAgent: browser on system", () => {
  assert.equal(describeUserAgent(CHROME_LINUX, "en"), "Chrome on Linux");
  assert.equal(
    describeUserAgent(CHROME_LINUX.replace("Chrome/", "HeadlessChrome/"), "en"),
    "Chrome on Linux",
  );
  assert.equal(describeUserAgent(CHROME_LINUX, "fr"), "Chrome sur Linux");
  assert.equal(
    describeUserAgent(
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
      "en",
    ),
    "Safari on macOS",
  );
  assert.equal(
    describeUserAgent(
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
      "en",
    ),
    "Firefox on Windows",
  );
  assert.equal(
    describeUserAgent(`${CHROME_LINUX} Edg/131.0.0.0`.replace("X11; Linux", "Windows NT 10.0"), "en"),
    "Edge on Windows",
  );
  assert.equal(describeUserAgent("curl/8.5.0", "en"), "curl");
  assert.equal(describeUserAgent("something else", "en"), null);
  assert.equal(describeUserAgent(null, "en"), null);
});

Deno.test("timeAgo and line: the session line of the issue", () => {
  const now = Date.parse("2026-11-27T06:30:00Z");
  const twoMinutes = new Date(now - 2 * 60_000).toISOString();
  assert.equal(
    line("Chrome on Linux", "127.0.0.1", timeAgo(twoMinutes, now, "en")),
    "Chrome on Linux · 127.0.0.1 · 2 minutes ago",
  );
  assert.equal(timeAgo(new Date(now - 10_000), now, "en"), "now");
  assert.equal(timeAgo(new Date(now - 3 * 3600_000), now, "en"), "3 hours ago");
  assert.equal(timeAgo(new Date(now - 2 * 60_000), now, "fr"), "il y a 2 minutes");
  assert.equal(line("a", null, "", "b"), "a · b");
});

Deno.test("describeEvent: sentences, and a readable fallback", () => {
  assert.equal(describeEvent("login.new_device", "en"), "New sign-in from a new device");
  assert.equal(describeEvent("login.new_device", "fr"), "Nouvelle connexion depuis un nouvel appareil");
  assert.equal(describeEvent("mfa.totp_enabled", "en"), "Authenticator app turned on");
  assert.equal(describeEvent("federation.linked", "en"), "Federation linked");
});
