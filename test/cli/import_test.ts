/**
 * `svc import` (issue 15): arguments; imports on the embedded store directly (the Auth0 file
 * streamed, a Keycloak directory export, a dry run as JSON), audited as `System`; while a running
 * server holds the data folder the export goes to that server (`SVC_ADMIN_TOKEN`), or the
 * command says what to do.
 */
import { strict as assert } from "node:assert";
import { importViaServer, parseImportArgs } from "../../cli/import.ts";
import type { LockFiles } from "../../cli/data-dir-lock.ts";
import { nodeImportFiles } from "../../cli/node-import-files.ts";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { openDatabase } from "../../storage/open.ts";
import { createSqlStorage } from "../../storage/storage.ts";
import { systemClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";
import { adminBed } from "../support/admin.ts";
import { FAST_PASSWORD_ENV } from "../support/login.ts";
import { seeder } from "../support/seed.ts";

const FIXTURES = new URL("../fixtures/imports/", import.meta.url);

function runtime(env: Record<string, string>, lockFiles?: LockFiles) {
  const out: string[] = [];
  const err: string[] = [];
  const progress: string[] = [];
  const adapter: RuntimeAdapter = {
    name: "deno",
    env: () => ({ ...FAST_PASSWORD_ENV, ...env }),
    readTextFile: (path) => Deno.readTextFile(path),
    serve: () => Promise.reject(new Error("not in this test")),
    onShutdown: () => {},
    lockFiles,
    importFiles: nodeImportFiles,
    progress: (line) => progress.push(line),
    print: (line) => out.push(line),
    printError: (line) => err.push(line),
  };
  return { adapter, out, err, progress };
}

function heldBy(pid: number): LockFiles {
  return {
    pid: Deno.pid,
    hostname: Deno.hostname(),
    makeDirectory: (path) => Deno.mkdir(path, { recursive: true }),
    async createExclusive(path, text) {
      try {
        await Deno.writeTextFile(path, text, { createNew: true });
        return true;
      } catch (err) {
        if (err instanceof Deno.errors.AlreadyExists) return false;
        throw err;
      }
    },
    readTextFile: (path) => Deno.readTextFile(path),
    removeFile: (path) => Deno.remove(path).catch(() => {}),
    isProcessAlive: (p) => p === pid,
  };
}

Deno.test("svc import: arguments", () => {
  assert.deepEqual(parseImportArgs(["auth0", "users.ndjson", "--realm", "acme"]), {
    kind: "auth0",
    source: "users.ndjson",
    realm: "acme",
    dryRun: false,
    json: false,
  });
  assert.equal(parseImportArgs(["clients", "c.json", "--realm=acme", "--dry-run", "--json"])?.dryRun, true);
  for (
    const bad of [
      [],
      ["auth0", "f"],
      ["okta", "f", "--realm", "a"],
      ["auth0", "--realm", "a"],
      ["auth0", "f", "g", "--realm", "a"],
      ["auth0", "f", "--realm", "a", "--force"],
    ]
  ) {
    assert.equal(parseImportArgs(bad), null, bad.join(" "));
  }
});

Deno.test("svc import on the embedded store: auth0 streamed, keycloak directory export, dry run as JSON", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-import-cli-" });
  const exportDir = await Deno.makeTempDir({ prefix: "svc-import-kc-" });
  try {
    const setup = await openDatabase({ kind: "embedded", dataDir });
    await setup.ensureSchema();
    await seeder(setup.db).realm("acme");
    await setup.close();
    const env = { SVC_DATA_DIR: dataDir };

    const dry = runtime(env, heldBy(-1));
    const auth0 = new URL("auth0-users.ndjson", FIXTURES).pathname;
    assert.equal(
      await runCli(["import", "auth0", auth0, "--realm", "acme", "--dry-run", "--json"], dry.adapter),
      0,
    );
    const dryReport = JSON.parse(dry.out.join("\n"));
    assert.equal(dryReport.dryRun, true);
    assert.deepEqual(dryReport.users, { created: 5, updated: 0, skipped: 0, total: 5 });

    const real = runtime(env, heldBy(-1));
    assert.equal(
      await runCli(["import", "auth0", auth0, "--realm", "acme"], real.adapter),
      0,
      real.err.join("\n"),
    );
    assert.match(real.out[1], /^users\s+5\s+0\s+0\s+5$/);
    assert.ok(real.out.some((l) => l.startsWith("Error User line 5:")));
    assert.ok(real.progress.length > 0, "progress lines on a terminal");

    // A directory export: the realm file and a users file.
    const { users, ...realmFile } = JSON.parse(
      await Deno.readTextFile(new URL("keycloak-realm.json", FIXTURES)),
    );
    await Deno.writeTextFile(`${exportDir}/acme-realm.json`, JSON.stringify(realmFile));
    await Deno.writeTextFile(`${exportDir}/acme-users-0.json`, JSON.stringify({ realm: "acme", users }));
    const kc = runtime(env, heldBy(-1));
    assert.equal(await runCli(["import", "keycloak", exportDir, "--realm", "acme", "--json"], kc.adapter), 0);
    const kcReport = JSON.parse(kc.out.join("\n"));
    assert.deepEqual(kcReport.users, { created: 3, updated: 0, skipped: 0, total: 3 });

    const database = await openDatabase({ kind: "embedded", dataDir });
    try {
      const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
      const realm = (await storage.realms.getByName("acme"))!;
      assert.ok(await storage.users.findByEmail(realm.id, "ana@example.test"));
      assert.ok(await storage.users.findByEmail(realm.id, "alice@acme.test"));
      const entries = await storage.adminAudit.list(realm.id);
      assert.deepEqual(entries.map((e) => [e.action, e.actorKind, e.actorId]), [
        ["import.auth0", "System", "svc:cli"],
        ["import.keycloak", "System", "svc:cli"],
      ]);
    } finally {
      await database.close();
    }

    const unknown = runtime(env, heldBy(-1));
    assert.equal(await runCli(["import", "auth0", auth0, "--realm", "nope"], unknown.adapter), 1);
    assert.deepEqual(unknown.err, ['import: no realm "nope"']);

    // A running server holds the folder, and no token is set: one line saying what to do.
    await Deno.writeTextFile(
      `${dataDir}/svc.lock`,
      JSON.stringify({ pid: 424242, hostname: Deno.hostname(), startedAt: new Date().toISOString() }),
    );
    const locked = runtime(env, heldBy(424242));
    assert.equal(await runCli(["import", "auth0", auth0, "--realm", "acme"], locked.adapter), 1);
    assert.match(locked.err[0], /running svc holds the embedded store; set SVC_ADMIN_TOKEN/);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(exportDir, { recursive: true });
  }
});

