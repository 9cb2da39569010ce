import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { ManualClock } from "../../../core/clock.ts";
import { loadConfig } from "../../../core/config/load.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import {
  DEFAULT_RISK_SETTINGS,
  type DeviceRecognizer,
  type ExternalRiskProvider,
  RISK_EVALUATED,
  RiskGate,
  type RiskGateOptions,
  riskOutcome,
  type RiskSettings,
} from "../../../core/risk/gate.ts";
import {
  CsvGeoLocator,
  greatCircleKm,
  ListIpReputation,
  loginHistoryOf,
  MemoryLoginHistory,
} from "../../../core/risk/providers.ts";

const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
const USER = "11111111-1111-4111-8111-111111111111";

const geo = CsvGeoLocator.parse(
  [
    "203.0.113.0/24,FR,48.8566,2.3522",
    "203.0.113.128/25,DE,52.52,13.405",
    "198.51.100.0/24,US,40.7128,-74.006",
  ]
    .join("\n"),
);
const reputation = ListIpReputation.parse("192.0.2.66\n192.0.2.40/29,40\n");
const PARIS = "203.0.113.10", BERLIN = "203.0.113.200", NYC = "198.51.100.10";

function devices(known: string[]): DeviceRecognizer {
  return { isKnown: (_user, fp) => Promise.resolve(known.includes(fp)) };
}

function setup(options: Partial<RiskGateOptions> = {}, settings: Partial<RiskSettings> = {}) {
  const clock = new ManualClock(T0);
  const events: SvcEvent[] = [];
  const history = new MemoryLoginHistory();
  const gate = new RiskGate({
    clock,
    sink: checkedSink((e) => void events.push(e)),
    settings: { ...DEFAULT_RISK_SETTINGS, ...settings },
    devices: devices(["laptop"]),
    geo,
    reputation,
    history,
    ...options,
  });
  return { clock, events, history, gate };
}

const fired = (d: { signals: readonly { name: string; fired: boolean }[] }) =>
  d.signals.filter((s) => s.fired).map((s) => s.name);

Deno.test("risk: score bands map to Allow, StepUpMfa and Block", () => {
  for (
    const [score, outcome] of [[0, "Allow"], [39, "Allow"], [40, "StepUpMfa"], [79, "StepUpMfa"], [
      80,
      "Block",
    ], [
      145,
      "Block",
    ]] as const
  ) {
    assert.equal(riskOutcome(score), outcome, String(score));
  }
  assert.equal(riskOutcome(50, { stepUpAt: 60, blockAt: 100 }), "Allow");
});

Deno.test("risk: each combination of signals lands in its band", async () => {
  const cases: {
    name: string;
    ip: string;
    device: string;
    travel: boolean;
    score: number;
    outcome: string;
  }[] = [
    { name: "nothing", ip: PARIS, device: "laptop", travel: false, score: 0, outcome: "Allow" },
    { name: "new device", ip: PARIS, device: "phone", travel: false, score: 30, outcome: "Allow" },
    { name: "impossible travel", ip: NYC, device: "laptop", travel: true, score: 40, outcome: "StepUpMfa" },
    {
      name: "IP reputation",
      ip: "192.0.2.66",
      device: "laptop",
      travel: false,
      score: 50,
      outcome: "StepUpMfa",
    },
    { name: "new device + travel", ip: NYC, device: "phone", travel: true, score: 70, outcome: "StepUpMfa" },
    {
      name: "new device + reputation",
      ip: "192.0.2.66",
      device: "phone",
      travel: false,
      score: 80,
      outcome: "Block",
    },
  ];
  for (const c of cases) {
    const { gate, history, clock } = setup();
    history.record(USER, { at: clock.now() - HOUR, ip: PARIS });
    const d = await gate.evaluate({ userId: USER, ip: c.ip, deviceId: c.device });
    assert.equal(d.score, c.score, c.name);
    assert.equal(d.builtInScore, c.score, c.name);
    assert.equal(d.outcome, c.outcome, c.name);
    assert.equal(fired(d).includes("impossible_travel"), c.travel, c.name);
  }
  // Velocity adds 25: new device, reputation and velocity give 105.
  const { gate, history, clock } = setup({}, { velocityLogins: 2 });
  history.record(USER, { at: clock.now() - 60_000, ip: PARIS });
  const all = await gate.evaluate({ userId: USER, ip: "192.0.2.66", deviceId: "phone" });
  assert.equal(all.outcome, "Block");
  assert.deepEqual(fired(all), ["new_device", "ip_reputation", "velocity"]); // 192.0.2.66 has no location
  assert.equal(all.score, 105);
});

