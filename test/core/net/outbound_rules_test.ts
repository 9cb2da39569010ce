/**
 * The outbound guard's address rules as properties: every address of the loopback, private,
 * link-local (metadata), CGNAT, unique-local, multicast and unspecified ranges is refused, in
 * IPv4, in IPv6, and in the IPv6 forms that carry an IPv4 address (mapped, compatible, 6to4), as a
 * literal URL host and as a DNS answer for a public name; public addresses pass; the allow-list
 * admits exactly what it names.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { formatIp } from "../../../core/net/ip.ts";
import {
  checkOutboundUrl,
  isRefusedAddress,
  outboundPolicyFromConfig,
  PUBLIC_DESTINATIONS_ONLY,
} from "../../../core/net/outbound-rules.ts";

const v4 = (a: number, b: number, c: number, d: number) => `${a}.${b}.${c}.${d}`;
const octet = fc.integer({ min: 0, max: 255 });

/** An IPv4 address inside `base/prefix`. */
function v4In(base: [number, number, number, number], prefix: number): fc.Arbitrary<string> {
  const start = ((base[0] << 24) >>> 0) + (base[1] << 16) + (base[2] << 8) + base[3];
  return fc.integer({ min: 0, max: 2 ** (32 - prefix) - 1 }).map((offset) => {
    const n = start + offset;
    return v4(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
  });
}

/** An IPv6 address inside `prefixValue/prefix` (as text). */
function v6In(prefixValue: bigint, prefix: number): fc.Arbitrary<string> {
  return fc.bigInt({ min: 0n, max: (1n << BigInt(128 - prefix)) - 1n }).map((host) =>
    formatIp({ version: 6, value: prefixValue | host })
  );
}

const REFUSED_V4: fc.Arbitrary<string> = fc.oneof(
  v4In([127, 0, 0, 0], 8),
  v4In([10, 0, 0, 0], 8),
  v4In([172, 16, 0, 0], 12),
  v4In([192, 168, 0, 0], 16),
  v4In([169, 254, 0, 0], 16),
  v4In([100, 64, 0, 0], 10),
  v4In([0, 0, 0, 0], 8),
  v4In([224, 0, 0, 0], 4),
  v4In([240, 0, 0, 0], 4),
);

const REFUSED_V6: fc.Arbitrary<string> = fc.oneof(
  fc.constant("::1"),
  fc.constant("::"),
  v6In(0xfc00n << 112n, 7), // unique local, fd00:ec2::254 among them
  v6In(0xfe80n << 112n, 10),
  v6In(0xff00n << 112n, 8),
);

/** A public IPv4 address: outside every refused or reserved range. */
const PUBLIC_V4: fc.Arbitrary<string> = fc.tuple(
  fc.integer({ min: 1, max: 223 }).filter((a) => ![10, 100, 127, 169, 172, 192, 198, 203].includes(a)),
  octet,
  octet,
  fc.integer({ min: 1, max: 254 }),
).map(([a, b, c, d]) => v4(a, b, c, d)).filter((ip) => ip !== "168.63.129.16"); // Azure's wire server

Deno.test("outbound rules: every loopback, private, link-local, CGNAT, multicast address is refused (property)", () => {
  fc.assert(
    fc.property(REFUSED_V4, (ip) => {
      assert.ok(isRefusedAddress(ip), ip);
      assert.ok(isRefusedAddress(`::ffff:${ip}`), `mapped ${ip}`);
      assert.equal(checkOutboundUrl(`http://${ip}:8080/x`, PUBLIC_DESTINATIONS_ONLY), "private_address");
      assert.equal(checkOutboundUrl(`https://[::ffff:${ip}]/`, PUBLIC_DESTINATIONS_ONLY), "private_address");
      // A public name whose DNS answer is inward.
      assert.equal(
        checkOutboundUrl("https://idp.example.com/", PUBLIC_DESTINATIONS_ONLY, ["93.184.216.34", ip]),
        "private_address",
      );
      // 6to4 (2002:aabb:ccdd::) carrying the address.
      const [a, b, c, d] = ip.split(".").map(Number);
      const sixToFour = `2002:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}::1`;
      assert.ok(isRefusedAddress(sixToFour), sixToFour);
    }),
  );
  fc.assert(
    fc.property(REFUSED_V6, (ip) => {
      assert.ok(isRefusedAddress(ip), ip);
      assert.equal(checkOutboundUrl(`http://[${ip}]/`, PUBLIC_DESTINATIONS_ONLY), "private_address");
      assert.equal(
        checkOutboundUrl("https://idp.example.com/", PUBLIC_DESTINATIONS_ONLY, [ip]),
        "private_address",
      );
    }),
  );
});

Deno.test("outbound rules: public addresses pass, as literals and as DNS answers (property)", () => {
  fc.assert(
    fc.property(PUBLIC_V4, (ip) => {
      assert.equal(isRefusedAddress(ip), false, ip);
      assert.equal(checkOutboundUrl(`https://${ip}/jwks`, PUBLIC_DESTINATIONS_ONLY), null);
      assert.equal(checkOutboundUrl("https://idp.example.com/", PUBLIC_DESTINATIONS_ONLY, [ip]), null);
    }),
  );
  // Global unicast IPv6 (2000::/3 minus the reserved pieces): 2400::/8 … 2a00::/8.
  fc.assert(
    fc.property(v6In(0x2400n << 112n, 6), (ip) => {
      assert.equal(isRefusedAddress(ip), false, ip);
      assert.equal(checkOutboundUrl(`https://[${ip}]/`, PUBLIC_DESTINATIONS_ONLY), null);
    }),
  );
});

Deno.test("outbound rules: cloud metadata, names and odd spellings", () => {
  for (
    const ip of [
      "169.254.169.254",
      "fd00:ec2::254",
      "100.100.100.200",
      "168.63.129.16",
      "192.0.0.192",
      "0.0.0.0",
    ]
  ) assert.ok(isRefusedAddress(ip), ip);
  for (
    const url of [
      "http://169.254.169.254/latest/meta-data/",
      "https://169.254.169.254/computeMetadata/v1/",
      "http://[fd00:ec2::254]/",
      "http://localhost:8080/",
      "http://metadata.localhost/",
      "http://2130706433/", // 127.0.0.1 as one number, normalized by the URL parser
      "http://0x7f.1/",
      "http://[::7f00:1]/", // IPv4-compatible 127.0.0.1
      "http://[0:0:0:0:0:ffff:a9fe:a9fe]/", // mapped 169.254.169.254
    ]
  ) assert.equal(checkOutboundUrl(url, PUBLIC_DESTINATIONS_ONLY), "private_address", url);
  assert.equal(checkOutboundUrl("file:///etc/passwd", PUBLIC_DESTINATIONS_ONLY), "unsupported_scheme");
  assert.equal(
    checkOutboundUrl("https://u:p@idp.example.com/", PUBLIC_DESTINATIONS_ONLY),
    "credentials_in_url",
  );
});

Deno.test("outbound rules: the allow-list admits what it names and nothing else (property)", () => {
  const policy = outboundPolicyFromConfig({
    outbound: { allowPrivate: ["127.0.0.1"] },
    webhooks: { allowPrivateReceivers: ["10.9.0.0/16"] },
  });
  assert.deepEqual(policy.allowPrivate, ["127.0.0.1", "10.9.0.0/16"]);
  assert.equal(checkOutboundUrl("http://127.0.0.1:9/", policy), null);
  fc.assert(
    fc.property(REFUSED_V4, (ip) => {
      const allowed = ip === "127.0.0.1" || ip.startsWith("10.9.");
      assert.equal(checkOutboundUrl(`http://${ip}/`, policy) === null, allowed, ip);
    }),
  );
});
