/**
 * `svc break-glass create|rotate --realm …` (issue 12): on the embedded store, the generated
 * password is printed once and works; a second create is refused; rotate prints a new one (the
 * old stops); everything audited as `System`; while a running server holds the data folder the
 * command refuses with one line pointing at the HTTP rotation.
 */
import { strict as assert } from "node:assert";
import { parseBreakGlassArgs } from "../../cli/break-glass.ts";
import type { LockFiles } from "../../cli/data-dir-lock.ts";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import { systemClock } from "../../core/clock.ts";
import { argon2idParamsFromConfig } from "../../core/passwords/argon2-params.ts";
import { createPasswordHasher } from "../../core/passwords/create.ts";
import { PasswordService } from "../../core/passwords/service.ts";
import { loadConfig } from "../../core/config/mod.ts";
import { cryptoRandom } from "../../core/random.ts";
import { openDatabase } from "../../storage/open.ts";
import { createSqlStorage } from "../../storage/storage.ts";
import { FAST_PASSWORD_ENV } from "../support/login.ts";
import { seeder } from "../support/seed.ts";

function runtime(env: Record<string, string>, lockFiles?: LockFiles) {
  const out: string[] = [];
  const err: string[] = [];
  const adapter: RuntimeAdapter = {
    name: "deno",
    env: () => ({ ...FAST_PASSWORD_ENV, ...env }),
    readTextFile: (path) => Deno.readTextFile(path),
    serve: () => Promise.reject(new Error("not in this test")),
    onShutdown: () => {},
    lockFiles,
    print: (line) => out.push(line),
    printError: (line) => err.push(line),
  };
  return { adapter, out, err };
}

/** Lock files on disk where the lock's holder (another pid on this host) counts as alive. */
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

Deno.test("svc break-glass: arguments", () => {
  assert.deepEqual(parseBreakGlassArgs(["create", "--realm", "acme"]), { sub: "create", realm: "acme" });
  assert.deepEqual(parseBreakGlassArgs(["create", "--realm=acme", "--email", "bg@example.test"]), {
    sub: "create",
    realm: "acme",
    email: "bg@example.test",
  });
  assert.deepEqual(parseBreakGlassArgs(["rotate", "--realm", "acme"]), { sub: "rotate", realm: "acme" });
  for (
    const bad of [[], ["create"], ["rotate", "--email", "x"], ["drop", "--realm", "a"], ["create", "--realm"]]
  ) {
    assert.equal(parseBreakGlassArgs(bad), null, bad.join(" "));
  }
});

Deno.test("svc break-glass create and rotate on the embedded store; refused while a server holds it", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-break-glass-cli-" });
  try {
    const setup = await openDatabase({ kind: "embedded", dataDir });
    await setup.ensureSchema();
    const realm = await seeder(setup.db).realm("acme");
    await setup.close();
    const env = { SVC_DATA_DIR: dataDir };

    const created = runtime(env, heldBy(-1));
    assert.equal(
      await runCli(["break-glass", "create", "--realm", "acme"], created.adapter),
      0,
      created.err.join("\n"),
    );
    assert.match(
      created.out[0],
      /^break-glass: account break-glass@break-glass\.invalid \(user [0-9a-f-]{36}\) created in realm acme$/,
    );
    const password = /^password: (\S{32})$/.exec(created.out[1])![1];

    const twice = runtime(env, heldBy(-1));
    assert.equal(await runCli(["break-glass", "create", "--realm", realm], twice.adapter), 1);
    assert.match(twice.err[0], /already has a break-glass account/);

    const rotated = runtime(env, heldBy(-1));
    assert.equal(
      await runCli(["break-glass", "rotate", "--realm", realm], rotated.adapter),
      0,
      rotated.err.join("\n"),
    );
    const next = /^password: (\S{32})$/.exec(rotated.out[1])![1];
    assert.notEqual(next, password);

    const database = await openDatabase({ kind: "embedded", dataDir });
    try {
      const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
      const account = (await storage.breakGlass.account(realm))!;
      const credential = (await storage.passwordCredentials.get(account.userId))!;
      const passwords = new PasswordService({
        hasher: createPasswordHasher({ workers: 0 }),
        params: argon2idParamsFromConfig(loadConfig({ env: FAST_PASSWORD_ENV }).config.password),
      });
      assert.equal((await passwords.verify(credential, next)).valid, true);
      assert.equal((await passwords.verify(credential, password)).valid, false);
      const entries = await storage.adminAudit.list(realm, { limit: 100 });
      const mine = entries.filter((e) => e.action.startsWith("breakglass."));
      assert.deepEqual(mine.map((e) => e.action), ["breakglass.account.create", "breakglass.rotate"]);
      assert.ok(mine.every((e) => e.actorKind === "System" && e.actorId === "svc:cli"));
      assert.ok(!JSON.stringify(entries).includes(next), "never the password");
      assert.equal((await storage.adminAudit.verify(realm)).valid, true);
    } finally {
      await database.close();
    }

    // A running server (a live pid on this host) holds the folder.
    await Deno.writeTextFile(
      `${dataDir}/svc.lock`,
      JSON.stringify({ pid: 424242, hostname: Deno.hostname(), startedAt: new Date().toISOString() }),
    );
    const locked = runtime(env, heldBy(424242));
    assert.equal(await runCli(["break-glass", "rotate", "--realm", "acme"], locked.adapter), 1);
    assert.deepEqual(locked.err, [
      `break-glass: a running svc holds ${dataDir}; rotate over HTTP with POST /svc-admin/break-glass/rotate, or stop the server and run this again`,
    ]);
    assert.deepEqual(locked.out, []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
