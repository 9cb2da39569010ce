/**
 * Two instances on one Postgres (issue 27): each records its issuer and beats; a start warns when
 * another live instance serves another issuer, not when the issuers match or the other stopped
 * beating, and a stopped instance leaves no row.
 */
import { strict as assert } from "node:assert";
import { InstancePresence, issuerMismatchLine, LIVE_WINDOW_MS } from "../../cli/instance-presence.ts";
import { ManualClock } from "../../core/clock.ts";
import { seededRandom } from "../../core/random.ts";
import { createSqlInstanceStore } from "../../storage/sql/instances.ts";
import { createSqlRawStore } from "../../storage/sql/raw-sql.ts";
import { freshPostgres } from "../support/db.ts";

Deno.test("instances on one Postgres: a live instance with another issuer is warned about", async () => {
  const database = await freshPostgres();
  const clock = new ManualClock(Date.parse("2026-11-27T06:00:00Z"));
  const store = createSqlInstanceStore(createSqlRawStore(database.db));
  const presences: InstancePresence[] = [];
  const presence = (issuer: string, seed: number) => {
    const p = new InstancePresence({
      store,
      clock,
      random: seededRandom(seed),
      issuer,
      hostname: "host-a",
      pid: 1000 + seed,
      onError: (line) => assert.fail(line),
    });
    presences.push(p);
    return p;
  };
  try {
    const first = presence("http://localhost:8080", 1);
    assert.equal(await first.start(), null, "alone: no warning");
    const same = presence("http://localhost:8080", 2);
    assert.equal(await same.start(), null, "same issuer: no warning");
    const other = presence("http://localhost:9090", 3);
    const warning = await other.start();
    assert.match(warning ?? "", /issuer http:\/\/localhost:9090 differs from 2 live instance/);
    assert.match(warning ?? "", /SVC_BASE_URL/);

    // The first two stop beating (crashed): after the live window they no longer count.
    await other.stop();
    clock.advance(LIVE_WINDOW_MS + 1000);
    const late = presence("http://localhost:9090", 4);
    assert.equal(await late.start(), null, "stale instances are not live");
    // A beat after its row was dropped as stale registers again.
    await first.beat();
    const rows = await createSqlRawStore(database.db).query<{ issuer: string }>(
      "SELECT issuer FROM svc_instances ORDER BY issuer",
    );
    assert.deepEqual(rows.map((r) => r.issuer), ["http://localhost:8080", "http://localhost:9090"]);
    await late.stop();
    const left = await createSqlRawStore(database.db).query("SELECT id FROM svc_instances WHERE id = $1", [
      late.id,
    ]);
    assert.equal(left.length, 0, "a stopped instance leaves no row");
  } finally {
    for (const p of presences) await p.stop().catch(() => {});
    await database.close();
  }
});

Deno.test("issuerMismatchLine: only differing issuers count", () => {
  const at = new Date();
  assert.equal(
    issuerMismatchLine("https://a", [{
      id: "1",
      issuer: "https://a",
      hostname: "h",
      pid: 1,
      heartbeatAt: at,
    }]),
    null,
  );
  assert.match(
    issuerMismatchLine("https://a", [{
      id: "1",
      issuer: "https://b",
      hostname: "h",
      pid: 7,
      heartbeatAt: at,
    }])!,
    /https:\/\/b \(pid 7 on h\)/,
  );
});
