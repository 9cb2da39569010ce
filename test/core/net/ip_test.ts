import { strict as assert } from "node:assert";
import fc from "fast-check";
import { CidrTable, formatIp, parseCidr, parseIp } from "../../../core/net/ip.ts";

Deno.test("ip: IPv4 and IPv6 parse to integers; IPv4-mapped IPv6 is IPv4", () => {
  assert.deepEqual(parseIp("192.0.2.1"), { version: 4, value: 0xc0000201n });
  assert.deepEqual(parseIp("::ffff:192.0.2.1"), { version: 4, value: 0xc0000201n });
  assert.deepEqual(parseIp("[2001:db8::1]"), { version: 6, value: (0x20010db8n << 96n) | 1n });
  assert.deepEqual(parseIp("fe80::1%eth0"), { version: 6, value: (0xfe80n << 112n) | 1n });
  for (
    const bad of ["", "1.2.3", "1.2.3.256", "01.2.3.4", "1:2:3:4:5:6:7:8:9", "1::2::3", "g::1", "example.com"]
  ) {
    assert.equal(parseIp(bad), null, bad);
  }
  assert.equal(formatIp(parseIp("2001:0db8:0000:0000:0000:0000:0000:0001")!), "2001:db8::1");
  assert.equal(formatIp(parseIp("1:0:0:2:0:0:0:3")!), "1:0:0:2::3");
  assert.equal(formatIp(parseIp("1:2:3:4:5:6:7:8")!), "1:2:3:4:5:6:7:8");
});

Deno.test("ip: formatIp and parseIp round-trip (property)", () => {
  fc.assert(fc.property(fc.ipV4(), (ip) => formatIp(parseIp(ip)!) === ip));
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (value) => {
    const ip = parseIp(formatIp({ version: 6, value }));
    return value >> 32n === 0xffffn ? ip!.version === 4 : ip!.value === value && ip!.version === 6;
  }));
});

Deno.test("ip: CIDR ranges clear host bits; the most specific range wins", () => {
  assert.deepEqual(parseCidr("10.1.2.3/8"), { version: 4, value: 0x0a000000n, prefix: 8 });
  assert.deepEqual(parseCidr("::ffff:10.0.0.0/104"), { version: 4, value: 0x0a000000n, prefix: 8 });
  assert.equal(parseCidr("10.0.0.0/33"), null);
  assert.equal(parseCidr("10.0.0.0/x"), null);
  const table = new CidrTable<string>();
  table.set(parseCidr("10.0.0.0/8")!, "wide");
  table.set(parseCidr("10.1.0.0/16")!, "narrow");
  table.set(parseCidr("10.1.2.3")!, "host");
  table.set(parseCidr("2001:db8::/32")!, "v6");
  table.set(parseCidr("0.0.0.0/0")!, "default");
  assert.equal(table.lookup("10.1.2.3"), "host");
  assert.equal(table.lookup("10.1.2.4"), "narrow");
  assert.equal(table.lookup("10.2.0.1"), "wide");
  assert.equal(table.lookup("11.0.0.1"), "default");
  assert.equal(table.lookup("::ffff:10.1.2.3"), "host");
  assert.equal(table.lookup("2001:db8:ffff::1"), "v6");
  assert.equal(table.lookup("2001:db9::1"), null);
  assert.equal(table.lookup("not an ip"), null);
  assert.equal(table.size, 5);
});
