/**
 * The CLI's way to a running server (issue 27): `svc mail` and `svc import` on a data folder a
 * running `svc start` holds go through that server's HTTP API. The server is found from the
 * folder's lock file (`url`, written once it listens), else from the configuration; the
 * administrator's token is `SVC_ADMIN_TOKEN` when set, else the one `svc login` stored.
 *
 * `svc login [--email EMAIL] [--password-stdin] [--url URL]` signs in with a password (and the
 * second step when asked) and stores the bearer tokens, per server URL, in the credentials file:
 * `SVC_CREDENTIALS_FILE`, else `$XDG_CONFIG_HOME/svc/credentials.json`, else
 * `~/.config/svc/credentials.json`, written with mode 0600 (folder 0700). No token is ever
 * printed. An expired access token is refreshed with the stored refresh token (single use,
 * rotated) and the file rewritten. `svc logout` revokes and forgets it.
 *
 * @module
 */
import type { SvcConfig } from "../core/config/mod.ts";
import { LOCK_FILE_NAME, parseHolder } from "./data-dir-lock.ts";
import { publicRoot } from "../core/net/public-url.ts";

/** The environment variable of an explicit administrator token. */
export const ADMIN_TOKEN_ENV = "SVC_ADMIN_TOKEN";
/** The environment variable naming the credentials file. */
export const CREDENTIALS_FILE_ENV = "SVC_CREDENTIALS_FILE";

/** The usage lines of `svc login` and `svc logout`. */
export const LOGIN_USAGE = [
  "  login [--email EMAIL] [--password-stdin] [--url URL]",
  "                   sign in to the running server; its token is stored (mode 0600) for svc mail and svc import",
  "  logout [--url URL]",
  "                   sign out and forget the stored token",
];

/** What the session functions need from the runtime. */
export interface SessionIo {
  env(): Record<string, string | undefined>;
  readTextFile(path: string): Promise<string>;
  writeSecretFile?(path: string, text: string): Promise<void>;
  readLine?(question: string, options?: { secret?: boolean }): Promise<string | null>;
  print(line: string): void;
  printError(line: string): void;
}

interface StoredSession {
  email: string;
  accessToken: string;
  refreshToken: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

interface CredentialsFile {
  servers: Record<string, StoredSession>;
}

/** Where `svc login` keeps its tokens. */
export function credentialsPath(env: Record<string, string | undefined>): string | null {
  if (env[CREDENTIALS_FILE_ENV]) return env[CREDENTIALS_FILE_ENV]!;
  const base = env.XDG_CONFIG_HOME || (env.HOME ? `${env.HOME}/.config` : env.APPDATA);
  return base ? `${base.replace(/\/+$/, "")}/svc/credentials.json` : null;
}

/**
 * The URL of the running server: the one its lock file names (embedded store), else the
 * configured base URL and path base.
 */
export async function runningServerUrl(
  io: Pick<SessionIo, "readTextFile">,
  config: SvcConfig,
): Promise<string> {
  if (config.storage.kind === "embedded") {
    const lockPath = `${config.storage.dataDir.replace(/\/+$/, "")}/${LOCK_FILE_NAME}`;
    const holder = parseHolder(await io.readTextFile(lockPath).catch(() => ""));
    if (holder?.url) return holder.url.replace(/\/+$/, "");
  }
  return publicRoot(config.server);
}

async function readCredentials(io: SessionIo): Promise<CredentialsFile> {
  const path = credentialsPath(io.env());
  if (path === null) return { servers: {} };
  try {
    const parsed = JSON.parse(await io.readTextFile(path));
    return parsed && typeof parsed.servers === "object" ? parsed as CredentialsFile : { servers: {} };
  } catch {
    return { servers: {} };
  }
}

async function writeCredentials(io: SessionIo, file: CredentialsFile): Promise<string> {
  const path = credentialsPath(io.env());
  if (path === null) throw new Error(`no place for the credentials file; set ${CREDENTIALS_FILE_ENV}`);
  if (io.writeSecretFile === undefined) throw new Error("this runtime cannot write the credentials file");
  await io.writeSecretFile(path, JSON.stringify(file, null, 2) + "\n");
  return path;
}

/**
 * The administrator token for `url`: `SVC_ADMIN_TOKEN`, else the stored one (refreshed when it
 * ran out, the file rewritten), else null.
 */
export async function adminToken(
  io: SessionIo,
  url: string,
  now: number,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<string | null> {
  const explicit = io.env()[ADMIN_TOKEN_ENV];
  if (explicit) return explicit;
  const file = await readCredentials(io);
  const stored = file.servers[url];
  if (stored === undefined) return null;
  if (stored.expiresAt - 30_000 > now) return stored.accessToken;
  let res: Response;
  try {
    res = await fetcher(`${url}/auth/refresh`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ refreshToken: stored.refreshToken }),
    });
  } catch {
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    return null;
  }
  const tokens = await res.json() as { accessToken: string; refreshToken: string; expiresIn: number };
  file.servers[url] = {
    email: stored.email,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresAt: now + tokens.expiresIn * 1000,
  };
  await writeCredentials(io, file);
  return tokens.accessToken;
}

