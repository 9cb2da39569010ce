import { strict as assert } from "node:assert";
import { loadConfig } from "../../core/config/mod.ts";
import { resolveClientAddress, TrustedProxies } from "../../http/client-ip.ts";

Deno.test("resolveClientAddress believes X-Forwarded-For from trusted proxies only", () => {
  const proxies = new TrustedProxies(["10.0.0.0/8", "2001:db8::/32"]);
  const cases: [string, string | undefined, string | null, string | undefined][] = [
    ["no proxy: the peer", "203.0.113.5", null, "203.0.113.5"],
    ["an untrusted peer's header is ignored", "203.0.113.5", "198.51.100.7", "203.0.113.5"],
    ["one trusted hop", "10.0.0.2", "198.51.100.7", "198.51.100.7"],
    ["chained trusted proxies are skipped", "10.0.0.2", "198.51.100.7, 10.1.1.1, 10.0.0.9", "198.51.100.7"],
    ["a spoofed left part is not believed", "10.0.0.2", "1.2.3.4, 198.51.100.7", "198.51.100.7"],
    ["a malformed hop stops at the last trusted one", "10.0.0.2", "198.51.100.7, garbage", "10.0.0.2"],
    ["IPv6 proxies", "2001:db8::1", "2001:db8::2, 2001:db8:ffff::1", "2001:db8::2"],
    ["only proxies: the leftmost", "10.0.0.2", "10.0.0.3", "10.0.0.3"],
    ["no peer", undefined, "198.51.100.7", undefined],
  ];
  for (const [name, peer, header, expected] of cases) {
    assert.equal(resolveClientAddress(peer, header, proxies), expected, name);
  }
  assert.equal(resolveClientAddress("10.0.0.2", "198.51.100.7", new TrustedProxies([])), "10.0.0.2");
});

Deno.test("SVC_TRUSTED_PROXIES takes IPs and CIDR ranges and refuses anything else", () => {
  assert.deepEqual(
    loadConfig({ env: { SVC_TRUSTED_PROXIES: "10.0.0.0/8,192.0.2.1" } }).config.server.trustedProxies,
    ["10.0.0.0/8", "192.0.2.1"],
  );
  assert.deepEqual(loadConfig({ env: {} }).config.server.trustedProxies, []);
  assert.throws(
    () => loadConfig({ env: { SVC_TRUSTED_PROXIES: "10.0.0.0/8,proxy.internal" } }),
    /SVC_TRUSTED_PROXIES.*is not an IP address or CIDR range/,
  );
});
