/**
 * The Auth0 importer against Auth0's documented shapes (the password-hash export with `_id.$oid`
 * and `passwordHash`, the bulk import schema with `custom_password_hash`), broken lines included;
 * re-runs and dry runs.
 */
import assert from "node:assert/strict";
import { auth0Items } from "../../../core/imports/auth0.ts";
import { runImport } from "../../../core/imports/engine.ts";
import { splitLines } from "../../../core/imports/lines.ts";
import type { ImportItem } from "../../../core/imports/model.ts";
import { verifyPasswordHash } from "../../../core/passwords/registry.ts";
import { drivers } from "../../support/db.ts";
import { importBed } from "./support.ts";

const FIXTURE = await Deno.readTextFile(
  new URL("../../fixtures/imports/auth0-users.ndjson", import.meta.url),
);

/** The fixture cut into awkward chunks (lines split across chunks). */
function chunks(text: string, size = 37): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

Deno.test("splitLines: lines across chunk borders, CRLF, a last line without a break, overlong lines", async () => {
  const lines = [];
  for await (const l of splitLines(["a\r\nb", "c\n", "x".repeat(12), "y\nlast"], 10)) lines.push(l);
  assert.deepEqual(lines, [
    { number: 1, text: "a" },
    { number: 2, text: "bc" },
    { number: 3, overlong: true },
    { number: 4, text: "last" },
  ]);
});

Deno.test("auth0: users, verified flags, bcrypt hashes, warnings and errors; the import goes on", async () => {
  const bed = await importBed();
  try {
    const report = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: false },
      auth0Items(chunks(FIXTURE)),
    );
    assert.deepEqual(report.users, { created: 5, updated: 0, skipped: 0, total: 5 });
    assert.deepEqual(report.credentials, { created: 2, updated: 0, skipped: 0, total: 2 });
    const errors = report.issues.filter((i) => i.severity === "Error").map((i) => i.key);
    assert.deepEqual(errors, ["line 5", "line 6", "line 7"]);
    const warnings = report.issues.filter((i) => i.severity === "Warning").map((i) => i.key);
    assert.deepEqual(warnings, ["cy@example.test", "ed@example.test"]);

    const ana = (await bed.storage.users.findByEmail(bed.realmId, "ana@example.test"))!;
    assert.equal(ana.emailVerified, false);
    const anaCredential = (await bed.storage.passwordCredentials.get(ana.id))!;
    assert.equal(anaCredential.algorithm, "bcrypt");
    assert.equal(await verifyPasswordHash("bcrypt", anaCredential.hash, "U*U"), true);
    const bo = (await bed.storage.users.findByEmail(bed.realmId, "bo@example.test"))!;
    assert.equal(bo.displayName, "Bo Brown");
    assert.deepEqual(bo.attributes, { plan: "gold", tier: 2 });
    const boCredential = (await bed.storage.passwordCredentials.get(bo.id))!;
    assert.equal(await verifyPasswordHash("bcrypt", boCredential.hash, "bo password"), true);
    const cy = (await bed.storage.users.findByEmail(bed.realmId, "cy@example.test"))!;
    assert.equal(await bed.storage.passwordCredentials.get(cy.id), null, "unsupported hash: password-less");
    const di = (await bed.storage.users.findByEmail(bed.realmId, "di@example.test"))!;
    assert.equal(di.status, "Suspended");

    // A re-run updates nothing and duplicates nothing.
    const before = await bed.rowCounts();
    const again = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: false },
      auth0Items([FIXTURE]),
    );
    assert.deepEqual(again.users, { created: 0, updated: 0, skipped: 5, total: 5 });
    assert.deepEqual(again.credentials, { created: 0, updated: 0, skipped: 2, total: 2 });
    assert.deepEqual(await bed.rowCounts(), before);
  } finally {
    await bed.close();
  }
});

Deno.test("auth0: suspended is sticky, a re-import never reactivates", async () => {
  const bed = await importBed();
  try {
    const run = (line: string) =>
      runImport(bed.deps, { targetRealmId: bed.realmId, dryRun: false }, auth0Items([line]));
    await run(`{"email":"x@example.test","blocked":true}`);
    const report = await run(`{"email":"x@example.test","blocked":false,"email_verified":true}`);
    assert.deepEqual(report.users, { created: 0, updated: 1, skipped: 0, total: 1 });
    const user = (await bed.storage.users.findByEmail(bed.realmId, "x@example.test"))!;
    assert.equal(user.status, "Suspended");
    assert.equal(user.emailVerified, true);
  } finally {
    await bed.close();
  }
});

