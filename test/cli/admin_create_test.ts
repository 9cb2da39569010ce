/**
 * `svc admin create` (issue 27): the first administrator from the terminal, on the embedded
 * store directly, with the setup link's rules: the password policy, asked (never a flag) or read
 * from stdin, refused once an administrator exists, audited as `System` `svc:cli`, the password
 * never printed. One run goes through a real process with `--password-stdin`.
 */
import { strict as assert } from "node:assert";
import { parseAdminArgs } from "../../cli/admin.ts";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import { hasAdministrator } from "../../core/accounts/first-admin.ts";
import { systemClock } from "../../core/clock.ts";
import { cryptoRandom } from "../../core/random.ts";
import { openDatabase } from "../../storage/open.ts";
import { createSqlStorage } from "../../storage/storage.ts";
import { FAST_PASSWORD_ENV } from "../support/login.ts";
import { ROOT } from "../support/server.ts";

function runtime(env: Record<string, string>, answers: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const asked: { question: string; secret: boolean }[] = [];
  const adapter: RuntimeAdapter = {
    name: "deno",
    env: () => ({ ...FAST_PASSWORD_ENV, ...env }),
    readTextFile: (path) => Deno.readTextFile(path),
    serve: () => Promise.reject(new Error("not in this test")),
    onShutdown: () => {},
    readLine: (question, options) => {
      asked.push({ question, secret: options?.secret ?? false });
      return Promise.resolve(answers.shift() ?? null);
    },
    print: (line) => out.push(line),
    printError: (line) => err.push(line),
  };
  return { adapter, out, err, asked };
}

Deno.test("svc admin: arguments", () => {
  assert.deepEqual(parseAdminArgs(["create", "--email", "a@example.test"]), {
    passwordStdin: false,
    email: "a@example.test",
  });
  assert.deepEqual(
    parseAdminArgs(["create", "--email=a@example.test", "--password-stdin", "--name", "Ada"]),
    {
      passwordStdin: true,
      email: "a@example.test",
      name: "Ada",
    },
  );
  assert.equal(parseAdminArgs(["create", "--password", "secret"]), null, "no password flag");
  assert.equal(parseAdminArgs(["create", "--email"]), null);
  assert.equal(parseAdminArgs(["delete"]), null);
  assert.equal(parseAdminArgs([]), null);
});

Deno.test("svc admin create: the password policy, once, audited, nothing secret printed", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc_admin_create_" });
  const env = { SVC_DATA_DIR: dataDir };
  try {
    let run = runtime(env, ["short"]);
    assert.equal(await runCli(["admin", "create", "--email", "admin@example.test"], run.adapter), 1);
    assert.match(run.err.join("\n"), /at least 8 characters/);
    assert.deepEqual(run.asked.map((a) => a.secret), [true], "the password is asked, not echoed");

    run = runtime(env, ["Admin@Example.test", "a good long password"]);
    assert.equal(await runCli(["admin", "create", "--name", "Ada"], run.adapter), 0, run.err.join("\n"));
    assert.match(run.out.join("\n"), /administrator admin@example\.test .* created in realm default/);
    assert.ok(!run.out.concat(run.err).join("\n").includes("a good long password"), "never printed");

    run = runtime(env, ["another long password"]);
    assert.equal(await runCli(["admin", "create", "--email", "second@example.test"], run.adapter), 1);
    assert.match(run.err.join("\n"), /has an administrator already/);

    const database = await openDatabase({ kind: "embedded", dataDir });
    try {
      const storage = createSqlStorage(database, { clock: systemClock, random: cryptoRandom });
      const realm = (await storage.realms.getDefault())!;
      assert.ok(await hasAdministrator(storage, realm.id));
      const user = (await storage.users.findByEmail(realm.id, "admin@example.test"))!;
      assert.equal(user.displayName, "Ada");
      assert.ok(await storage.passwordCredentials.get(user.id));
      assert.equal(await storage.users.findByEmail(realm.id, "second@example.test"), null);
      const created = (await storage.adminAudit.list(realm.id, { limit: 100 })).filter((e) =>
        e.action === "user.create"
      );
      assert.deepEqual(created.map((e) => [e.actorKind, e.actorId]), [["System", "svc:cli"]]);
    } finally {
      await database.close();
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("svc admin create: a real process reads the password from stdin", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc_admin_create_proc_" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "cli/deno.ts",
        "admin",
        "create",
        "--email",
        "ops@example.test",
        "--password-stdin",
      ],
      cwd: ROOT,
      env: { ...FAST_PASSWORD_ENV, SVC_DATA_DIR: dataDir },
      clearEnv: false,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("piped long password\n"));
    await writer.close();
    const { code, stdout, stderr } = await child.output();
    const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    assert.equal(code, 0, text);
    assert.match(text, /administrator ops@example\.test/);
    assert.ok(!text.includes("piped long password"));
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
