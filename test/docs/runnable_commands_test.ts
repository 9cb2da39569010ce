/**
 * Every shell block of the documentation (README.md and docs/) runs as written, or says why not.
 * The HTML comment on the line before a ```sh block classifies it (issue 28):
 *
 * - `<!-- runnable -->`: runs in the repository folder and exits 0 (quick commands that change
 *   nothing: never `npm ci`, `npm test` or a server);
 * - `<!-- runnable: store -->`: runs in the repository folder on an embedded store no server holds
 *   (a temporary `SVC_DATA_DIR`, fresh for this test and shared by the store blocks in page order,
 *   as a reader following the pages meets it: the first `npx svc admin create` of
 *   docs/getting-started.md creates the default realm the later ones name), with a password on
 *   stdin for a command that asks one, and exits 0;
 * - `<!-- runnable: server -->`: runs while a server started here (`svc start`, embedded store in a
 *   temporary folder, first administrator `you@example.com`) listens; `http://localhost:8080` in the
 *   block stands for that server's address, `$ADMIN_TOKEN` and `$TOKEN` hold that administrator's
 *   access token, `SVC_DATA_DIR` is the server's folder (so `npx svc login` finds it through the
 *   lock), the password is on stdin, and the blocks share one credentials folder in page order;
 *   each exits 0;
 * - `<!-- runnable: boots -->`: a block that starts svc (`npm start`, `npx svc start`), run with
 *   `SVC_PORT=0` and a temporary `SVC_DATA_DIR`: it passes once the server prints that it listens,
 *   and is then stopped;
 * - `<!-- not-runnable: <reason> -->`: not run, for the reason given (installs, runs for minutes,
 *   needs an outside system, a placeholder the reader fills in).
 *
 * A shell block with no classification, or an unknown one, fails the first test. The four groups
 * run at the same time (most of their time is waiting on boots), each group in page order. Each block's
 * environment holds no `SVC_*` variable of the test's own, and `node_modules/.bin` comes first on
 * the PATH as after `npm ci`.
 */
import assert from "node:assert/strict";
import {
  childEnv,
  collect,
  FAST_SERVER_PASSWORD_ENV,
  LISTENING_LINE,
  logMessage,
  type RealServer,
  START_TIMEOUT_MS,
  startServer,
} from "../support/server.ts";

const root = new URL("../../", import.meta.url);
const ROOT = root.pathname;
const BIN = `${ROOT}node_modules/.bin`;

/** Commands that install, serve or take long: never in a `runnable`, `store` or `server` block. */
const REFUSED = /\bnpm\s+(ci|install|start|test)\b|\bsvc\s+start\b|\bnpm\s+run\s+start/;

/** How a block is classified. */
export type BlockClass = "runnable" | "store" | "server" | "boots" | "not-runnable" | null;

/** A shell block of a page. */
export interface ShellBlock {
  /** The line of the block's first command (1-based). */
  readonly line: number;
  /** The commands, the fence's indentation removed. */
  readonly script: string;
  /** Its classification, null when the line before it gives none. */
  readonly kind: BlockClass;
  /** The reason of a `not-runnable` block. */
  readonly reason?: string;
}

const MARK = /^<!--\s*(runnable(?::\s*(store|server|boots))?|not-runnable:\s*(.*?))\s*-->$/;

