/**
 * The generated reference pages in docs/reference/ are what `cli/docs-reference.ts` renders from
 * the sources today: a setting, command, event kind or error code added without regenerating
 * fails here.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { adminApiPage, errorCodesOf, referencePages, serverSources } from "../../cli/docs-reference.ts";
import { runCli, type RuntimeAdapter } from "../../cli/run.ts";
import { servedOpenApiDocument } from "../../cli/served-openapi.ts";
import { ConfigError, loadConfig } from "../../core/config/mod.ts";
import { builtinPlugins } from "../../plugins/builtin.ts";
import { loadPluginConfig, pluginEnvNames } from "../../plugins/host.ts";

const root = new URL("../../", import.meta.url);

// deno-lint-ignore no-explicit-any
type Json = any;

/** The OpenAPI document `svc start` serves with every built-in plugin (booted once, in process). */
let served: Promise<Json> | null = null;
const openapi = () => served ??= servedOpenApiDocument();

Deno.test("docs/reference pages are generated from the current sources (run `npx deno task docs:reference`)", async () => {
  const pages = referencePages(await serverSources(root), await openapi());
  assert.ok(pages.has("docs/reference/admin-api.md"));
  for (const [path, expected] of pages) {
    const actual = await Deno.readTextFile(new URL(path, root));
    assert.ok(actual === expected, `${path} is stale: run \`npx deno task docs:reference\``);
  }
});

Deno.test("the settings reference lists every variable `svc help` prints", () => {
  const page = referencePages(new Map()).get("docs/reference/settings.md")!;
  for (
    const name of [
      "SVC_HOST",
      "SVC_DATABASE_URL",
      "SVC_PASSWORD_MAX_BCRYPT_COST",
      "SVC_OUTBOUND_ALLOW_PRIVATE",
    ]
  ) {
    assert.match(page, new RegExp("`" + name + "`"));
  }
});

Deno.test("error codes are read from SvcError calls: code, a literal status (else 400), the first file", () => {
  const sources = new Map([
    [
      "core/b.ts",
      'class A extends SvcError {\n  constructor() {\n    super("too_many", `Wait (${f(1, 2)}), then retry`, 429);\n  }\n}',
    ],
    [
      "core/a.ts",
      'throw new SvcError(\n  "too_many",\n  "again, later",\n  429,\n  { retryAfterSeconds: 3 },\n);',
    ],
    ["http/c.ts", 'throw new SvcError("plain_refusal", "no");\nsuper("Not a code, a message", details);'],
    ["http/d.ts", 'throw new SvcError("gone_away", message, status);'],
  ]);
  assert.deepEqual(errorCodesOf(sources), [
    { code: "gone_away", status: 400, file: "http/d.ts" },
    { code: "plain_refusal", status: 400, file: "http/c.ts" },
    { code: "too_many", status: 429, file: "core/a.ts" },
  ]);
});

Deno.test("the error reference names the codes clients meet most", async () => {
  const page = referencePages(await serverSources(root)).get("docs/reference/errors.md")!;
  for (
    const [code, status] of [["invalid_request", 400], ["not_found", 404], ["login_blocked", 429]] as const
  ) {
    assert.match(page, new RegExp("`" + code + "` \\| " + status + " \\|"));
  }
});

/** The settings page's rows: variable, type, default, bounds, meaning (cells unescaped). */
function settingsTable(page: string): { name: string; type: string; defaultText: string; bounds: string }[] {
  return page.split("\n").filter((line) => line.startsWith("| `SVC_")).map((line) => {
    const cells = line.slice(2, -2).split(/(?<!\\) \| /).map((c) => c.replaceAll("\\|", "|"));
    assert.equal(cells.length, 5, `a settings row has 5 cells: ${line}`);
    return {
      name: cells[0].slice(1, -1),
      type: cells[1],
      defaultText: cells[2].slice(1, -1),
      bounds: cells[3],
    };
  });
}

const settingsPageText = referencePages(new Map()).get("docs/reference/settings.md")!;

Deno.test("every setting row has a type; a number setting with bounds shows them", () => {
  const rows = settingsTable(settingsPageText);
  assert.ok(rows.length > 100, `${rows.length} rows`);
  for (const row of rows) {
    // A type in words: never empty, never a bare valibot schema kind the reader cannot act on.
    assert.match(row.type, /^[a-z:/ ,.A-Z-]+$/, row.name);
    assert.doesNotMatch(row.type, /^(union|variant|object|record|custom|unknown|any|undefined)$/, row.name);
    if (row.type === "integer") assert.match(row.bounds, /^-?\d+-\d+|^at (least|most) \d+/, row.name);
  }
  const byName = new Map(rows.map((row) => [row.name, row]));
  assert.deepEqual(byName.get("SVC_PORT"), {
    name: "SVC_PORT",
    type: "integer",
    defaultText: "8080",
    bounds: "0-65535",
  });
  assert.equal(byName.get("SVC_TOTP_DIGITS")?.bounds, "6-8");
  assert.equal(byName.get("SVC_COOKIE_SAME_SITE")?.type, "one of: Strict, Lax, None");
  assert.equal(byName.get("SVC_LOG_REQUESTS")?.type, "boolean");
  // Named by the settings builders (`settingType` metadata), where `string` would say too little.
  assert.equal(byName.get("SVC_BASE_URL")?.type, "URL");
  assert.equal(byName.get("SVC_RP_ORIGINS")?.type, "list of origins");
  assert.equal(byName.get("SVC_RP_ORIGINS")?.bounds, "at least 1 item");
  assert.equal(byName.get("SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS")?.type, "list of integers");
  assert.equal(byName.get("SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS")?.bounds, "each 1-604800, at most 20 items");
  // A plugin's setting, read from the plugin's own schema.
  assert.equal(byName.get("SVC_OIDC_CODE_TTL_SECONDS")?.bounds, "10-600");
});