Deno.test("risk: new device fires for an unknown or missing device id", async () => {
  const { gate } = setup();
  assert.deepEqual(fired(await gate.evaluate({ userId: USER, ip: PARIS, deviceId: "laptop" })), []);
  assert.deepEqual(fired(await gate.evaluate({ userId: USER, ip: PARIS, deviceId: "tablet" })), [
    "new_device",
  ]);
  const none = await gate.evaluate({ userId: USER, ip: PARIS });
  assert.deepEqual(none.signals[0], {
    name: "new_device",
    fired: true,
    weight: 30,
    detail: { reason: "no_device_id" },
  });
});

Deno.test("risk: impossible travel fires at the configured speed and minimum distance", async () => {
  const km = greatCircleKm(geo.locate(PARIS)!, geo.locate(NYC)!);
  const atSpeed = Math.floor((km / 1000) * HOUR); // just under the time 1000 km/h needs
  for (const [elapsed, expected] of [[atSpeed, true], [atSpeed + 1000, false], [0, true]] as const) {
    const { gate, history, clock } = setup();
    history.record(USER, { at: clock.now() - elapsed, ip: PARIS });
    const d = await gate.evaluate({ userId: USER, ip: NYC, deviceId: "laptop" });
    const travel = d.signals.find((s) => s.name === "impossible_travel")!;
    assert.equal(travel.fired, expected, `elapsed ${elapsed}`);
    assert.equal(travel.detail.from, "FR");
    assert.equal(travel.detail.to, "US");
    assert.equal(travel.detail.distanceKm, Math.round(km));
  }
  // Paris to Berlin (~880 km) in a minute fires; under a 900 km minimum distance it does not.
  const berlinKm = greatCircleKm(geo.locate(PARIS)!, geo.locate(BERLIN)!);
  for (const [minKm, expected] of [[Math.floor(berlinKm), true], [Math.ceil(berlinKm), false]] as const) {
    const { gate, history, clock } = setup({}, { impossibleTravelMinKm: minKm });
    history.record(USER, { at: clock.now() - 60_000, ip: PARIS });
    assert.equal(
      fired(await gate.evaluate({ userId: USER, ip: BERLIN, deviceId: "laptop" })).includes(
        "impossible_travel",
      ),
      expected,
    );
  }
  // A recorded location is used as is; without a previous login or a location nothing fires.
  const { gate, history, clock } = setup();
  assert.equal(
    (await gate.evaluate({ userId: USER, ip: NYC, deviceId: "laptop" })).signals[1].detail.skipped,
    "no_previous_login",
  );
  history.record(USER, {
    at: clock.now() - 60_000,
    ip: null,
    location: { country: "JP", lat: 35.68, lon: 139.65 },
  });
  assert.deepEqual(fired(await gate.evaluate({ userId: USER, ip: NYC, deviceId: "laptop" })), [
    "impossible_travel",
  ]);
  assert.deepEqual(
    fired(await gate.evaluate({ userId: USER, ip: "8.8.8.8", deviceId: "laptop" })),
    [],
  );
});

Deno.test("risk: IP reputation fires at its threshold", async () => {
  for (const [threshold, expected] of [[40, true], [41, false]] as const) {
    const { gate } = setup({}, { ipReputationThreshold: threshold });
    const d = await gate.evaluate({ userId: USER, ip: "192.0.2.41", deviceId: "laptop" });
    const signal = d.signals.find((s) => s.name === "ip_reputation")!;
    assert.equal(signal.fired, expected, `threshold ${threshold}`);
    assert.equal(signal.detail.reputation, 40);
  }
  const { gate } = setup();
  assert.deepEqual(
    fired(await gate.evaluate({ userId: USER, ip: "192.0.2.1", deviceId: "laptop" })),
    [],
  );
});

Deno.test("risk: velocity fires when the logins in the window reach the threshold", async () => {
  for (const [previous, expected] of [[9, true], [8, false]] as const) {
    const { gate, history, clock } = setup();
    for (let i = 0; i < previous; i++) history.record(USER, { at: clock.now() - i * 60_000, ip: PARIS });
    history.record(USER, { at: clock.now() - HOUR - 1, ip: PARIS }); // outside the window
    const d = await gate.evaluate({ userId: USER, ip: PARIS, deviceId: "laptop" });
    const signal = d.signals.find((s) => s.name === "velocity")!;
    assert.equal(signal.fired, expected, `${previous} previous logins`);
    assert.deepEqual(signal.detail, { logins: previous + 1, windowSeconds: 3600 });
  }
});