/** Every ```sh / ```bash / ```shell block of a Markdown text, with its classification. */
export function shellBlocks(markdown: string): ShellBlock[] {
  const lines = markdown.split("\n");
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(`{3,})(\w*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const [, indent, ticks, lang] = fence;
    const end = lines.findIndex((l, j) => j > i && l.trim() === ticks);
    assert.ok(end > i, `line ${i + 1}: the block is not closed`);
    if (["sh", "bash", "shell", "console"].includes(lang)) {
      // The mark is the nearest line before the fence that is not blank (deno fmt puts a blank line).
      let before = i - 1;
      while (before >= 0 && lines[before].trim() === "") before--;
      const mark = MARK.exec(lines[before]?.trim() ?? "");
      const kind: BlockClass = mark === null
        ? null
        : mark[3] !== undefined
        ? "not-runnable"
        : (mark[2] as "store" | "server" | "boots" | undefined) ?? "runnable";
      blocks.push({
        line: i + 2,
        script: lines.slice(i + 1, end).map((l) => l.startsWith(indent) ? l.slice(indent.length) : l).join(
          "\n",
        ),
        kind,
        ...(mark?.[3] !== undefined ? { reason: mark[3] } : {}),
      });
    }
    i = end;
  }
  return blocks;
}

async function markdownFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(new URL(dir, root))) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory && entry.name !== "node_modules" && !entry.name.startsWith(".")) {
      found.push(...await markdownFiles(`${path}/`));
    } else if (entry.name.endsWith(".md")) found.push(path);
  }
  return found;
}

/** The pages whose shell blocks are checked: README.md and every page under docs/. */
const PAGES = ["README.md", ...(await markdownFiles("docs/")).sort()];
const BLOCKS = await Promise.all(
  PAGES.map(async (page) => ({ page, blocks: shellBlocks(await Deno.readTextFile(new URL(page, root))) })),
);
const all = (kind: BlockClass) =>
  BLOCKS.flatMap(({ page, blocks }) => blocks.filter((b) => b.kind === kind).map((b) => ({ page, ...b })));

Deno.test("shellBlocks finds every shell block with its classification", () => {
  const text = [
    "<!-- runnable -->",
    "",
    "```sh",
    "echo 1",
    "```",
    "```bash",
    "npm start",
    "```",
    "- a list item:",
    "",
    "  <!-- not-runnable: needs an IdP -->",
    "",
    "  ```sh",
    "  curl https://idp.example",
    "  ```",
    "<!-- runnable: server -->",
    "```text",
    "not shell",
    "```",
    "<!-- runnable: boots -->",
    "```sh",
    "npm start",
    "```",
  ].join("\n");
  assert.deepEqual(shellBlocks(text), [
    { line: 4, script: "echo 1", kind: "runnable" },
    { line: 7, script: "npm start", kind: null },
    { line: 14, script: "curl https://idp.example", kind: "not-runnable", reason: "needs an IdP" },
    { line: 22, script: "npm start", kind: "boots" },
  ]);
});

Deno.test("every shell block in the docs is run by this test or says why not", () => {
  const unclassified: string[] = [];
  for (const { page, blocks } of BLOCKS) {
    for (const block of blocks) {
      if (block.kind === null) unclassified.push(`${page}:${block.line}: ${block.script.split("\n")[0]}`);
      if (block.kind === "not-runnable") {
        assert.ok(block.reason!.length >= 10, `${page}:${block.line}: a reason`);
      }
      if (block.kind === "runnable" || block.kind === "store" || block.kind === "server") {
        assert.doesNotMatch(block.script, REFUSED, `${page}:${block.line}: installs, serves or takes long`);
      }
      if (block.kind === "boots") {
        assert.match(block.script, /\bnpm start\b|\bsvc start\b/, `${page}:${block.line}`);
      }
    }
  }
  assert.deepEqual(unclassified, [], "mark each with <!-- runnable… --> or <!-- not-runnable: reason -->");
  // Most blocks run: a page that marks everything not-runnable would show here.
  const run = BLOCKS.flatMap(({ blocks }) => blocks).filter((b) => b.kind !== "not-runnable").length;
  assert.ok(run >= 10, `${run} blocks run`);
});

/** The password of the administrator the `store` and `server` blocks meet (typed on stdin). */
const PASSWORD = "a long docs password";

