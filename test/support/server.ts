/**
 * The real server as a subprocess, for smoke tests and for attack suites that must run against
 * `svc start` rather than the Hono app: start it under Deno, Bun or Node (the bundle of `npm run build:node`) on a free
 * port, read its address from the start line, stop it with SIGTERM.
 */
import { strict as assert } from "node:assert";
import postgres from "postgres";
import { TEST_DATABASE_URL } from "./db.ts";

/** The repository root. */
export const ROOT: string = new URL("../../", import.meta.url).pathname;
const BIN = `${ROOT}node_modules/.bin/`;

/**
 * The command line that runs svc under each runtime, as its npm script does: on Deno and Node the
 * bundles of `cli/deno.ts` and `cli/node.ts` (`npm start`, `npm run start:node`; built by
 * {@link serverCommand}), on Bun the source. `test/cli/startup_modules_test.ts` checks that Deno's
 * is `npm start`'s.
 */
export const RUNTIMES: Record<string, string[]> = {
  deno: [`${BIN}deno`, "run", "-A", "--no-code-cache", "dist/deno/cli/deno.js"],
  bun: [`${BIN}bun`, "cli/bun.ts"],
  node: ["node", "dist/node/cli/node.js"],
};

/** The single binary (`npm run build:binary`, Bun's `--compile` of `cli/binary.ts`). */
export const BINARY: string = `${ROOT}dist/svc`;

/** The runtimes the smoke suite starts: the three of {@link RUNTIMES} and the single binary. */
export const SMOKE_RUNTIMES: readonly string[] = [...Object.keys(RUNTIMES), "binary"];

let binaryBuilt: Promise<void> | undefined;

/** Builds {@link BINARY} from the current source, once per test process. */
export function buildBinary(): Promise<void> {
  return binaryBuilt ??= runNpmScript("build:binary");
}

async function runNpmScript(script: string): Promise<void> {
  const out = await new Deno.Command("npm", {
    args: ["run", "-s", script],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!out.success) {
    throw new Error(`${script} failed:\n${decoder.decode(out.stdout)}\n${decoder.decode(out.stderr)}`);
  }
}

/**
 * How `runtime` is started: the command, its arguments, and the folder it runs in (the repository
 * for the three runtimes; for the binary, an empty folder with no `node_modules`, as a user runs it).
 * Node runs the bundle `npm ci` builds (`npm run build:node`), rebuilt here from the current source.
 */
export async function serverCommand(runtime: string): Promise<{ cmd: string; args: string[]; cwd: string }> {
  if (runtime === "binary") {
    await buildBinary();
    return { cmd: BINARY, args: [], cwd: await Deno.makeTempDir({ prefix: "svc-binary-cwd-" }) };
  }
  if (runtime === "node") await buildNodeBundle();
  if (runtime === "deno") await buildDenoBundle();
  const [cmd, ...args] = RUNTIMES[runtime];
  return { cmd, args, cwd: ROOT };
}

let denoBundleBuilt: Promise<void> | undefined;
let nodeBundleBuilt: Promise<void> | undefined;

/**
 * Builds the Deno bundle (`npm run build:deno`, `dist/deno/`) from the current source, once per
 * test module. Test modules run in parallel (`npm test` passes `--parallel`); `cli/bundle.ts`
 * replaces each file by a rename, so a module starting a server from the folder meanwhile never
 * reads a half-written file.
 */
export function buildDenoBundle(): Promise<void> {
  return denoBundleBuilt ??= runBuildScript("cli/build-deno.ts");
}

/** Builds the Node bundle (`npm run build:node`, `dist/node/`) from the current source, once per test module (as above). */
export function buildNodeBundle(): Promise<void> {
  return nodeBundleBuilt ??= runBuildScript("cli/build-node.ts");
}

async function runBuildScript(script: string): Promise<void> {
  const out = await new Deno.Command(`${BIN}deno`, {
    args: ["run", "-A", script],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    const decoder = new TextDecoder();
    throw new Error(`${script} failed:\n${decoder.decode(out.stdout)}\n${decoder.decode(out.stderr)}`);
  }
}

/** How long a server may take to print its address (a cold start compiles and opens PGlite). */
export const START_TIMEOUT_MS = 60_000;

/** How long a server may take to exit after SIGTERM (its own shutdown steps have 10 s deadlines). */
export const STOP_TIMEOUT_MS = 45_000;

/** Cheapest argon2id the configuration allows, one worker: real servers that sign people in quickly. */
export const FAST_SERVER_PASSWORD_ENV: Record<string, string> = {
  SVC_ARGON2_MEMORY_KIB: "8192",
  SVC_ARGON2_ITERATIONS: "1",
  SVC_PASSWORD_HASH_WORKERS: "1",
};

/** The environment without any SVC_ variable of the caller, plus `env`. */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const base = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([name]) => !name.startsWith("SVC_")),
  );
  return { ...base, NO_COLOR: "1", ...env };
}