Deno.test("risk: an external provider composes by sum or max; a failing one is recorded, not fatal", async () => {
  const external = (score: number): ExternalRiskProvider => ({
    name: "fraud-api",
    assess: (input) => {
      assert.equal(input.builtInScore, 30);
      assert.equal(input.location!.country, "FR");
      return Promise.resolve({ score, reasons: ["tor-exit"] });
    },
  });
  const sum = await setup({ external: external(50) }).gate.evaluate({
    userId: USER,
    ip: PARIS,
    deviceId: "x",
  });
  assert.deepEqual([sum.builtInScore, sum.score, sum.outcome], [30, 80, "Block"]);
  assert.deepEqual(sum.signals.at(-1), {
    name: "external",
    fired: true,
    weight: 50,
    detail: { provider: "fraud-api", compose: "sum", reasons: ["tor-exit"] },
  });
  const max = await setup({ external: external(50), compose: "max" }).gate.evaluate({
    userId: USER,
    ip: PARIS,
    deviceId: "x",
  });
  assert.deepEqual([max.score, max.outcome], [50, "StepUpMfa"]);
  const low = await setup({ external: external(10), compose: "max" }).gate.evaluate({
    userId: USER,
    ip: PARIS,
    deviceId: "x",
  });
  assert.deepEqual([low.score, low.outcome], [30, "Allow"]);

  const { gate, events } = setup({
    external: { name: "down", assess: () => Promise.reject(new Error("503")) },
    reputation: { score: () => Promise.reject(new Error("list unavailable")) },
  });
  const d = await gate.evaluate({ userId: USER, ip: PARIS, deviceId: "x" });
  assert.deepEqual([d.score, d.outcome], [30, "Allow"]);
  assert.deepEqual(events[0].data.failedProviders, ["ip_reputation", "external"]);
});

Deno.test("risk: risk.evaluated carries the contributing signals", async () => {
  const { gate, events, history, clock } = setup();
  history.record(USER, { at: clock.now() - 60_000, ip: PARIS });
  const d = await gate.evaluate({
    userId: USER,
    realmId: "realm-1",
    orgId: "org-1",
    ip: NYC,
    deviceId: "phone",
  });
  assert.equal(events.length, 1);
  const e = events[0];
  assert.equal(e.kind, RISK_EVALUATED);
  assert.deepEqual([e.userId, e.realmId, e.orgId, e.occurredAt], [USER, "realm-1", "org-1", T0]);
  assert.equal(e.data.outcome, "StepUpMfa");
  assert.equal(e.data.score, d.score);
  assert.deepEqual((e.data.signals as { name: string; weight: number }[]).map((s) => [s.name, s.weight]), [
    ["new_device", 30],
    ["impossible_travel", 40],
  ]);
  assert.equal(e.data.country, "US");
});

Deno.test("risk: the gate reads its settings from the configuration", async () => {
  const { config } = loadConfig({ env: { SVC_RISK_WEIGHT_NEW_DEVICE: "45", SVC_RISK_STEP_UP_AT: "45" } });
  const events: SvcEvent[] = [];
  const gate = RiskGate.fromConfig(config.risk, {
    clock: new ManualClock(T0),
    sink: checkedSink((e) => void events.push(e)),
    devices: devices([]),
  });
  const d = await gate.evaluate({ userId: USER, ip: PARIS, deviceId: "new" });
  assert.deepEqual([d.score, d.outcome], [45, "StepUpMfa"]);
  // Without providers the other signals never fire.
  assert.deepEqual(fired(d), ["new_device"]);
});

Deno.test("risk gate: what the sign-in read with the account replaces the gate's own reads (issue 29)", async () => {
  const refusing: DeviceRecognizer = { isKnown: () => Promise.reject(new Error("not asked")) };
  const { gate } = setup({
    devices: refusing,
    history: {
      lastLogin: () => Promise.reject(new Error("not asked")),
      countSince: () => Promise.reject(new Error("not asked")),
    },
  }, { velocityLogins: 3 });
  // A known device, two sign-ins from Paris in the last half hour: velocity fires (2 + this one).
  const prefetched = {
    deviceKnown: true,
    history: loginHistoryOf({
      lastAt: T0 - HOUR / 6,
      lastIp: PARIS,
      recentMs: [T0 - HOUR / 6, T0 - HOUR / 3],
    }),
  };
  const decision = await gate.evaluate({ userId: USER, ip: PARIS, deviceId: "phone", prefetched });
  assert.deepEqual(fired(decision), ["velocity"]);
  // New York ten minutes after Paris: impossible travel, from the prefetched last sign-in.
  const travel = await gate.evaluate({ userId: USER, ip: NYC, deviceId: "phone", prefetched });
  assert.deepEqual(fired(travel), ["impossible_travel", "velocity"]);
  // Without a history provider the signals stay skipped, whatever was prefetched.
  const bare = setup({ history: null, devices: refusing }).gate;
  const skipped = await bare.evaluate({ userId: USER, ip: NYC, deviceId: "phone", prefetched });
  assert.deepEqual(fired(skipped), []);
});
