/**
 * Browser parity: the same engine, bundled for the browser from the `@svc/svc/authz` entry
 * (`authz.ts`), runs the golden
 * vector files in headless Chromium and must agree with the server on every case.
 *
 * The test bundles `authz.ts` (which re-exports `runVectorFile`) with
 * `deno bundle --platform browser`, serves a small page, the bundle and every
 * `vectors/*.json` from a local `Deno.serve` on 127.0.0.1, drives Debian's Chromium
 * through playwright-core, runs every file in the page with `runVectorFile`, and compares
 * case by case with `runVectorFile` run here, in Deno, on the same files. It runs
 * whatever vector files exist (the spec names four: pattern, condition, evaluate,
 * visibility); `pattern.json` is required.
 *
 * A missing `/usr/bin/chromium` fails the test (CI installs it): it is never skipped.
 */
import assert from "node:assert/strict";
import { runVectorFile } from "../../../core/authz/mod.ts";
import {
  bundleForBrowser,
  launchChromium,
  REPO_ROOT,
  serveStatic,
  type StaticFile,
} from "../../support/browser.ts";

/** One case result (`VectorResult`), or a whole file rejected (`VectorFileError` and the like). */
type FileOutcome = { results: CaseResult[] } | { error: string };
type CaseResult = { name: string; ok: boolean; message?: string };

/** The vector kinds of the spec, for the summary line. */
const KINDS = ["pattern", "condition", "evaluate", "visibility"];

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
      const parsed = await response.json();
      try {
        out[file] = { results: runVectorFile(parsed) };
      } catch (error) {
        out[file] = { error: String(error && error.name) + ": " + String(error && error.message) };
      }
    }
    return out;
  };
  globalThis.svcReady = true;
</script>
</body>
</html>
`;

/** The vector files present, sorted. */
async function vectorFiles(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(`${REPO_ROOT}vectors`)) {
    if (entry.isFile && entry.name.endsWith(".json")) names.push(entry.name);
  }
  return names.sort();
}

/** `runVectorFile` here, JSON-cleaned (drops `undefined` fields) so both sides compare structurally. */
function serverOutcome(text: string): FileOutcome {
  try {
    return JSON.parse(JSON.stringify({ results: runVectorFile(JSON.parse(text)) }));
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

function failing(results: readonly CaseResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.message ?? "(no message)"}`);
}

Deno.test("core/authz bundled for the browser agrees with the server on every golden vector", async (t) => {
  const files = await vectorFiles();
  assert.ok(files.includes("pattern.json"), `vectors/pattern.json is missing (found: ${files.join(", ")})`);
  const missing = KINDS.filter((k) => !files.includes(`${k}.json`));
  if (missing.length > 0) console.log(`vector files not present yet: ${missing.join(", ")}`);

  const texts: Record<string, string> = {};
  const server: Record<string, FileOutcome> = {};
  for (const file of files) {
    texts[file] = await Deno.readTextFile(`${REPO_ROOT}vectors/${file}`);
    server[file] = serverOutcome(texts[file]);
  }

  const dir = await Deno.makeTempDir({ prefix: "svc-browser-parity-" });
  let site: ReturnType<typeof serveStatic> | undefined;
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    const bundle = await bundleForBrowser("authz.ts", `${dir}/authz.js`);
    const assets: Record<string, StaticFile> = {
      "/index.html": { body: PAGE, type: "text/html; charset=utf-8" },
      "/authz.js": { body: bundle, type: "text/javascript; charset=utf-8" },
    };
    for (const file of files) assets[`/vectors/${file}`] = { body: texts[file], type: "application/json" };
    site = serveStatic(assets);

    browser = await launchChromium();
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

    const inBrowser = await page.evaluate(
      (names) =>
        (globalThis as unknown as {
          runVectors(files: string[]): Promise<Record<string, FileOutcome>>;
        }).runVectors(names),
      files,
    );
    assert.deepEqual(pageErrors, [], "errors in the page");
    for (const file of files) {
      assert.ok(site.requests.includes(`/vectors/${file}`), `the page never fetched /vectors/${file}`);
    }

    for (const file of files) {
      const here = server[file];
      const there = inBrowser[file];
      const count = "results" in here ? here.results.length : 0;
      await t.step(`${file}: Chromium agrees with the server (${count} cases)`, () => {
        assert.ok(there !== undefined, `${file}: no result from the page`);
        if ("error" in here || "error" in there) {
          assert.deepEqual(there, here, `${file}: the file was rejected on one side or both`);
          assert.fail(`${file}: the vector file was rejected: ${"error" in here ? here.error : ""}`);
        }
        assert.ok(count > 0, `${file}: no cases`);
        const byName = new Map(there.results.map((r) => [r.name, r]));
        const differing = here.results
          .filter((r) => JSON.stringify(byName.get(r.name)) !== JSON.stringify(r))
          .map((r) =>
            `${r.name}: server ${JSON.stringify(r)}, browser ${JSON.stringify(byName.get(r.name))}`
          );
        assert.deepEqual(differing, [], `${file}: cases on which Chromium and the server differ`);
        assert.deepEqual(there.results, here.results, `${file}: case lists differ (order or count)`);
        // Agreement on a failing case is still a failure: the vectors are the reference.
        assert.deepEqual(failing(here.results), [], `${file}: cases failing on both sides`);
      });
    }
  } finally {
    await browser?.close();
    await site?.close();
    await Deno.remove(dir, { recursive: true });
  }
});