/** Collects a stream's text; `onLine` sees each complete line as it arrives. */
export function collect(
  stream: ReadableStream<Uint8Array>,
  onLine?: (line: string) => void,
): Promise<string> {
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

/** A running server. */
export interface RealServer {
  /** Where it listens, for example `http://127.0.0.1:41234`. */
  url: string;
  /** The issuer its tokens carry (the base URL), for example `http://localhost:41234`. */
  issuer: string;
  /** The default realm's JWKS URL it printed. */
  jwksUrl: string;
  /** The process id. */
  pid: number;
  stdout: Promise<string>;
  stderr: Promise<string>;
  /** Sends SIGTERM and resolves to the exit status. */
  stop(): Promise<Deno.CommandStatus>;
  /** Sends SIGKILL (a crash) and resolves to the exit status. */
  kill(): Promise<Deno.CommandStatus>;
}

/** The message of a log line: the line itself, or the `msg` of a JSON line (`SVC_LOG_FORMAT=json`). */
export function logMessage(line: string): string {
  if (!line.startsWith("{")) return line;
  try {
    const parsed = JSON.parse(line);
    return typeof parsed?.msg === "string" ? parsed.msg : line;
  } catch {
    return line;
  }
}

/** The line `svc start` prints once it listens; group 1 is the address, group 2 the issuer (base URL). */
export const LISTENING_LINE =
  /^svc listening on (http:\/\/\S+), issuer (https?:\/\/\S+) \(storage: (?:embedded at .+|postgres)\)$/;

/** The line `svc start` prints before listening; group 1 is the default realm's JWKS URL. */
export const JWKS_LINE = /^jwks: (https?:\/\/\S+)$/;

/**
 * Starts `svc start` under `runtime` (or the single binary) with exactly `env` (plus the caller's
 * non-SVC_ variables); `command` replaces the runtime's command line (a host file such as
 * `examples/host.ts`, run from the repository).
 */
export async function startServer(
  runtime: string,
  env: Record<string, string>,
  command?: readonly string[],
): Promise<RealServer> {
  const { cmd, args, cwd } = command === undefined
    ? await serverCommand(runtime)
    : { cmd: command[0], args: command.slice(1), cwd: ROOT };
  const child = new Deno.Command(cmd, {
    args: [...args, "start"],
    cwd,
    env: childEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();

  const { promise: listening, resolve, reject } = Promise.withResolvers<
    { url: string; issuer: string; jwksUrl: string }
  >();
  let jwksUrl = "";
  const stdout = collect(child.stdout, (raw) => {
    const line = logMessage(raw);
    const jwks = JWKS_LINE.exec(line);
    if (jwks) jwksUrl = jwks[1];
    const match = LISTENING_LINE.exec(line);
    if (match) resolve({ url: match[1], issuer: match[2], jwksUrl });
  });
  const stderr = collect(child.stderr);
  const timer = setTimeout(
    () => reject(new Error(`${runtime}: no address within ${START_TIMEOUT_MS} ms`)),
    START_TIMEOUT_MS,
  );
  child.status.then((status) => reject(new Error(`${runtime}: exited early with ${status.code}`)));
  try {
    const { url, issuer, jwksUrl } = await listening;
    return {
      url,
      issuer,
      jwksUrl,
      pid: child.pid,
      stdout,
      stderr,
      async stop() {
        try {
          child.kill("SIGTERM");
        } catch { /* already exited */ }
        // A server that does not exit after its own shutdown deadlines is killed, and the test
        // fails with what it printed, instead of hanging the suite.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const stuck = new Promise<null>((resolve) =>
          timer = setTimeout(() => resolve(null), STOP_TIMEOUT_MS)
        );
        const status = await Promise.race([child.status, stuck]);
        clearTimeout(timer);
        if (status !== null) return status;
        try {
          child.kill("SIGKILL");
        } catch { /* exited meanwhile */ }
        await child.status;
        throw new Error(
          `${runtime}: still running ${STOP_TIMEOUT_MS} ms after SIGTERM\nstdout:\n${await stdout}\nstderr:\n${await stderr}`,
        );
      },
      async kill() {
        try {
          child.kill("SIGKILL");
        } catch { /* already exited */ }
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

/** A fresh database on the test Postgres server, for a real server's `SVC_DATABASE_URL`. */
export interface ServerDatabase {
  url: string;
  drop(): Promise<void>;
}

let databases = 0;

/** Creates an empty database on the test Postgres server; `drop()` removes it (forcing connections off). */
export async function freshServerDatabase(prefix = "svc_e2e"): Promise<ServerDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${(databases++).toString(36)}`;
  const admin = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * A real Deno server on a fresh Postgres database with a bootstrap administrator and cheap
 * argon2id, for attack and end-to-end suites. `close()` stops it and drops the database.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  command?: readonly string[],
): Promise<
  RealServer & { adminEmail: string; adminPassword: string; databaseUrl: string; close(): Promise<void> }
> {
  const database = await freshServerDatabase();
  const adminEmail = "root@example.test";
  const adminPassword = "bootstrap secret";
  let server: RealServer;
  try {
    server = await startServer("deno", {
      SVC_PORT: "0",
      SVC_DATABASE_URL: database.url,
      SVC_BOOTSTRAP_ADMIN_EMAIL: adminEmail,
      SVC_BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
      SVC_MAINTENANCE_INTERVAL_SECONDS: "0",
      ...FAST_SERVER_PASSWORD_ENV,
      ...env,
    }, command);
  } catch (err) {
    await database.drop();
    throw err;
  }
  return {
    ...server,
    adminEmail,
    adminPassword,
    databaseUrl: database.url,
    async close() {
      try {
        const status = await server.stop();
        // A shutdown step that failed or overran its deadline is worth seeing in the test log.
        if (!status.success) console.error(`svc exited with ${status.code}:\n${await server.stderr}`);
      } finally {
        await database.drop();
      }
    },
  };
}

/**
 * JSON over HTTP to a real server at `baseUrl`: `call` sends a request (a bearer token and a JSON
 * body when given) and answers with the status, the headers and the parsed body (null when the
 * body is empty or not JSON); `signIn` logs in by password (into `org` when given), asserts a 200
 * and answers with the access token.
 */
export function httpClient(baseUrl: string) {
  const call = async (method: string, path: string, token?: string | null, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, json: await res.json().catch(() => null) };
  };
  const signIn = async (email: string, password: string, org?: string): Promise<string> => {
    const res = await call("POST", "/auth/login", undefined, { email, password, ...(org ? { org } : {}) });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.accessToken as string;
  };
  return { call, signIn };
}

/** A client of {@link httpClient}. */
export type HttpClient = ReturnType<typeof httpClient>;
