/**
 * The CLI through a running server (issue 27): the data folder's lock names the URL the server
 * listens at, so `svc mail` and `svc import` reach it whatever `SVC_BASE_URL` says; `svc login`
 * stores the administrator's tokens (mode 0600, never printed), which the commands use and
 * refresh; `svc import` takes a realm name there; `svc logout` forgets the token.
 */
import { strict as assert } from "node:assert";
import { lockDataDir, type LockFiles } from "../../cli/data-dir-lock.ts";
import { nodeWriteSecretFile } from "../../cli/node-secret-file.ts";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import { parseLoginArgs } from "../../cli/server-session.ts";
import { adminBed } from "../support/admin.ts";
import { FAST_PASSWORD_ENV } from "../support/login.ts";

const FIXTURES = new URL("../fixtures/imports/", import.meta.url);

function runtime(env: Record<string, string>, lockFiles: LockFiles, answers: string[] = []) {
  const out: string[] = [];
  const err: string[] = [];
  const adapter: RuntimeAdapter = {
    name: "deno",
    env: () => ({ ...FAST_PASSWORD_ENV, ...env }),
    readTextFile: (path) => Deno.readTextFile(path),
    serve: () => Promise.reject(new Error("not in this test")),
    onShutdown: () => {},
    lockFiles,
    readLine: () => Promise.resolve(answers.shift() ?? null),
    writeSecretFile: nodeWriteSecretFile,
    print: (line) => out.push(line),
    printError: (line) => err.push(line),
  };
  return { adapter, out, err };
}

/** Lock files on disk where the holder `pid` (another process on this host) counts as alive. */
function files(pid: number): LockFiles {
  return {
    pid,
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
    replaceFile: (path, text) => Deno.writeTextFile(path, text),
    isProcessAlive: (p) => p === pid,
  };
}

Deno.test("svc login: arguments", () => {
  assert.deepEqual(parseLoginArgs(["--email", "a@b.test", "--url", "http://127.0.0.1:9"]), {
    passwordStdin: false,
    email: "a@b.test",
    url: "http://127.0.0.1:9",
  });
  assert.equal(parseLoginArgs(["--url", "ftp://x"]), null);
  assert.equal(parseLoginArgs(["--password", "x"]), null);
  assert.equal(parseLoginArgs(["--email", "a@b.test"], ["--url"]), null);
});

Deno.test("svc login, mail and import find the running server from the lock and use the stored token", async () => {
  const admin = await adminBed();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => admin.app.fetch(req),
  );
  const dir = await Deno.makeTempDir({ prefix: "svc-session-" });
  const dataDir = `${dir}/data`;
  const credentials = `${dir}/config/svc/credentials.json`;
  const serverPid = 424242;
  try {
    // The "server" takes the lock and announces where it listens, as svc start does.
    const lock = await lockDataDir(files(serverPid), dataDir, new Date());
    const url = `http://127.0.0.1:${server.addr.port}`;
    await lock.announce(url);
    assert.equal(JSON.parse(await Deno.readTextFile(`${dataDir}/svc.lock`)).url, url);
    const sent = await admin.bed.storage.mailOutbox.add({
      realmId: admin.realmId,
      userId: null,
      kind: "password_reset",
      to: "root@example.test",
      from: "no-reply@localhost",
      subject: "Reset",
      text: "https://x.test/account/reset?token=zz",
      html: "<p>x</p>",
    });
    // SVC_BASE_URL points elsewhere (the default port): the lock's URL wins.
    const env = { SVC_DATA_DIR: dataDir, SVC_CREDENTIALS_FILE: credentials };
    const cli = { ...files(serverPid), pid: Deno.pid };

    const before = runtime(env, cli);
    assert.equal(await runCli(["mail", "list"], before.adapter), 1);
    assert.match(before.err[0], /run "svc login" once/);

    const wrong = runtime(env, cli, ["not the password"]);
    assert.equal(await runCli(["login", "--email", "root@example.test"], wrong.adapter), 1);
    assert.match(wrong.err[0], /^login: /);

    const login = runtime(env, cli, ["bootstrap secret"]);
    assert.equal(
      await runCli(["login", "--email", "root@example.test"], login.adapter),
      0,
      login.err.join("\n"),
    );
    assert.match(login.out[0], new RegExp(`signed in to ${url} as root@example\\.test`));
    const stored = JSON.parse(await Deno.readTextFile(credentials)).servers[url];
    assert.ok(stored.accessToken && stored.refreshToken);
    assert.ok(!login.out.join("\n").includes(stored.accessToken), "the token is never printed");
    assert.equal((await Deno.stat(credentials)).mode! & 0o777, 0o600);

    const list = runtime(env, cli);
    assert.equal(await runCli(["mail", "list"], list.adapter), 0, list.err.join("\n"));
    assert.match(list.out.join("\n"), new RegExp(sent.id));

    // A realm by name, through the server.
    const file = new URL("auth0-users.ndjson", FIXTURES).pathname;
    const imported = runtime(env, cli);
    assert.equal(
      await runCli(["import", "auth0", file, "--realm", "default", "--json"], imported.adapter),
      0,
      imported.err.join("\n"),
    );
    assert.ok(await admin.bed.storage.users.findByEmail(admin.realmId, "bo@example.test"));

    // An access token that ran out is refreshed with the stored refresh token, and the file rewritten.
    const expired = JSON.parse(await Deno.readTextFile(credentials));
    expired.servers[url].expiresAt = 0;
    await Deno.writeTextFile(credentials, JSON.stringify(expired));
    const refreshed = runtime(env, cli);
    assert.equal(await runCli(["mail", "list"], refreshed.adapter), 0, refreshed.err.join("\n"));
    const after = JSON.parse(await Deno.readTextFile(credentials)).servers[url];
    assert.notEqual(after.refreshToken, stored.refreshToken, "the refresh token rotated");
    assert.ok(after.expiresAt > Date.now());

    const logout = runtime(env, cli);
    assert.equal(await runCli(["logout"], logout.adapter), 0);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(credentials)).servers, {});
    const gone = runtime(env, cli);
    assert.equal(await runCli(["mail", "list"], gone.adapter), 1);
    await lock.release();
  } finally {
    await server.shutdown();
    await admin.close();
    await Deno.remove(dir, { recursive: true });
  }
});
