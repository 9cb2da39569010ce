/**
 * Starts the real server as a subprocess under Deno, Bun and Node (the bundle of `npm run build:node`), and as the single
 * binary (`npm run build:binary`, run from an empty folder), on a fresh
 * embedded data folder and a free port, and checks the health endpoints and a clean stop.
 */
import assert from "node:assert/strict";
import {
  childEnv,
  freshServerDatabase,
  ROOT,
  serverCommand,
  SMOKE_RUNTIMES,
  startServer,
} from "../support/server.ts";

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
    // The start lines name the issuer tokens carry (the base URL) and where its keys are.
    const port = new URL(server.url).port;
    assert.equal(server.issuer, `http://localhost:${port}`);
    assert.equal(server.jwksUrl, `http://localhost:${port}/.well-known/jwks.json`);
    const jwks = await fetch(`${server.url}/.well-known/jwks.json`);
    assert.equal(jwks.status, 200);
    assert.ok((await jwks.json()).keys.length > 0);
    // The body limit holds on every runtime: a chunked body over 64 KiB is refused with 413.
    const chunk = new Uint8Array(16 * 1024).fill(0x61);
    let sent = 0;
    const oversized = await fetch(`${server.url}/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: new ReadableStream({
        pull(controller) {
          if (sent >= 8 * 1024 * 1024) return controller.close();
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    });
    assert.equal(oversized.status, 413);
    assert.equal((await oversized.json()).error.code, "payload_too_large");
    assert.equal(oversized.headers.get("x-content-type-options"), "nosniff");
    assert.deepEqual(await getJson(`${server.url}/healthz`), { status: 200, body: { status: "ok" } });
    assert.deepEqual(await getJson(`${server.url}/readyz`), {
      status: 200,
      body: { status: "ready", checks: ["database", "key_ring", "break_glass_drill"] },
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

for (const runtime of SMOKE_RUNTIMES) {
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

for (const runtime of SMOKE_RUNTIMES) {
  Deno.test(`smoke (${runtime}): a bad SVC_PORT exits non-zero with the one-line error`, async () => {
    const { cmd, args, cwd } = await serverCommand(runtime);
    const out = await new Deno.Command(cmd, {
      args: [...args, "start"],
      cwd,
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
    const { cmd, args } = await serverCommand("deno");
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
  const database = await freshServerDatabase("svc_smoke");
  try {
    const first = await serveOnce("deno", "", { SVC_DATABASE_URL: database.url });
    assert.match(first, /\(storage: postgres\)$/m);
    assert.match(first, /^definitions: (\d+) permissions published \(\1 new, 0 retired\)/m);
    const second = await serveOnce("deno", "", { SVC_DATABASE_URL: database.url });
    assert.match(second, /^definitions: \d+ permissions published \(0 new, 0 retired\)/m);
  } finally {
    await database.drop();
  }
});

/** The bootstrap administrator's password sign-in against `runtime`'s real server, with `env` added. */
async function bootstrapSignIn(runtime: string, env: Record<string, string> = {}): Promise<void> {
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
    ...env,
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
}

for (const runtime of SMOKE_RUNTIMES) {
  Deno.test(
    `smoke (${runtime}): the bootstrap administrator signs in with a password over the real server`,
    () => bootstrapSignIn(runtime),
  );
}

Deno.test("smoke (deno): without native argon2id, the bundle's password worker (a Web Worker) hashes", () =>
  // `npm start` runs the bundle, whose worker module is not where the source's is: the WebAssembly
  // build in a Web Worker is the path that loads it.
  bootstrapSignIn("deno", { SVC_ARGON2_NATIVE: "false" }));

Deno.test("smoke (deno): SVC_LOG_FORMAT=json writes every line as a JSON object, with one per request", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "svc-json-log-" });
  const server = await startServer("deno", {
    SVC_PORT: "0",
    SVC_DATA_DIR: `${dataDir}/data`,
    SVC_LOG_FORMAT: "json",
    SVC_LOG_REQUESTS: "true",
  });
  let requestId: string | null = null;
  try {
    const res = await fetch(`${server.url}/healthz`);
    await res.body?.cancel();
    requestId = res.headers.get("x-request-id");
  } finally {
    assert.equal((await server.stop()).code, 0, await server.stderr);
    await Deno.remove(dataDir, { recursive: true });
  }
  const lines = (await server.stdout).trim().split("\n").map((line) => JSON.parse(line));
  for (const line of lines) {
    assert.equal(typeof line.time, "string");
    assert.ok(line.level === "info" || line.level === "error");
    assert.equal(typeof line.msg, "string");
  }
  assert.ok(lines.some((l) => l.msg.startsWith("svc listening on ")));
  const request = lines.find((l) => l.msg === "request");
  assert.deepEqual(
    { ...request, time: undefined, durationMs: undefined },
    {
      time: undefined,
      durationMs: undefined,
      level: "info",
      msg: "request",
      requestId,
      method: "GET",
      route: "/healthz",
      status: 200,
    },
  );
});
