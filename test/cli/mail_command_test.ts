/**
 * `svc mail list|show` (issue 14): the outbox of the embedded store, newest first with delivery
 * state; while a running server holds the data folder, one line pointing at SVC_ADMIN_TOKEN, and
 * with a token the running server's outbox over its HTTP API.
 */
import { strict as assert } from "node:assert";
import type { LockFiles } from "../../cli/data-dir-lock.ts";
import { parseMailArgs } from "../../cli/mail.ts";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import { ManualClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";
import { openDatabase } from "../../storage/open.ts";
import { createSqlMailOutboxStore } from "../../storage/sql/mail-outbox.ts";
import { adminBed } from "../support/admin.ts";
import { FAST_PASSWORD_ENV } from "../support/login.ts";

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

const message = (
  to: string,
  kind: string,
  subject: string,
  text: string,
  realmId = "9b0c3c1e-1111-4a4a-8888-000000000001",
) => ({
  realmId,
  userId: null,
  kind,
  to,
  from: "no-reply@localhost",
  subject,
  text,
  html: "<p>x</p>",
});

Deno.test("svc mail: arguments", () => {
  assert.deepEqual(parseMailArgs(["list"]), {
    sub: "list",
    to: undefined,
    kind: undefined,
    status: undefined,
    limit: 20,
  });
  assert.deepEqual(parseMailArgs(["list", "--status", "sent", "--limit", "5"]), {
    sub: "list",
    to: undefined,
    kind: undefined,
    status: "sent",
    limit: 5,
  });
  const id = "0b6e8a3e-6c4b-4d7c-9d55-2f1d3c7a9e10";
  assert.deepEqual(parseMailArgs(["show", id]), { sub: "show", id });
  for (
    const bad of [[], ["show"], ["show", "x"], ["list", "--status", "lost"], ["list", "--limit", "0"], [
      "drop",
    ]]
  ) {
    assert.equal(parseMailArgs(bad), null, bad.join(" "));
  }
});

Deno.test("svc mail list and show on the embedded store; a running server's lock names the way over HTTP", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-mail-cli-" });
  try {
    const setup = await openDatabase({ kind: "embedded", dataDir });
    await setup.ensureSchema();
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const store = createSqlMailOutboxStore(setup.db, { clock, random: cryptoRandom });
    const first = await store.add(
      message(
        "ada@example.org",
        "password_reset",
        "Reset",
        "Choose:\nhttps://x.test/account/reset?token=abc\n",
      ),
    );
    clock.advance(1000);
    const second = await store.add(message("bob@example.org", "invitation", "Join", "Join us"));
    await store.markDelivered(second.id);
    await setup.close();
    const env = { SVC_DATA_DIR: dataDir };

    const list = runtime(env, heldBy(-1));
    assert.equal(await runCli(["mail", "list"], list.adapter), 0, list.err.join("\n"));
    assert.equal(list.out.length, 2);
    assert.match(list.out[0], new RegExp(`^${second.id} .* sent .* invitation  bob@example\\.org  "Join"$`));
    assert.match(
      list.out[1],
      new RegExp(`^${first.id} .* pending \\(0 attempts, next .*\\)  password_reset`),
    );

    const pending = runtime(env, heldBy(-1));
    assert.equal(await runCli(["mail", "list", "--status", "pending"], pending.adapter), 0);
    assert.equal(pending.out.length, 1);

    const show = runtime(env, heldBy(-1));
    assert.equal(await runCli(["mail", "show", first.id], show.adapter), 0, show.err.join("\n"));
    assert.ok(show.out.includes("link: https://x.test/account/reset?token=abc"));
    assert.ok(show.out.includes("to: ada@example.org"));

    const missing = runtime(env, heldBy(-1));
    assert.equal(await runCli(["mail", "show", crypto.randomUUID()], missing.adapter), 1);

    await Deno.writeTextFile(
      `${dataDir}/svc.lock`,
      JSON.stringify({ pid: 424242, hostname: Deno.hostname(), startedAt: new Date().toISOString() }),
    );
    const locked = runtime(env, heldBy(424242));
    assert.equal(await runCli(["mail", "list"], locked.adapter), 1);
    assert.match(
      locked.err[0],
      /a running svc holds .*; set SVC_ADMIN_TOKEN to an administrator's access token/,
    );
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("svc mail reads a running server's outbox over HTTP with SVC_ADMIN_TOKEN", async () => {
  const admin = await adminBed();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => admin.app.fetch(req),
  );
  const dataDir = await Deno.makeTempDir({ prefix: "svc-mail-http-" });
  try {
    const sent = await admin.bed.storage.mailOutbox.add(
      message(
        "root@example.test",
        "password_reset",
        "Reset",
        "https://x.test/account/reset?token=zz",
        admin.realmId,
      ),
    );
    await Deno.writeTextFile(
      `${dataDir}/svc.lock`,
      JSON.stringify({ pid: 424242, hostname: Deno.hostname(), startedAt: new Date().toISOString() }),
    );
    const env = {
      SVC_DATA_DIR: dataDir,
      SVC_BASE_URL: `http://127.0.0.1:${server.addr.port}`,
      SVC_ADMIN_TOKEN: admin.tokens.global,
    };
    const list = runtime(env, heldBy(424242));
    assert.equal(await runCli(["mail", "list"], list.adapter), 0, list.err.join("\n"));
    assert.equal(list.out.length, 1);
    assert.match(list.out[0], new RegExp(`^${sent.id} .* password_reset  root@example\\.test`));

    const show = runtime(env, heldBy(424242));
    assert.equal(await runCli(["mail", "show", sent.id], show.adapter), 0, show.err.join("\n"));
    assert.ok(show.out.includes("link: https://x.test/account/reset?token=zz"));

    const refused = runtime({ ...env, SVC_ADMIN_TOKEN: admin.tokens.plain }, heldBy(424242));
    assert.equal(await runCli(["mail", "list"], refused.adapter), 1);
    assert.match(refused.err[0], /answered 403/);
  } finally {
    await server.shutdown();
    await admin.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
