/**
 * The ASP.NET Core Identity importer: from a JSON export, from CSV exports (`\copy … CSV HEADER`
 * form), and straight from a real Postgres database holding the Npgsql Identity schema (a fresh
 * database created and dropped by the test). Hashes are ASP.NET Identity's own test vectors.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { aspnetItems, aspnetTablesFromCsv, aspnetTablesFromJson } from "../../../core/imports/aspnet.ts";
import { runImport } from "../../../core/imports/engine.ts";
import type { ImportReport } from "../../../core/imports/model.ts";
import { verifyPasswordHash } from "../../../core/passwords/registry.ts";
import { openAspNetDatabase } from "../../../storage/imports/aspnet-postgres.ts";
import { TEST_DATABASE_URL } from "../../support/db.ts";
import { ASPNET_PASSWORD, ROLES, USER_CLAIMS, USER_ROLES, USERS } from "./aspnet_fixture.ts";
import { type ImportBed, importBed } from "./support.ts";

const NOW = new Date("2026-01-01T00:00:00Z");

async function checkImported(bed: ImportBed, report: ImportReport): Promise<void> {
  assert.deepEqual(report.users, { created: 4, updated: 0, skipped: 0, total: 4 });
  assert.deepEqual(report.credentials, { created: 3, updated: 0, skipped: 0, total: 3 });
  assert.deepEqual(report.roles, { created: 2, updated: 0, skipped: 0, total: 2 });
  assert.deepEqual(report.roleAssignments, { created: 3, updated: 0, skipped: 0, total: 3 });
  assert.deepEqual(
    report.issues.map((i) => `${i.severity}:${i.entity}:${i.key}`),
    ["Warning:Credential:yuri@example.test", "Error:User:phone-only"],
  );
  const vera = (await bed.storage.users.findByEmail(bed.realmId, "vera@example.test"))!;
  assert.equal(vera.emailVerified, true);
  assert.equal(vera.displayName, null, "a UserName equal to the email is no display name");
  assert.deepEqual(vera.attributes, {
    department: "finance",
    permission: ["invoices.read", "invoices.write"],
  });
  const roles = await bed.storage.roles.listAssignmentsForPrincipal("User", vera.id);
  const keys = await Promise.all(roles.map(async (a) => (await bed.storage.roles.get(a.roleId))!.key));
  assert.deepEqual(keys.sort(), ["imported:administrator", "imported:sales-team"]);
  for (const email of ["vera@example.test", "walt@example.test", "xena@example.test"]) {
    const user = (await bed.storage.users.findByEmail(bed.realmId, email))!;
    const credential = (await bed.storage.passwordCredentials.get(user.id))!;
    assert.equal(credential.algorithm, "framework-identity-v3");
    assert.equal(
      await verifyPasswordHash(credential.algorithm, credential.hash, ASPNET_PASSWORD),
      true,
      email,
    );
  }
  const walt = (await bed.storage.users.findByEmail(bed.realmId, "walt@example.test"))!;
  assert.equal(walt.status, "Suspended", "an active lockout becomes Suspended");
  assert.equal(walt.displayName, "walt");
  const xena = (await bed.storage.users.findByEmail(bed.realmId, "xena@example.test"))!;
  assert.equal(xena.status, "Active", "a lockout that ended is no suspension");
}

Deno.test("aspnet: a JSON export of the Identity tables; re-run changes nothing", async () => {
  const bed = await importBed();
  try {
    const json = JSON.stringify({
      AspNetUsers: USERS,
      AspNetRoles: ROLES,
      AspNetUserRoles: USER_ROLES,
      AspNetUserClaims: USER_CLAIMS,
    });
    const read = aspnetTablesFromJson(json);
    assert.ok("tables" in read);
    const options = { targetRealmId: bed.realmId, dryRun: false };
    await checkImported(bed, await runImport(bed.deps, options, aspnetItems(read.tables, NOW)));
    const before = await bed.rowCounts();
    const reread = aspnetTablesFromJson(json);
    assert.ok("tables" in reread);
    const again = await runImport(bed.deps, options, aspnetItems(reread.tables, NOW));
    assert.deepEqual(again.users, { created: 0, updated: 0, skipped: 4, total: 4 });
    assert.deepEqual(await bed.rowCounts(), before);
    assert.ok("error" in aspnetTablesFromJson("{"));
    assert.ok("error" in aspnetTablesFromJson(`{"Users": []}`));
  } finally {
    await bed.close();
  }
});

function csvOf(rows: Record<string, unknown>[]): string {
  const columns = Object.keys(rows[0]);
  const cell = (v: unknown) => {
    if (v === null || v === undefined) return "";
    const s = typeof v === "boolean" ? (v ? "t" : "f") : String(v);
    return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [columns.join(","), ...rows.map((r) => columns.map((c) => cell(r[c])).join(","))].join("\r\n") +
    "\r\n";
}

Deno.test("aspnet: CSV exports of the Identity tables", async () => {
  const bed = await importBed();
  try {
    const tables = aspnetTablesFromCsv({
      users: csvOf(USERS),
      roles: csvOf(ROLES),
      userRoles: csvOf(USER_ROLES),
      userClaims: csvOf(USER_CLAIMS),
    });
    await checkImported(
      bed,
      await runImport(bed.deps, { targetRealmId: bed.realmId, dryRun: false }, aspnetItems(tables, NOW)),
    );
  } finally {
    await bed.close();
  }
});

Deno.test("aspnet: straight from a Postgres database holding the Npgsql Identity schema", async () => {
  const name = `svc_aspnet_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const identity = postgres(url.href, { max: 1, onnotice: () => {} });
  const bed = await importBed();
  try {
    await identity.unsafe(
      await Deno.readTextFile(new URL("../../fixtures/imports/aspnet-identity-npgsql.sql", import.meta.url)),
    );
    for (const role of ROLES) await identity`INSERT INTO "AspNetRoles" ${identity(role)}`;
    for (const user of USERS) await identity`INSERT INTO "AspNetUsers" ${identity(user)}`;
    for (const link of USER_ROLES) await identity`INSERT INTO "AspNetUserRoles" ${identity(link)}`;
    for (const { Id: _, ...claim } of USER_CLAIMS) {
      await identity`INSERT INTO "AspNetUserClaims" ${identity(claim)}`;
    }
    const source = await openAspNetDatabase(url.href);
    try {
      await checkImported(
        bed,
        await runImport(
          bed.deps,
          { targetRealmId: bed.realmId, dryRun: false },
          aspnetItems(source.tables, NOW),
        ),
      );
    } finally {
      await source.close();
    }
    await assert.rejects(openAspNetDatabase(TEST_DATABASE_URL), /AspNetUsers/);
  } finally {
    await bed.close();
    await identity.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
    await admin.end();
  }
});
