/**
 * The cross-realm matrix of the admin API (issue 24): the administrator of a second realm, who
 * holds every `svc:` permission (and the plugins') in that realm, calls every `/svc-admin` route
 * registered on the full app with the request the fence matrix prepares for the first realm's
 * administrator (the first realm's ids in the path, its filters in the query, its objects in
 * the body). For each route:
 *
 * - a route that names an object in its path answers 404 (a few answer otherwise, each listed in
 *   `NOT_404` with the reason that answer tells nothing);
 * - every answer is free of the first realm's identifiers (the ids in the first realm's rows),
 *   while the second realm holds a user with each address of the first (the takeover's setup);
 * - nothing of the first realm changes: its realm-scoped rows and its audit chain stay as they were.
 *
 * The mail routes are the regression of the takeover through the outbox (a reset link of the
 * first realm read by the second realm's administrator).
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { otherRealm } from "../../support/other-realm.ts";
import { pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { builtinPlugins } from "../../../plugins/builtin.ts";
import { ADMIN_CASES } from "./cases.ts";
import { isEmbeddedAppRoute } from "../../../http/svc-routes.ts";
import type { SvcDatabase } from "../../../storage/open.ts";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** The tables with a `realm_id` column. */
async function realmTables(database: SvcDatabase): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    SELECT c.table_name AS name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND c.column_name = 'realm_id' AND t.table_type = 'BASE TABLE'
    ORDER BY 1`.execute(database.db);
  return rows.rows.map((r) => r.name);
}

/** Every row of the realm in those tables, as JSON texts, plus the realm row itself (one statement). */
async function realmRows(
  database: SvcDatabase,
  tables: readonly string[],
  realmId: string,
): Promise<string[]> {
  const selects = ["realms", ...tables].map((table) =>
    sql`SELECT ${table} || ':' || row_to_json(x)::text AS row FROM ${sql.table(table)} AS x
      WHERE ${sql.ref(`x.${table === "realms" ? "id" : "realm_id"}`)} = ${realmId}`
  );
  const rows = await sql<{ row: string }>`${sql.join(selects, sql` UNION ALL `)} ORDER BY 1`.execute(
    database.db,
  );
  return rows.rows.map((r) => r.row);
}

/**
 * Routes with an id in the path that answer otherwise than 404, and why that tells the other
 * realm's administrator nothing (the rows and the chain are still checked).
 */
const NOT_404: Readonly<Record<string, { readonly status: number; readonly why: string }>> = {
  "GET /svc-admin/realms/:realmId": {
    status: 403,
    why: "realms are managed from the default realm only: any other realm's administrator is refused",
  },
  "PATCH /svc-admin/realms/:realmId": {
    status: 403,
    why: "realms are managed from the default realm only: any other realm's administrator is refused",
  },
  "POST /svc-admin/api-keys/:apiKeyId/revoke": {
    status: 204,
    why: "spec 5.5: revoking an unknown key is a no-op; another realm's key is unknown alike",
  },
  "POST /svc-admin/imports/:kind": {
    status: 200,
    why: "`:kind` names a format, not an object: the import lands in the caller's realm",
  },
};

/** The identifiers a response must not show: every uuid in the realm's rows (but `except`). */
function identifiersOf(rows: readonly string[], except: ReadonlySet<string>): Set<string> {
  const ids = new Set<string>();
  for (const row of rows) for (const id of row.match(UUID) ?? []) ids.add(id.toLowerCase());
  for (const id of except) ids.delete(id);
  return ids;
}

Deno.test("admin API cross-realm matrix: another realm's administrator reaches nothing of the realm", async (t) => {
  const plugins = builtinPlugins();
  const plugged = await pluginBed(plugins);
  const admin = plugged.admin;
  try {
    const db = admin.bed.database;
    const seed = seeder(db.db);
    const pluginPatterns = plugins.flatMap((plugin) => (plugin.permissions ?? []).map((p) => p.id));
    const pluginAdmin = await seed.role(
      admin.realmId,
      "plugin-admin",
      pluginPatterns.map((pattern) => ({ pattern })),
    );
    await seed.assign(admin.realmId, pluginAdmin, { kind: "User", id: admin.users.global });
    const rival = await otherRealm(admin, { extraPatterns: pluginPatterns, app: plugged.app });
    await admin.bed.snapshots.invalidateAll();
    const tables = await realmTables(db);
    const rivalIds = new Set(
      (await realmRows(db, tables, rival.realmId)).flatMap((row) => row.match(UUID) ?? []).map((id) =>
        id.toLowerCase()
      ),
    );

    const registered = [
      ...new Set(
        plugged.app.routes
          .filter((r) =>
            r.method !== "ALL" && r.path.startsWith("/svc-admin/") &&
            !isEmbeddedAppRoute(admin.bed.config, r.path)
          )
          .map((r) => `${r.method} ${r.path}`),
      ),
    ].sort();
    const cases = new Map(ADMIN_CASES.map((c) => [c.route, c]));
    assert.deepEqual(registered.filter((route) => !cases.has(route)), [], "every route has a case");

    const findings: string[] = [];
    for (const route of registered) {
      const row = cases.get(route)!;
      const method = route.slice(0, route.indexOf(" "));
      await t.step(route, async () => {
        const request = await row.prepare(admin, "global");
        const before = await realmRows(db, tables, admin.realmId);
        const chain = await admin.chainLength();
        // The other realm holds a user with each address of the realm (the mail takeover took
        // exactly that): no answer may treat a shared address as a way in. The addresses
        // themselves are then the other realm's too; the ids are the realm's alone.
        await sql`INSERT INTO users (id, realm_id, email, created_at, updated_at)
          SELECT gen_random_uuid(), ${rival.realmId}, u.email, u.created_at, u.updated_at FROM users u
          WHERE u.realm_id = ${admin.realmId}
            AND NOT EXISTS (SELECT 1 FROM users o WHERE o.realm_id = ${rival.realmId} AND o.email = u.email)`
          .execute(db.db);
        const res = await rival.request(method, request.path, {
          body: request.body,
          headers: request.headers,
        });
        const text = await res.text();
        const problems: string[] = [];
        const expected = NOT_404[route]?.status ?? (route.includes("/:") ? 404 : null);
        if (expected !== null && res.status !== expected) {
          problems.push(`status ${res.status}, not ${expected}`);
        }
        const lower = text.toLowerCase();
        const leaked = [...identifiersOf(before, rivalIds)].filter((id) => lower.includes(id));
        if (leaked.length > 0) problems.push(`the answer shows the realm's ${leaked.join(", ")}`);
        if ((await admin.chainLength()) !== chain) problems.push("an entry was added to the realm's chain");
        const after = await realmRows(db, tables, admin.realmId);
        const changed = [
          ...before.filter((r) => !after.includes(r)).map((r) => `-${r.slice(0, 160)}`),
          ...after.filter((r) => !before.includes(r)).map((r) => `+${r.slice(0, 160)}`),
        ];
        if (changed.length > 0) problems.push(`the realm's rows changed: ${changed.join(" ")}`);
        if (problems.length > 0) findings.push(`${route}: ${problems.join("; ")} (${text.slice(0, 200)})`);
        assert.deepEqual(problems, [], text.slice(0, 500));
      });
    }
    await t.step("the realm's chain verifies", async () => {
      const report = await admin.bed.storage.adminAudit.verify(admin.realmId);
      assert.equal(report.valid, true, JSON.stringify(report.firstBad));
    });
    if (findings.length > 0) console.error(findings.join("\n"));
  } finally {
    await plugged.close();
  }
});
