import { strict as assert } from "node:assert";
import { ValidationError } from "../../../core/errors.ts";
import {
  CsvGeoLocator,
  greatCircleKm,
  ListIpReputation,
  loadRiskProviders,
  MemoryLoginHistory,
  securityEventLoginHistory,
  type TextLoader,
} from "../../../core/risk/providers.ts";
import type { SecurityEventRecord, SecurityEventStore } from "../../../core/storage/security-events.ts";

const fixtures = new URL("../../fixtures/risk/", import.meta.url);
const readFixture: TextLoader = (path) => Deno.readTextFile(new URL(path, fixtures));

Deno.test("risk providers: the geolocation CSV (svc's format) maps IPv4 and IPv6 ranges", async () => {
  const { geo, reputation } = await loadRiskProviders({ geoipFile: "geoip.csv" }, readFixture);
  assert.equal(reputation, null);
  assert.equal(geo!.size, 6);
  assert.deepEqual(geo!.locate("203.0.113.7"), { country: "FR", lat: 48.8566, lon: 2.3522 });
  assert.equal(geo!.locate("203.0.113.200")!.country, "DE"); // the /25 is more specific
  assert.equal(geo!.locate("::ffff:198.51.100.1")!.country, "US");
  assert.equal(geo!.locate("2001:db8:1::1")!.country, "GB");
  assert.equal(geo!.locate("2001:db8:aaaa:1::1")!.country, "AU");
  assert.equal(geo!.locate("8.8.8.8"), null);
});

Deno.test("risk providers: a GeoLite2-City-Blocks CSV loads by its header; rows without coordinates are skipped", async () => {
  const geo = CsvGeoLocator.parse(await readFixture("geolite2-city-blocks.csv"));
  assert.equal(geo.size, 2);
  assert.deepEqual(geo.locate("203.0.113.1"), { country: "", lat: 48.8566, lon: 2.3522 });
  assert.equal(geo.locate("198.51.100.1"), null);
  assert.equal(geo.locate("2001:db8::5")!.lat, 51.5074);
});

Deno.test("risk providers: malformed geolocation rows name the line", () => {
  const fails = (text: string, pattern: RegExp) =>
    assert.throws(
      () => CsvGeoLocator.parse(text, "geo.csv"),
      (e: unknown) => e instanceof ValidationError && pattern.test(e.message),
    );
  fails("10.0.0.0/8,FR,1,2\n10.0.0.0/40,FR,1,2", /geo\.csv, line 2: "10\.0\.0\.0\/40" is not a CIDR range/);
  fails("10.0.0.0/8,FR,91,2", /line 1: latitude or longitude out of range/);
  fails("ip,where\n1.2.3.4,x", /line 1: the header names no network/);
});

Deno.test("risk providers: the IP reputation list takes blocklist lines and scores", async () => {
  const { reputation, geo } = await loadRiskProviders({ ipReputationFile: "ip-reputation.txt" }, readFixture);
  assert.equal(geo, null);
  assert.equal(reputation!.size, 5);
  assert.equal(reputation!.score("192.0.2.66"), 100);
  assert.equal(reputation!.score("192.0.2.67"), null);
  assert.equal(reputation!.score("198.51.100.10"), 40);
  assert.equal(reputation!.score("198.51.100.200"), 75);
  assert.equal(reputation!.score("2001:db8:bad:1::9"), 90);
  assert.equal(reputation!.score("203.0.113.5"), 0);
  assert.throws(() => ListIpReputation.parse("1.2.3.4, 101"), /line 1: "101" is not a score/);
  assert.throws(() => ListIpReputation.parse("# ok\nhost.example"), /line 2: "host\.example" is not an IP/);
  assert.throws(() => ListIpReputation.parse("1.2.3.4 5 6"), /line 1: expected an IP/);
});

Deno.test("risk providers: great-circle distance and the in-memory login history", async () => {
  const paris = { lat: 48.8566, lon: 2.3522 }, nyc = { lat: 40.7128, lon: -74.006 };
  const km = greatCircleKm(paris, nyc);
  assert.ok(km > 5830 && km < 5845, String(km));
  assert.equal(greatCircleKm(paris, paris), 0);
  assert.ok(Math.abs(greatCircleKm({ lat: 0, lon: 0 }, { lat: 0, lon: 180 }) - Math.PI * 6371.0088) < 1e-6);

  const history = new MemoryLoginHistory();
  history.record("u", { at: 2000, ip: "192.0.2.1" });
  history.record("u", { at: 1000, ip: "192.0.2.2" });
  assert.deepEqual(await history.lastLogin("u"), { at: 2000, ip: "192.0.2.1" });
  assert.equal(await history.countSince("u", 1000), 2);
  assert.equal(await history.countSince("u", 1001), 1);
  assert.equal(await history.lastLogin("nobody"), null);
});

Deno.test("risk providers: the login history read from the security-event ledger", async () => {
  const events: SecurityEventRecord[] = [];
  for (let i = 0; i < 250; i++) {
    events.push({
      id: String(i),
      realmId: null,
      userId: "u",
      kind: i % 2 === 0 ? "login.succeeded" : "mfa.failed",
      occurredAt: new Date(1_000_000 + i * 1000),
      data: null,
      ipAddress: `192.0.2.${i % 256}`,
      deviceDescription: null,
    });
  }
  const store = {
    listByUser: (userId: string, options: { limit?: number; before?: Date } = {}) =>
      Promise.resolve(
        events.filter((e) => e.userId === userId && (!options.before || e.occurredAt < options.before))
          .sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime()).slice(0, options.limit ?? 50),
      ),
  } as unknown as SecurityEventStore;
  const history = securityEventLoginHistory(store);
  assert.deepEqual(await history.lastLogin("u"), { at: 1_000_000 + 248_000, ip: "192.0.2.248" });
  assert.equal(await history.countSince("u", 1_000_000 + 200_000), 25); // 200, 202, …, 248
  assert.equal(await history.countSince("u", 0), 125); // pages through all 250 events
  assert.equal(await history.lastLogin("nobody"), null);
  assert.equal(await securityEventLoginHistory(store, { maxScan: 100 }).countSince("u", 0), 50);
  assert.equal(await securityEventLoginHistory(store, { kinds: ["mfa.failed"] }).countSince("u", 0), 125);
});
