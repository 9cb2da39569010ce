/**
 * Builds the page apps under `console/` into embedded modules.
 *
 * An app is a directory `console/<app>/` with
 *
 * - `main.tsx`: the entry, bundled for the browser with `deno bundle` (esbuild inside) and
 *   `console/pages.json` (DOM types, JSX through `hono/jsx/dom`), minified, into `main.<hash>.js`.
 *   `deno task check` type-checks the apps with the same config (add a new app's directory to
 *   the second `deno check` of that task);
 * - `*.css`: plain stylesheets, concatenated in file-name order into `main.<hash>.css`;
 * - `index.html`: the shell; `%SVC_ASSETS%` becomes the stylesheet and script tags (relative
 *   `assets/…` URLs), `%SVC_BASE%` and `%SVC_PATH_BASE%` stay for the server to fill in (see
 *   `console/embedded.ts`).
 *
 * The result is `console/generated/<app>.ts`, which exports the app as an `EmbeddedApp` and is
 * committed to git (`test/console/build_test.ts` rebuilds every app and fails on a stale module).
 *
 * ```sh
 * deno task build:pages            # every app
 * deno task build:pages admin      # one app
 * ```
 *
 * @module
 */
import type { EmbeddedApp, EmbeddedAsset } from "./embedded.ts";

/** The `console/` directory (with a trailing slash). */
export const CONSOLE_DIR: string = new URL("./", import.meta.url).pathname;

/** Where the generated modules go. */
export const GENERATED_DIR: string = `${CONSOLE_DIR}generated/`;

/** The placeholder of the shell replaced by the asset tags. */
export const ASSETS_PLACEHOLDER = "%SVC_ASSETS%";

/** A build failure (bundler error, missing entry or shell). */
export class PageBuildError extends Error {
  /** Stable code. */
  readonly code = "page_build_failed";
  constructor(message: string) {
    super(message);
    this.name = "PageBuildError";
  }
}

/** The apps: directories of `console/` holding a `main.tsx`, sorted by name. */
export async function discoverApps(): Promise<string[]> {
  const apps: string[] = [];
  for await (const entry of Deno.readDir(CONSOLE_DIR)) {
    if (!entry.isDirectory) continue;
    try {
      if ((await Deno.stat(`${CONSOLE_DIR}${entry.name}/main.tsx`)).isFile) apps.push(entry.name);
    } catch {
      // not an app
    }
  }
  return apps.sort();
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function hashedName(stem: string, ext: string, body: string): Promise<string> {
  return `${stem}.${(await sha256Hex(body)).slice(0, 12)}.${ext}`;
}

/** Bundles `entry` (an absolute path) for the browser: one minified ES module. */
export async function bundle(entry: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "svc-pages-" });
  try {
    const outFile = `${dir}/main.js`;
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform",
        "browser",
        "--format",
        "esm",
        "--minify",
        "--config",
        `${CONSOLE_DIR}pages.json`,
        "--output",
        outFile,
        entry,
      ],
      cwd: `${CONSOLE_DIR}..`,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      const err = new TextDecoder().decode(output.stderr) + new TextDecoder().decode(output.stdout);
      throw new PageBuildError(`deno bundle ${entry} failed (exit ${output.code}):\n${err}`);
    }
    return await Deno.readTextFile(outFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function stylesheet(appDir: string): Promise<string> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(appDir)) {
    if (entry.isFile && entry.name.endsWith(".css")) names.push(entry.name);
  }
  const parts: string[] = [];
  for (const name of names.sort()) parts.push(`/* ${name} */\n${await Deno.readTextFile(appDir + name)}`);
  return parts.join("\n");
}

/** Builds one app into its embedded form (nothing is written). */
export async function buildApp(app: string): Promise<EmbeddedApp> {
  if (!/^[a-z][a-z0-9-]*$/.test(app)) throw new PageBuildError(`bad app name ${JSON.stringify(app)}`);
  const appDir = `${CONSOLE_DIR}${app}/`;
  let template: string;
  try {
    template = await Deno.readTextFile(`${appDir}index.html`);
  } catch {
    throw new PageBuildError(`console/${app}/index.html (the shell) is missing`);
  }
  if (!template.includes(ASSETS_PLACEHOLDER)) {
    throw new PageBuildError(`console/${app}/index.html has no ${ASSETS_PLACEHOLDER}`);
  }
  const assets: Record<string, EmbeddedAsset> = {};
  const tags: string[] = [];
  const css = await stylesheet(appDir);
  if (css !== "") {
    const name = await hashedName("main", "css", css);
    assets[name] = { type: "text/css; charset=utf-8", body: css };
    tags.push(`<link rel="stylesheet" href="assets/${name}">`);
  }
  const js = await bundle(`${appDir}main.tsx`);
  const jsName = await hashedName("main", "js", js);
  assets[jsName] = { type: "text/javascript; charset=utf-8", body: js };
  tags.push(`<script type="module" src="assets/${jsName}"></script>`);
  return { name: app, shell: template.replace(ASSETS_PLACEHOLDER, tags.join("\n    ")), assets };
}

/** The text of `console/generated/<app>.ts` for a built app. */
export function moduleText(built: EmbeddedApp): string {
  const assets = Object.keys(built.assets).sort().map((name) => {
    const asset = built.assets[name];
    return `    ${JSON.stringify(name)}: {\n      type: ${JSON.stringify(asset.type)},\n      body: ${
      JSON.stringify(asset.body)
    },\n    },\n`;
  }).join("");
  return `// deno-fmt-ignore-file
// deno-lint-ignore-file
/**
 * The \`${built.name}\` page app, built from \`console/${built.name}/\` by \`console/build.ts\`.
 * Generated: do not edit; rebuild with \`deno task build:pages ${built.name}\`.
 *
 * @module
 */
import type { EmbeddedApp } from "../embedded.ts";

/** The built \`${built.name}\` app: its shell and hashed assets. */
export const app: EmbeddedApp = {
  name: ${JSON.stringify(built.name)},
  shell: ${JSON.stringify(built.shell)},
  assets: {
${assets}  },
};
`;
}

/** Builds `app` and writes `console/generated/<app>.ts`; returns the module's path. */
export async function writeApp(app: string): Promise<string> {
  const text = moduleText(await buildApp(app));
  await Deno.mkdir(GENERATED_DIR, { recursive: true });
  const path = `${GENERATED_DIR}${app}.ts`;
  await Deno.writeTextFile(path, text);
  return path;
}

if (import.meta.main) {
  const apps = Deno.args.length > 0 ? Deno.args : await discoverApps();
  for (const app of apps) console.log(`built ${await writeApp(app)}`);
}
