/**
 * A client span per SQL statement, on both drivers: named by the statement's first keyword, with
 * the parameterized text (values never in it) and the rows returned or changed.
 */
import assert from "node:assert/strict";
import { SpanKind } from "@opentelemetry/api";
import { systemClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";
import { createSqlStorage } from "../../storage/storage.ts";
import { operationName } from "../../storage/tracing.ts";
import { drivers } from "../support/db.ts";
import { recordSpans, stopRecording } from "../support/spans.ts";

Deno.test("tracing: a statement's operation name is its first keyword", () => {
  const table: [string, string][] = [
    ["select 1", "SELECT"],
    ["  WITH rotated AS (UPDATE …) SELECT …", "WITH"],
    ["-- a comment\ninsert into users values ($1)", "INSERT"],
    ["/* hint */ delete from sessions", "DELETE"],
    ["begin", "BEGIN"],
    ["", "QUERY"],
  ];
  for (const [sql, expected] of table) assert.equal(operationName(sql), expected, sql);
});

for (const driver of drivers) {
  Deno.test(`tracing (${driver.name}): one client span per statement, without the values`, async () => {
    const database = await driver.open();
    const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
    const spans = recordSpans();
    try {
      const realm = await storage.realms.create({ name: "traced", displayName: "Traced", isDefault: false });
      await storage.users.create({ realmId: realm.id, email: "hidden.value@example.test" });
      const found = await storage.users.findByEmail(realm.id, "hidden.value@example.test");
      assert.ok(found);
      const queries = spans.filter((s) => s.attributes["db.system.name"] === "postgresql");
      assert.ok(queries.length >= 3, `${queries.length} statement spans`);
      for (const span of queries) {
        assert.equal(span.kind, SpanKind.CLIENT);
        assert.ok(span.ended);
        assert.equal(span.name, span.attributes["db.operation.name"]);
        assert.equal(typeof span.attributes["db.response.returned_rows"], "number");
      }
      const select = queries.find((s) =>
        s.name === "SELECT" && String(s.attributes["db.query.text"]).includes("users")
      );
      assert.ok(select, "the lookup's SELECT");
      assert.equal(select.attributes["db.response.returned_rows"], 1);
      assert.ok(queries.some((s) => s.name === "INSERT"));
      assert.ok(!JSON.stringify(spans).includes("hidden.value"), "values travel as parameters, not in spans");
    } finally {
      stopRecording();
      await database.close();
    }
  });
}