/** Parsed `svc login` / `svc logout` arguments, or null for a usage error. */
export function parseLoginArgs(
  args: readonly string[],
  allowed: readonly string[] = ["--email", "--url"],
): { email?: string; url?: string; passwordStdin: boolean } | null {
  const out: { email?: string; url?: string; passwordStdin: boolean } = { passwordStdin: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--password-stdin" && allowed.includes("--email")) {
      out.passwordStdin = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const [name, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, args[++i]];
    if (!allowed.includes(name) || value === undefined || value === "") return null;
    const key = name.slice(2) as "email" | "url";
    if (out[key] !== undefined) return null;
    out[key] = value;
  }
  if (out.url !== undefined && !/^https?:\/\//.test(out.url)) return null;
  return out;
}

/** `svc login`: signs in to the running server and stores its tokens. Exit 0, 1 refused, 2 usage. */
export async function loginCommand(
  args: readonly string[],
  config: SvcConfig,
  io: SessionIo,
  now: () => number,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<number> {
  const parsed = parseLoginArgs(args);
  if (parsed === null) {
    io.printError("usage: svc login [--email EMAIL] [--password-stdin] [--url URL]");
    return 2;
  }
  const url = (parsed.url ?? await runningServerUrl(io, config)).replace(/\/+$/, "");
  const ask = async (question: string, secret = false) =>
    io.readLine ? (await io.readLine(question, { secret }))?.trim() || null : null;
  const email = parsed.email ?? await ask("Email: ");
  const password = await ask(parsed.passwordStdin ? "" : "Password (not shown): ", !parsed.passwordStdin);
  if (email === null || password === null) {
    io.printError(
      "login: an email and a password are needed (--email, and type the password or pipe it with --password-stdin)",
    );
    return 2;
  }
  const post = async (path: string, body: unknown) => {
    const res = await fetcher(`${url}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => null) as Record<string, any> | null };
  };
  let answer;
  try {
    answer = await post("/auth/login", { email, password });
    if (answer.status === 200 && answer.body?.mfaRequired) {
      const factors: string[] = answer.body.factors ?? [];
      const factor = ["totp", "email_otp", "recovery_code"].find((f) => factors.includes(f));
      if (factor === undefined) {
        io.printError(`login: the second step asks for ${factors.join(", ")}, which a terminal cannot give`);
        return 1;
      }
      const code = await ask(
        factor === "email_otp"
          ? "Code sent by email: "
          : factor === "totp"
          ? "Authenticator code: "
          : "Recovery code: ",
      );
      if (code === null) {
        io.printError("login: no code given");
        return 1;
      }
      answer = await post("/auth/mfa/verify", { mfaToken: answer.body.mfaToken, factor, code });
    }
  } catch (err) {
    io.printError(`login: the server at ${url} did not answer: ${err instanceof Error ? err.message : err}`);
    return 1;
  }
  if (answer.status !== 200 || typeof answer.body?.accessToken !== "string") {
    const error = answer.body?.error as
      | { code?: string; message?: string; details?: Record<string, unknown> }
      | undefined;
    const wait = typeof error?.details?.retryAfterSeconds === "number"
      ? ` (try again in ${Math.ceil(error.details.retryAfterSeconds as number)} s)`
      : "";
    io.printError(`login: ${error?.message ?? `the server answered ${answer.status}`}${wait}`);
    return 1;
  }
  const file = await readCredentials(io);
  file.servers[url] = {
    email,
    accessToken: answer.body.accessToken,
    refreshToken: answer.body.refreshToken,
    expiresAt: now() + Number(answer.body.expiresIn) * 1000,
  };
  let path: string;
  try {
    path = await writeCredentials(io, file);
  } catch (err) {
    io.printError(`login: ${err instanceof Error ? err.message : err}`);
    return 1;
  }
  io.print(`login: signed in to ${url} as ${email}; the token is in ${path} (mode 0600)`);
  return 0;
}

/** `svc logout`: revokes the stored session of the server and forgets it. */
export async function logoutCommand(
  args: readonly string[],
  config: SvcConfig,
  io: SessionIo,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<number> {
  const parsed = parseLoginArgs(args, ["--url"]);
  if (parsed === null) {
    io.printError("usage: svc logout [--url URL]");
    return 2;
  }
  const url = (parsed.url ?? await runningServerUrl(io, config)).replace(/\/+$/, "");
  const file = await readCredentials(io);
  const stored = file.servers[url];
  if (stored === undefined) {
    io.print(`logout: no stored token for ${url}`);
    return 0;
  }
  await fetcher(`${url}/auth/logout`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${stored.accessToken}` },
    body: JSON.stringify({ refreshToken: stored.refreshToken }),
  }).then((res) => res.body?.cancel(), () => {});
  delete file.servers[url];
  await writeCredentials(io, file);
  io.print(`logout: signed out of ${url}; the stored token is gone`);
  return 0;
}