Deno.test("svc import through the running server: the export goes to POST /svc-admin/imports/{kind}", async () => {
  const bed = await adminBed();
  try {
    const config = loadConfig({ env: FAST_PASSWORD_ENV }).config;
    const io = runtime({ SVC_ADMIN_TOKEN: bed.tokens.global });
    const fetcher = ((url: URL, init: RequestInit) =>
      Promise.resolve(bed.app.request(url.pathname + url.search, init))) as unknown as typeof fetch;
    const file = new URL("auth0-users.ndjson", FIXTURES).pathname;
    const args = { kind: "auth0" as const, source: file, realm: bed.realmId, dryRun: false, json: true };
    assert.equal(await importViaServer(args, config, io.adapter, fetcher), 0, io.err.join("\n"));
    assert.deepEqual(JSON.parse(io.out.join("\n")).users, { created: 5, updated: 0, skipped: 0, total: 5 });
    assert.ok(await bed.bed.storage.users.findByEmail(bed.realmId, "bo@example.test"));

    const byName = runtime({ SVC_ADMIN_TOKEN: bed.tokens.global });
    // A realm by name is looked up on the server (issue 27).
    assert.equal(await importViaServer({ ...args, realm: "default" }, config, byName.adapter, fetcher), 0);
    const unknownName = runtime({ SVC_ADMIN_TOKEN: bed.tokens.global });
    assert.equal(await importViaServer({ ...args, realm: "nope" }, config, unknownName.adapter, fetcher), 1);
    const refused = runtime({ SVC_ADMIN_TOKEN: bed.tokens.orgA });
    assert.equal(await importViaServer(args, config, refused.adapter, fetcher), 1);
    assert.match(refused.err[0], /answered 403/);
  } finally {
    await bed.close();
  }
});
