/**
 * Starts the real server as a subprocess under Deno, Bun and Node (through tsx), on a fresh
 * embedded data folder and a free port, and checks the health endpoints and a clean stop.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { TEST_DATABASE_URL } from "../support/db.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BIN = `${ROOT}node_modules/.bin/`;

const RUNTIMES: Record<string, string[]> = {
  deno: [`${BIN}deno`, "run", "-A", "cli/deno.ts"],
  bun: [`${BIN}bun`, "cli/bun.ts"],
  node: [`${BIN}tsx`, "cli/node.ts"],
};

/** How long a server may take to print its address (a cold start compiles and opens PGlite). */
const START_TIMEOUT_MS = 60_000;

/** The environment without any SVC_ variable of the caller, plus `env`. */
function childEnv(env: Record<string, string>): Record<string, string> {
  const base = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([name]) => !name.startsWith("SVC_")),
  );
  return { ...base, NO_COLOR: "1", ...env };
}

/** Collects a stream's text; `lines` sees each complete line as it arrives. */
function collect(stream: ReadableStream<Uint8Array>, onLine?: (line: string) => void): Promise<string> {
  return (async () => {
    let text = "";
    let pending = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) onLine?.(line);
    }
    return text;
  })();
}

interface Server {
  url: string;
  stdout: Promise<string>;
  stderr: Promise<string>;
  /** Sends SIGTERM and resolves to the exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

async function startServer(runtime: string, env: Record<string, string>): Promise<Server> {
  const [cmd, ...args] = RUNTIMES[runtime];
  const child = new Deno.Command(cmd, {
    args: [...args, "start"],
    cwd: ROOT,
    env: childEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();

  const { promise: listening, resolve, reject } = Promise.withResolvers<string>();
  const stdout = collect(child.stdout, (line) => {
    const match = /^svc listening on (http:\/\/\S+) \(storage: (?:embedded at .+|postgres)\)$/.exec(line);
    if (match) resolve(match[1]);
  });
  const stderr = collect(child.stderr);
  const timer = setTimeout(
    () => reject(new Error(`${runtime}: no address within ${START_TIMEOUT_MS} ms`)),
    START_TIMEOUT_MS,
  );
  child.status.then((status) => reject(new Error(`${runtime}: exited early with ${status.code}`)));
  try {
    const url = await listening;
    return {
      url,
      stdout,
      stderr,
      async stop() {
        child.kill("SIGTERM");
        return await child.status;
      },
    };
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    throw new Error(`${(err as Error).message}\nstdout:\n${await stdout}\nstderr:\n${await stderr}`);
  } finally {
    clearTimeout(timer);
  }
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

/** Starts, checks /healthz and /readyz, stops with SIGTERM, checks the clean exit; returns stdout. */
async function serveOnce(
  runtime: string,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<string> {
  const server = await startServer(runtime, {
    SVC_PORT: "0",
    ...(dataDir ? { SVC_DATA_DIR: dataDir } : {}),
    ...env,
  });
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(server.url, "http://127.0.0.1:0", "the real port is printed");
    assert.deepEqual(await getJson(`${server.url}/healthz`), { status: 200, body: { status: "ok" } });
    assert.deepEqual(await getJson(`${server.url}/readyz`), {
      status: 200,
      body: { status: "ready", checks: { database: { status: "ok" }, key_ring: { status: "ok" } } },
    });
  } finally {
    const status = await server.stop();
    const [stdout, stderr] = [await server.stdout, await server.stderr];
    assert.equal(
      status.code,
      0,
      `${runtime} exit status ${status.code}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
    );
  }
  const stdout = await server.stdout;
  assert.match(
    stdout,
    /^defaults used: SVC_HOST=127\.0\.0\.1, SVC_BASE_URL=http:\/\/localhost:\d+, SVC_RP_ID=localhost, /m,
  );
  assert.match(stdout, /^svc stopped$/m);
  return stdout;
}

for (const runtime of Object.keys(RUNTIMES)) {
  Deno.test(`smoke (${runtime}): the real server answers /healthz and /readyz, then stops on SIGTERM`, async () => {
    const dataDir = await Deno.makeTempDir({ prefix: `svc-smoke-${runtime}-` });
    try {
      await serveOnce(runtime, `${dataDir}/data`);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  });
}

Deno.test("smoke (deno): a restart on the same data folder is ready again", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-smoke-restart-" });
  try {
    const first = await serveOnce("deno", `${dataDir}/data`);
    const second = await serveOnce("deno", `${dataDir}/data`);
    // The catalog written by the first start is still there: the second publishes nothing new.
    assert.match(first, /^definitions: (\d+) permissions published \(\1 new, 0 retired\)/m);
    assert.match(second, /^definitions: \d+ permissions published \(0 new, 0 retired\)/m);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

for (const runtime of Object.keys(RUNTIMES)) {
  Deno.test(`smoke (${runtime}): a bad SVC_PORT exits non-zero with the one-line error`, async () => {
    const [cmd, ...args] = RUNTIMES[runtime];
    const out = await new Deno.Command(cmd, {
      args: [...args, "start"],
      cwd: ROOT,
      env: childEnv({ SVC_PORT: "abc" }),
      clearEnv: true,
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.notEqual(out.code, 0);
    assert.equal(
      stderr,
      'config: SVC_PORT: "abc" is not a port number; set SVC_PORT to an integer between 0 and 65535\n',
    );
    assert.equal(new TextDecoder().decode(out.stdout), "");
  });
}

/** Starts the Deno server with a config file holding `config`; resolves to its exit code and stderr. */
async function bootWithConfig(config: unknown): Promise<{ code: number; stderr: string }> {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/svc.json`;
    await Deno.writeTextFile(file, JSON.stringify(config));
    const [cmd, ...args] = RUNTIMES.deno;
    const out = await new Deno.Command(cmd, {
      args: [...args, "start"],
      cwd: ROOT,
      env: childEnv({ SVC_CONFIG_FILE: file, SVC_DATA_DIR: `${dir}/data`, SVC_PORT: "0" }),
      clearEnv: true,
      stdin: "null",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("boot (deno): a dotted permission id in declarative configuration stops boot naming it", async () => {
  const { code, stderr } = await bootWithConfig({ authz: { permissions: [{ id: "docs.v2:org:read" }] } });
  assert.equal(code, 1);
  assert.match(stderr, /^definitions: authz\.permissions\[0\]\.id "docs\.v2:org:read": .*dot/i);
  assert.equal(stderr.trim().split("\n").length, 1);
});

Deno.test("boot (deno): a declared grant naming an unpublished permission id stops boot naming it", async () => {
  const { code, stderr } = await bootWithConfig({
    authz: { roles: [{ key: "reader", displayName: "Reader", grants: [{ pattern: "docs:org:read" }] }] },
  });
  assert.equal(code, 1);
  assert.match(stderr, /"docs:org:read" names a permission id that is not published/);
});

Deno.test("boot (deno): outside localhost without the relying-party identity, boot stops with one line", async () => {
  const { code, stderr } = await bootWithConfig({ server: { baseUrl: "https://id.example.com" } });
  assert.equal(code, 1);
  assert.match(stderr, /^config: SVC_RP_ID: not set while the base URL https:\/\/id\.example\.com /);
  assert.match(stderr, /SVC_RP_NAME to .*SVC_RP_ORIGINS to /);
  assert.match(stderr, /\(the relying-party identity is required outside development\)\n$/);
  assert.equal(stderr.trim().split("\n").length, 1);
});

Deno.test("smoke (deno): pointed at a Postgres server with SVC_DATABASE_URL, it serves the same way", async () => {
  const name = `svc_smoke_${Date.now().toString(36)}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  try {
    const first = await serveOnce("deno", "", { SVC_DATABASE_URL: url.href });
    assert.match(first, /\(storage: postgres\)$/m);
    assert.match(first, /^definitions: (\d+) permissions published \(\1 new, 0 retired\)/m);
    const second = await serveOnce("deno", "", { SVC_DATABASE_URL: url.href });
    assert.match(second, /^definitions: \d+ permissions published \(0 new, 0 retired\)/m);
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

for (const runtime of Object.keys(RUNTIMES)) {
  Deno.test(`smoke (${runtime}): the bootstrap administrator signs in with a password over the real server`, async () => {
    const dataDir = await Deno.makeTempDir({ prefix: `svc-login-${runtime}-` });
    const server = await startServer(runtime, {
      SVC_PORT: "0",
      SVC_DATA_DIR: `${dataDir}/data`,
      SVC_BOOTSTRAP_ADMIN_EMAIL: "root@example.test",
      SVC_BOOTSTRAP_ADMIN_PASSWORD: "bootstrap secret",
      SVC_ARGON2_MEMORY_KIB: "8192",
      SVC_ARGON2_ITERATIONS: "1",
      SVC_PASSWORD_HASH_WORKERS: "1",
      SVC_TRUSTED_PROXIES: "127.0.0.1",
    });
    try {
      const login = (password: string) =>
        fetch(`${server.url}/auth/login`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Forwarded-For": "198.51.100.7" },
          body: JSON.stringify({ email: "root@example.test", password }),
        });
      const wrong = await login("not it");
      assert.equal(wrong.status, 401);
      assert.equal((await wrong.json()).error.code, "invalid_credentials");
      const res = await login("bootstrap secret");
      assert.equal(res.status, 200);
      const { accessToken } = await res.json();
      const headers = { Authorization: `Bearer ${accessToken}` };
      const perms = await (await fetch(`${server.url}/profile/permissions`, { headers })).json();
      assert.deepEqual(perms.permissions, ["svc:*:*"]);
      const { sessions } = await (await fetch(`${server.url}/profile/sessions`, { headers })).json();
      // The adapter passed the peer address (127.0.0.1), a trusted proxy, so X-Forwarded-For gave the client.
      assert.equal(sessions[0].ipAddress, "198.51.100.7");
    } finally {
      const status = await server.stop();
      assert.equal(status.code, 0, `${runtime}: ${await server.stderr}`);
      await Deno.remove(dataDir, { recursive: true });
    }
    assert.match(await server.stdout, /^bootstrap: administrator root@example\.test created, password set$/m);
  });
}