Deno.test("`svc help` prints each setting with the page's type, bounds and default", async () => {
  const lines: string[] = [];
  const runtime = {
    print: (line: string) => void lines.push(line),
    printError: () => {},
  } as unknown as RuntimeAdapter;
  assert.equal(await runCli(["help"], runtime), 0);
  for (const row of settingsTable(settingsPageText)) {
    const bounds = row.bounds === "-" ? "" : `, ${row.bounds}`;
    assert.ok(lines.includes(`  ${row.name} (${row.type}${bounds}; default: ${row.defaultText})`), row.name);
  }
});

/**
 * Loads `name=text` the way `svc start` does (svc's loader, then the plugin's section loader):
 * "accepted", "bounds" when the field's own schema refuses it, or "other" when a rule spanning
 * fields does (`SVC_SESSION_IDLE_TIMEOUT_SECONDS` at most the absolute timeout…, named in the
 * settings' meanings).
 */
function loads(name: string, text: string): "accepted" | "bounds" | "other" {
  const plugins = builtinPlugins();
  const plugin = plugins.find((p) => (p.config?.settings ?? []).some((s) => s.env === name));
  try {
    const env = { [name]: text };
    const { config } = loadConfig({ env, pluginEnv: pluginEnvNames(plugins) });
    if (plugin) loadPluginConfig(plugin, config, env);
    return "accepted";
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    assert.match(err.message, new RegExp(name), `the refusal names ${name}: ${err.message}`);
    // A rule spanning fields names the other field; a field's own bounds name only it.
    const others = [...err.message.matchAll(/\bSVC_[A-Z0-9_]+/g)].filter((m) => m[0] !== name);
    return others.length === 0 ? "bounds" : "other";
  }
}

/** The integer settings with a printed `min-max`, and their bounds as printed. */
const bounded = settingsTable(settingsPageText).flatMap((row) => {
  const m = /^(-?\d+)-(\d+)$/.exec(row.bounds);
  return row.type === "integer" && m ? [{ name: row.name, min: Number(m[1]), max: Number(m[2]) }] : [];
});

Deno.test("the bounds printed are the bounds the loader enforces, at the boundary", () => {
  assert.ok(bounded.length > 80, `${bounded.length} bounded settings`);
  // Rules spanning fields refuse only in-bounds values their partners' defaults rule out.
  assert.equal(loads("SVC_SESSION_IDLE_TIMEOUT_SECONDS", "31536000"), "other");
  assert.equal(loads("SVC_SESSION_IDLE_TIMEOUT_SECONDS", "31536001"), "bounds");
  const wrong: string[] = [];
  for (const { name, min, max } of bounded) {
    for (const [n, inside] of [[min, true], [max, true], [min - 1, false], [max + 1, false]] as const) {
      const outcome = loads(name, String(n));
      if ((outcome === "bounds") === inside) wrong.push(`${name}=${n}: ${outcome}`);
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("property: a whole number is accepted exactly when it lies within the printed bounds", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...bounded),
      fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -1_000_000, max: 1_000_000 })),
      fc.boolean(),
      ({ name, min, max }, offset, fromTop) => {
        const n = (fromTop ? max : min) + offset;
        const outcome = loads(name, String(n));
        // Inside: never refused by the field's bounds; outside: always, and by them.
        if (n >= min && n <= max) assert.notEqual(outcome, "bounds", `${name}=${n}`);
        else assert.equal(outcome, "bounds", `${name}=${n}`);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("the HTTP API page has every served operation under its tag, with its fence, body fields and answers", async () => {
  const doc = await openapi();
  const page = adminApiPage(doc);
  assert.ok(page.length < 150_000, `the page stays readable: ${page.length} characters`);
  // Each tag's section, then its operations, each once.
  const sections = new Map<string, string>();
  for (const part of page.split(/^## /m).slice(1)) sections.set(part.slice(0, part.indexOf("\n")), part);
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      operations++;
      const section = sections.get(op.tags[0]);
      assert.ok(section !== undefined, `${op.tags[0]} has a section`);
      const heading = `### \`${method.toUpperCase()} ${path}\``;
      const start = section.indexOf(`${heading}\n`);
      assert.ok(start >= 0, `${heading} under ${op.tags[0]}`);
      const entry = section.slice(start, section.indexOf("\n### ", start + 1) >>> 0 || undefined);
      for (const permission of op["x-svc-permissions"] ?? []) {
        assert.ok(entry.includes(`\`${permission}\``), `${heading}: ${permission}`);
      }
      for (const status of Object.keys(op.responses)) {
        assert.match(entry, new RegExp(`- Answers: .*\\b${status}\\b`), `${heading}: ${status}`);
      }
      const body = op.requestBody?.content?.["application/json"]?.schema;
      for (const field of Object.keys(body?.properties ?? {})) {
        assert.ok(entry.includes(`\`${field}\` (`), `${heading}: ${field}`);
      }
    }
  }
  assert.equal(page.match(/^### /gm)?.length, operations);
  // The admin API's routes are there with their fences.
  const users = sections.get("Admin: users")!;
  assert.match(
    users,
    /### `POST \/svc-admin\/users`\n\nCreate a user\.\n\n- Caller: bearer, service account, cookie; permission \(any of\): `svc:global:users-manage`\n- Body: `email` \(string, required\)/,
  );
  for (
    const tag of [
      "Admin: SAML",
      "Admin: SCIM",
      "Admin: OIDC clients",
      "Admin: federation",
      "Admin: workload federation",
    ]
  ) {
    assert.ok(sections.has(tag), `a plugin's admin routes: ${tag}`);
  }
});