Deno.test("auth0: U+0000 in a line is refused as an Error; the rest imports", async () => {
  const bed = await importBed();
  try {
    const report = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: false },
      auth0Items([`{"email":"nul@example.test","name":"a\\u0000b"}\n{"email":"ok@example.test"}\n`]),
    );
    assert.deepEqual(report.users, { created: 1, updated: 0, skipped: 1, total: 2 });
    assert.equal(report.issues[0].severity, "Error");
    assert.equal(await bed.storage.users.findByEmail(bed.realmId, "nul@example.test"), null);
  } finally {
    await bed.close();
  }
});

Deno.test("auth0: a dry run writes nothing and reports the counts of the real run", async () => {
  const bed = await importBed();
  try {
    const before = await bed.rowCounts();
    const dry = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: true },
      auth0Items(chunks(FIXTURE)),
    );
    assert.equal(dry.dryRun, true);
    assert.deepEqual(await bed.rowCounts(), before);
    const real = await runImport(
      bed.deps,
      { targetRealmId: bed.realmId, dryRun: false },
      auth0Items([FIXTURE]),
    );
    assert.deepEqual({ ...dry, dryRun: false }, real);
  } finally {
    await bed.close();
  }
});

Deno.test("imports never create the realm: an unknown realm is 404 before anything is read", async () => {
  const bed = await importBed();
  try {
    let read = false;
    const items = (async function* () {
      read = true;
      yield* auth0Items([FIXTURE]);
    })();
    await assert.rejects(
      runImport(bed.deps, { targetRealmId: crypto.randomUUID(), dryRun: false }, items),
      (e: Error & { status?: number }) => e.status === 404,
    );
    assert.equal(read, false);
  } finally {
    await bed.close();
  }
});

for (const driver of drivers) {
  Deno.test(`auth0 (${driver.name}): a too deep or too wide line is an Error for that line; the rest imports`, async () => {
    const bed = await importBed(await driver.open());
    try {
      const deep = `{"email":"deep@example.test","app_metadata":${'{"a":'.repeat(5_000)}1${
        "}".repeat(5_000)
      }}`;
      const wide = JSON.stringify({
        email: "wide@example.test",
        app_metadata: Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i])),
      });
      const report = await runImport(
        bed.deps,
        { targetRealmId: bed.realmId, dryRun: false },
        auth0Items([`{"email":"one@example.test"}\n${deep}\n${wide}\n{"email":"two@example.test"}\n`]),
      );
      assert.deepEqual(report.users, { created: 2, updated: 0, skipped: 0, total: 2 });
      assert.deepEqual(report.issues.map((i) => [i.severity, i.key, i.message]), [
        ["Error", "line 2", "The JSON is nested more than 160 levels deep. The line was not imported."],
        ["Error", "line 3", "A JSON object or array has more than 1000 members. The line was not imported."],
      ]);
      assert.notEqual(await bed.storage.users.findByEmail(bed.realmId, "two@example.test"), null);
      assert.equal(await bed.storage.users.findByEmail(bed.realmId, "deep@example.test"), null);
    } finally {
      await bed.close();
    }
  });

  Deno.test(`import engine (${driver.name}): a user whose attributes break the JSON limits is an Error; the rest imports`, async () => {
    const bed = await importBed(await driver.open());
    try {
      let attributes: Record<string, unknown> = { leaf: true };
      for (let i = 0; i < 5_000; i++) attributes = { a: attributes };
      const user = (email: string, attrs: Record<string, unknown>): ImportItem => ({
        kind: "user",
        user: {
          email,
          displayName: null,
          emailVerified: false,
          suspended: false,
          credential: null,
          roleKeys: [],
          groupKeys: [],
          attributes: attrs,
        },
      });
      const report = await runImport(
        { ...bed.deps, jsonLimits: { maxDepth: 8, maxMembers: 1000 } },
        { targetRealmId: bed.realmId, dryRun: false },
        [
          user("one@example.test", { team: "a" }),
          user("deep@example.test", attributes),
          user("two@example.test", {}),
        ],
      );
      assert.deepEqual(report.users, { created: 2, updated: 0, skipped: 1, total: 3 });
      assert.deepEqual(report.issues.map((i) => [i.severity, i.key, i.message]), [
        [
          "Error",
          "deep@example.test",
          "The user's attributes are refused: The JSON is nested more than 8 levels deep.",
        ],
      ]);
      assert.equal(await bed.storage.users.findByEmail(bed.realmId, "deep@example.test"), null);
    } finally {
      await bed.close();
    }
  });
}
