/**
 * Role creation through the admin API is one atomic write, and `If-Match` updates are decided by
 * one statement, on both drivers:
 *
 * - a failure injected in the middle of the grants (a database trigger refusing the second grant
 *   row) leaves no role, no grant and no audit entry;
 * - on Postgres, concurrent PATCHes carrying the same `If-Match` version: exactly one wins, every
 *   other gets 412 and the version moved by one.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { adminBed } from "../../support/admin.ts";

const INJECTED = "fail:global:injected";

for (const driver of ["pglite", "postgres"] as const) {
  Deno.test(`${driver}: a failure in the middle of a role's grants leaves no role and no grant`, async () => {
    const bed = await adminBed({}, { postgres: driver === "postgres" });
    try {
      const db = bed.bed.database.db;
      await sql`CREATE FUNCTION refuse_injected_grant() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.pattern = ${sql.lit(INJECTED)} THEN RAISE EXCEPTION 'injected grant failure'; END IF;
          RETURN NEW;
        END $$`.execute(db);
      await sql`CREATE TRIGGER refuse_injected_grant BEFORE INSERT ON grants
        FOR EACH ROW EXECUTE FUNCTION refuse_injected_grant()`.execute(db);
      const chain = await bed.chainLength();
      const res = await bed.request("POST", "/svc-admin/roles", {
        body: {
          key: "half",
          displayName: "Half",
          grants: [
            { pattern: "first:global:read", effect: "Allow" },
            { pattern: INJECTED, effect: "Allow" },
            { pattern: "third:global:read", effect: "Allow" },
          ],
        },
      });
      assert.equal(res.status, 500, await res.text());
      assert.equal(await bed.bed.storage.roles.getByKey(bed.realmId, "half"), null);
      const grants = await db.selectFrom("grants").select("pattern")
        .where("pattern", "in", ["first:global:read", INJECTED, "third:global:read"]).execute();
      assert.deepEqual(grants, []);
      assert.equal(await bed.chainLength(), chain, "no audit entry");
      // The same request without the failing grant goes through.
      const ok = await bed.request("POST", "/svc-admin/roles", {
        body: {
          key: "half",
          displayName: "Half",
          grants: [{ pattern: "first:global:read", effect: "Allow" }],
        },
      });
      assert.equal(ok.status, 201);
    } finally {
      await bed.close();
    }
  });
}

Deno.test("postgres: concurrent If-Match updates of a role: exactly one wins", async () => {
  const bed = await adminBed({}, { postgres: true });
  try {
    const created = await (await bed.request("POST", "/svc-admin/roles", {
      body: { key: "raced", displayName: "Raced", grants: [] },
    })).json();
    for (let round = 1; round <= 3; round++) {
      const version = round; // each round starts at the version the previous winner left
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          bed.request("PATCH", `/svc-admin/roles/${created.id}`, {
            body: { displayName: `writer ${round}.${i}` },
            headers: { "If-Match": `"${version}"` },
          }).then(async (res) => ({ status: res.status, body: await res.json() }))),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [200, 412, 412, 412, 412, 412], JSON.stringify(answers));
      const winner = answers.find((a) => a.status === 200)!;
      const stored = (await bed.bed.storage.roles.get(created.id))!;
      assert.equal(stored.version, version + 1);
      assert.equal(stored.displayName, winner.body.displayName);
    }
  } finally {
    await bed.close();
  }
});
