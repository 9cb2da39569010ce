/**
 * Headless Chromium for the test suite: Debian's `chromium` package (never a browser
 * downloaded by Playwright) driven by playwright-core, a bundler for browser builds of
 * `core/` modules, and a tiny local static server.
 *
 * A missing Chromium is a failure, never a skip: CI installs it (`apt-get install -y
 * chromium`), and {@link launchChromium} throws a message saying so.
 *
 * ```ts
 * Deno.test("…", async () => {
 *   const browser = await launchChromium();
 *   try {
 *     const page = await browser.newPage();
 *     // For passkeys: const cdp = await page.context().newCDPSession(page);
 *     //               await cdp.send("WebAuthn.enable"); …
 *   } finally {
 *     await browser.close();
 *   }
 * });
 * ```
 *
 * @module
 */
import { type Browser, chromium, type LaunchOptions } from "playwright-core";

/** The Chromium binary: `SVC_CHROMIUM` when set, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM_PATH: string = Deno.env.get("SVC_CHROMIUM") ?? "/usr/bin/chromium";

/**
 * Flags for a quiet, offline, sandbox-less headless Chromium (containers run as root).
 * The fresh `--user-data-dir` is not in this list: Playwright creates a new temporary
 * profile for every {@link launchChromium} (and deletes it on `close()`), and refuses
 * the flag in `args`.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Whether the Chromium binary is present, and why not when it is not. */
export function chromiumAvailability(): { available: boolean; path: string; reason?: string } {
  const hint = "install it with `apt-get install -y chromium` or point SVC_CHROMIUM at a Chromium binary";
  try {
    const info = Deno.statSync(CHROMIUM_PATH);
    if (!info.isFile) {
      return { available: false, path: CHROMIUM_PATH, reason: `${CHROMIUM_PATH} is not a file; ${hint}` };
    }
    return { available: true, path: CHROMIUM_PATH };
  } catch (error) {
    return {
      available: false,
      path: CHROMIUM_PATH,
      reason: `${CHROMIUM_PATH} not found (${(error as Error).name}); ${hint}`,
    };
  }
}

/**
 * Launches headless Chromium through playwright-core with {@link CHROMIUM_ARGS} (plus
 * `options.args`) and a fresh temporary profile. Throws a clear error when the binary
 * is missing. The caller closes the browser.
 */
export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const { available, reason } = chromiumAvailability();
  if (!available) throw new Error(`headless Chromium unavailable: ${reason}`);
  return await chromium.launch({
    headless: true,
    timeout: 30_000,
    ...options,
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
  });
}

/** The repository root (two levels above this file), with a trailing slash. */
export const REPO_ROOT: string = new URL("../../", import.meta.url).pathname;

/**
 * Bundles `entry` (a path relative to the repository root) for the browser, as one ES
 * module, with `deno bundle --platform browser` into `outFile`; returns the bundle's text.
 */
export async function bundleForBrowser(entry: string, outFile: string): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "browser",
      "--format",
      "esm",
      "--config",
      `${REPO_ROOT}deno.json`,
      "--output",
      outFile,
      `${REPO_ROOT}${entry}`,
    ],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    const err = new TextDecoder().decode(output.stderr) + new TextDecoder().decode(output.stdout);
    throw new Error(`deno bundle ${entry} failed (exit ${output.code}):\n${err}`);
  }
  return await Deno.readTextFile(outFile);
}

/** One static response: body and content type. */
export interface StaticFile {
  body: string | Uint8Array<ArrayBuffer>;
  type: string;
}

/** A local static server on 127.0.0.1 and a free port. */
export interface StaticServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  readonly origin: string;
  /** Paths requested, in order (for diagnostics). */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Serves `files` (keyed by path, `/index.html` also answers `/`) until closed; 404 otherwise. */
export function serveStatic(files: Record<string, StaticFile>): StaticServer {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    let path = new URL(request.url).pathname;
    requests.push(path);
    if (path === "/") path = "/index.html";
    const file = Object.hasOwn(files, path) ? files[path] : undefined;
    if (!file) return new Response("not found", { status: 404 });
    return new Response(file.body, { headers: { "content-type": file.type, "cache-control": "no-store" } });
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
  };
}