/** Runs one block with bash (`-euo pipefail`); `stdin` is typed in. */
async function runBlock(
  where: string,
  script: string,
  env: Record<string, string>,
  stdin = "",
): Promise<string> {
  const child = new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", script],
    cwd: ROOT,
    env: childEnv({
      PATH: `${BIN}:${Deno.env.get("PATH") ?? ""}`,
      npm_config_update_notifier: "false",
      ...env,
    }),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(90_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const [status, stdout, stderr] = await Promise.all([
    child.status,
    collect(child.stdout),
    collect(child.stderr),
  ]);
  assert.equal(
    status.code,
    0,
    `${where}: \`${script}\` exited ${status.code}\n${stdout.slice(-1500)}\n${stderr.slice(-1500)}`,
  );
  // A command that answers with svc's error body (curl exits 0 on a 4xx) did not do what the page says.
  assert.doesNotMatch(
    stdout,
    /"error":\s*\{"code"/,
    `${where}: \`${script}\` answered an error:\n${stdout.slice(-1500)}`,
  );
  if (Deno.env.get("DOCS_BLOCKS_VERBOSE")) console.log(`--- ${where}\n${stdout}\n${stderr}`);
  return stdout;
}

async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Runs each group of blocks; the groups at once, the blocks of a group in page order. */
async function runGroups(groups: Record<string, () => Promise<void>>): Promise<void> {
  const failures = (await Promise.allSettled(Object.values(groups).map((run) => run())))
    .flatMap((result, i) =>
      result.status === "rejected" ? [`${Object.keys(groups)[i]}: ${result.reason}`] : []
    );
  assert.deepEqual(failures, []);
}

async function runPlain(): Promise<void> {
  for (const { page, line, script } of all("runnable")) await runBlock(`${page}:${line}`, script, {});
}

async function runOnStore(): Promise<void> {
  await withTempDir("svc-docs-store-", async (dir) => {
    for (const { page, line, script } of all("store")) {
      const env = { SVC_DATA_DIR: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` };
      await runBlock(`${page}:${line}`, script, env, `${PASSWORD}\n`);
    }
  });
}

async function runAgainstServer(): Promise<void> {
  await withTempDir("svc-docs-server-", async (dir) => {
    const dataDir = `${dir}/data`;
    const running: RealServer = await startServer("deno", {
      ...FAST_SERVER_PASSWORD_ENV,
      SVC_PORT: "0",
      SVC_DATA_DIR: dataDir,
      SVC_BOOTSTRAP_ADMIN_EMAIL: "you@example.com",
      SVC_BOOTSTRAP_ADMIN_PASSWORD: PASSWORD,
    });
    try {
      const login = await fetch(`${running.url}/auth/login`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email: "you@example.com", password: PASSWORD }),
      });
      const body = await login.json();
      assert.equal(login.status, 200, JSON.stringify(body));
      const env = {
        SVC_DATA_DIR: dataDir,
        XDG_CONFIG_HOME: `${dir}/config`,
        ADMIN_TOKEN: body.accessToken,
        TOKEN: body.accessToken,
      };
      for (const { page, line, script } of all("server")) {
        await runBlock(
          `${page}:${line}`,
          script.replaceAll("http://localhost:8080", running.url),
          env,
          `${PASSWORD}\n`,
        );
      }
    } finally {
      const status = await running.stop();
      assert.equal(status.code, 0, await running.stderr);
    }
  });
}

async function runBoots(): Promise<void> {
  await Promise.all(
    all("boots").map(({ page, line, script }) =>
      withTempDir("svc-docs-boots-", (dir) => boots(`${page}:${line}`, script, `${dir}/data`))
    ),
  );
}

Deno.test(
  `the blocks run: ${
    (["runnable", "store", "server", "boots"] as const).map((kind) => `${all(kind).length} ${kind}`).join(
      ", ",
    )
  }`,
  async () => {
    await runGroups({ runnable: runPlain, store: runOnStore, server: runAgainstServer, boots: runBoots });
  },
);

/** Runs a block that starts svc until the server says it listens, then stops its process group. */
async function boots(where: string, script: string, dataDir: string): Promise<void> {
  // setsid: the block's processes (npm, then deno) form one group, stopped together.
  const child = new Deno.Command("setsid", {
    args: ["bash", "-euo", "pipefail", "-c", script],
    cwd: ROOT,
    env: childEnv({
      PATH: `${BIN}:${Deno.env.get("PATH") ?? ""}`,
      npm_config_update_notifier: "false",
      SVC_PORT: "0",
      SVC_DATA_DIR: dataDir,
      ...FAST_SERVER_PASSWORD_ENV,
    }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const listening = Promise.withResolvers<string>();
  const stdout = collect(child.stdout, (line) => {
    if (LISTENING_LINE.test(logMessage(line))) listening.resolve(logMessage(line));
  });
  const stderr = collect(child.stderr);
  const timer = setTimeout(() => listening.reject(new Error("no listening line")), START_TIMEOUT_MS);
  child.status.then((s) => listening.reject(new Error(`exited with ${s.code} before listening`)));
  try {
    await listening.promise;
  } catch (err) {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch { /* gone */ }
    await child.status;
    assert.fail(
      `${where}: \`${script}\` ${(err as Error).message}\n${(await stdout).slice(-1500)}\n${
        (await stderr).slice(-1500)
      }`,
    );
  } finally {
    clearTimeout(timer);
  }
  try {
    Deno.kill(-child.pid, "SIGTERM");
  } catch { /* exited already */ }
  const stop = setTimeout(() => {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch { /* gone */ }
  }, 30_000);
  await child.status;
  clearTimeout(stop);
  await Promise.all([stdout, stderr]);
}
