/**
 * Browser parity: the same `core/authz` module, bundled for the browser, runs the four
 * golden vector files in headless Chromium and must agree with the server on every case.
 *
 * The test bundles `core/authz/mod.ts` (which re-exports `runVectorFile`) with
 * `deno bundle --platform browser` into a temporary directory, serves a small page, the
 * bundle and `vectors/*.json` from a local `Deno.serve` on 127.0.0.1, drives Debian's
 * Chromium through playwright-core, runs every case in the page with `runVectorFile`,
 * and compares case by case with `runVectorFile` run here on the same files.
 *
 * Without `/usr/bin/chromium` the test is skipped with a message, except in CI (`CI`
 * set), where it fails.
 */
import assert from "node:assert/strict";
import { runVectorFile } from "../../../core/authz/mod.ts";
import {
  bundleForBrowser,
  chromiumIgnore,
  launchChromium,
  REPO_ROOT,
  serveStatic,
  type StaticFile,
} from "../../support/browser.ts";

type CaseResult = { name: string; ok: boolean; message?: string };

/** The four vector files and the minimum case counts from the spec. */
const VECTOR_FILES: Record<string, number> = {
  "pattern.json": 33,
  "condition.json": 32,
  "evaluate.json": 28,
  "visibility.json": 12,
};

const PAGE = `<!doctype html>
<html>
<head><meta charset="utf-8"><link rel="icon" href="data:,"><title>svc authz browser parity</title></head>
<body>
<script type="module">
  import { runVectorFile } from "/authz.js";
  globalThis.runVectors = async (files) => {
    const out = {};
    for (const file of files) {
      const response = await fetch("/vectors/" + file);
      if (!response.ok) throw new Error("GET /vectors/" + file + ": " + response.status);
      out[file] = runVectorFile(await response.json());
    }
    return out;
  };
  globalThis.svcReady = true;
</script>
</body>
</html>
`;

/** A readable list of the failing cases of one file. */
function failures(results: readonly CaseResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.message ?? "(no message)"}`);
}

/** A JSON-clean copy (drops `undefined` fields) so both sides compare structurally. */
function plain(results: readonly CaseResult[]): CaseResult[] {
  return JSON.parse(JSON.stringify(results));
}

Deno.test({
  name: "core/authz bundled for the browser agrees with the server on every golden vector",
  ignore: chromiumIgnore("browser parity"),
  async fn() {
    const files = Object.keys(VECTOR_FILES);
    const texts: Record<string, string> = {};
    for (const file of files) texts[file] = await Deno.readTextFile(`${REPO_ROOT}vectors/${file}`);

    // Server side first.
    const server: Record<string, CaseResult[]> = {};
    for (const file of files) {
      server[file] = plain(runVectorFile(JSON.parse(texts[file])));
      assert.ok(
        server[file].length >= VECTOR_FILES[file],
        `${file}: ${server[file].length} cases, the spec asks for at least ${VECTOR_FILES[file]}`,
      );
    }

    const dir = await Deno.makeTempDir({ prefix: "svc-browser-parity-" });
    const browser = await launchChromium();
    let site: ReturnType<typeof serveStatic> | undefined;
    try {
      const bundle = await bundleForBrowser("core/authz/mod.ts", `${dir}/authz.js`);
      const assets: Record<string, StaticFile> = {
        "/index.html": { body: PAGE, type: "text/html; charset=utf-8" },
        "/authz.js": { body: bundle, type: "text/javascript; charset=utf-8" },
      };
      for (const file of files) {
        assets[`/vectors/${file}`] = { body: texts[file], type: "application/json" };
      }
      site = serveStatic(assets);

      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      page.on("console", (message) => {
        if (message.type() === "error") pageErrors.push(message.text());
      });
      await page.goto(`${site.origin}/`);
      await page.waitForFunction(() => (globalThis as { svcReady?: boolean }).svcReady === true, undefined, {
        timeout: 15_000,
      }).catch((error) => {
        throw new Error(`the page did not load the bundle: ${pageErrors.join("; ") || error}`);
      });
      const userAgent = await page.evaluate(() => navigator.userAgent);
      assert.match(userAgent, /HeadlessChrome/, `not running in headless Chromium: ${userAgent}`);

      const browserResults = await page.evaluate(
        (names) =>
          (globalThis as unknown as {
            runVectors(files: string[]): Promise<Record<string, CaseResult[]>>;
          }).runVectors(names),
        files,
      );
      assert.deepEqual(pageErrors, [], "errors in the page");

      for (const file of files) {
        const here = server[file];
        const there = plain(browserResults[file] ?? []);
        assert.deepEqual(failures(here), [], `${file}: cases failing on the server`);
        assert.deepEqual(failures(there), [], `${file}: cases failing in Chromium`);
        assert.equal(there.length, here.length, `${file}: case counts differ (browser vs server)`);
        for (let i = 0; i < here.length; i++) {
          assert.deepEqual(
            there[i],
            here[i],
            `${file}: case ${here[i].name} differs between browser and server`,
          );
        }
      }
      for (const file of files) {
        assert.ok(
          site.requests.includes(`/vectors/${file}`),
          `the page never fetched /vectors/${file}`,
        );
      }
    } finally {
      await browser.close();
      await site?.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
