/**
 * Every server-side fetch goes through the outbound guard (`core/net/outbound.ts`). This test
 * reads the sources (core/, http/, plugins/, storage/, cli/; comments and string literals
 * stripped, so examples and browser scripts inside strings do not count) and lists every place
 * that could reach the network without the guard:
 *
 * - a reference to the global `fetch` (called or passed on; `typeof fetch` and property names
 *   are not references);
 * - a call of a member named `fetch` (`x.fetch(…)`, `this.#fetch(…)`): an injected plain fetch;
 * - a jose `createRemoteJWKSet(…)` without a `[customFetch]` (jose would use the global fetch).
 *
 * Guarded fetches are values of type `OutboundFetch`, named for what they are (`outbound`,
 * `doFetch` over a required guard…), so they are not listed. Every listed site must be on the
 * small allow-list below, with its reason, and every allow-list entry must still match a site.
 */
import { strict as assert } from "node:assert";

const ROOT = new URL("../../../", import.meta.url);
const SCANNED = ["core", "http", "plugins", "storage", "cli"];

/** Sites allowed to use a plain fetch: file, a piece of the line, and why. */
const ALLOWED: readonly { file: string; line: string; why: string }[] = [
  {
    file: "core/net/outbound.ts",
    line: "options.fetch(target, hopInit)",
    why: "the guard itself: the runtime's fetch, called after the checks (when no pinned connection)",
  },
  {
    file: "cli/run.ts",
    line: "fetch: (input, init) => fetch(input, init),",
    why: "the runtime's fetch handed to the guard (createOutboundFetch), and nothing else",
  },
  {
    file: "cli/run.ts",
    line: "app.fetch(req, {",
    why: "the Hono app's request dispatch (incoming requests, no network)",
  },
  {
    file: "cli/deno-runtime.ts",
    line: "serve(fetch, { hostname, port })",
    why: "the adapter receives the Hono dispatch to serve",
  },
  {
    file: "cli/deno-runtime.ts",
    line: "fetch(req, { address:",
    why: "the Hono app's request dispatch (incoming requests, no network)",
  },
  {
    file: "cli/node-runtime.ts",
    line: "serve(fetch, { hostname, port })",
    why: "the adapter receives the Hono dispatch to serve",
  },
  {
    file: "cli/node-runtime.ts",
    line: "fetch(req, { address:",
    why: "the Hono app's request dispatch (incoming requests, no network)",
  },
  {
    file: "cli/bun.ts",
    line: "serve(fetch, { hostname, port })",
    why: "the adapter receives the Hono dispatch to serve",
  },
  {
    file: "cli/bun.ts",
    line: "await fetch(req, { address:",
    why: "the Hono app's request dispatch (incoming requests, no network)",
  },
  {
    file: "cli/server-session.ts",
    line: "fetcher: typeof fetch = (input, init) => fetch(input, init),",
    why:
      "`svc login`, `svc logout` and the stored admin token's refresh: a client of the operator's own running svc (found through the data folder's lock), not the server",
  },
  {
    file: "cli/mail.ts",
    line: "fetcher: typeof fetch = (input, init) => fetch(input, init),",
    why:
      "the `svc mail` command, a client of the operator's own running svc (its configured base URL), not the server",
  },
  {
    file: "cli/import.ts",
    line: "fetcher: typeof fetch = fetch,",
    why:
      "the `svc import` command, a client of the operator's own running svc (its configured base URL), not the server",
  },
  {
    file: "http/shadow-middleware.ts",
    line: "const doFetch = options.fetch ?? fetch;",
    why: "a host application's client of svc (the base URL its code names), not a fetch svc's server makes",
  },
];

/** Source text with comments and string literals blanked (newlines kept, so lines still count). */
export function codeOnly(source: string): string {
  let out = "";
  let i = 0;
  // Inside template literals, a stack of brace depths for `${…}` code.
  const templates: number[] = [];
  let braces = 0;
  let last = ""; // the last significant code character (regex literals follow operators)
  const blank = (text: string) => text.replace(/[^\n]/g, " ");
  const skipString = (quote: string) => {
    let j = i + 1;
    while (j < source.length && source[j] !== quote && source[j] !== "\n") j += source[j] === "\\" ? 2 : 1;
    out += blank(source.slice(i, j + 1));
    i = j + 1;
    last = "a";
  };
  const skipTemplateText = () => {
    // From just after a backtick or a closing `}` of `${…}`: text until the next `${` or backtick.
    let j = i;
    while (j < source.length) {
      if (source[j] === "\\") j += 2;
      else if (source[j] === "`") {
        out += blank(source.slice(i, j + 1));
        i = j + 1;
        last = "a";
        return;
      } else if (source[j] === "$" && source[j + 1] === "{") {
        out += blank(source.slice(i, j + 2));
        i = j + 2;
        templates.push(braces);
        last = "(";
        return;
      } else j++;
    }
    out += blank(source.slice(i));
    i = source.length;
  };
  while (i < source.length) {
    const ch = source[i];
    const next = source[i + 1];
    if (ch === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (ch === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (ch === '"' || ch === "'") {
      skipString(ch);
    } else if (ch === "`") {
      out += " ";
      i++;
      skipTemplateText();
    } else if (ch === "/" && (last === "" || "(,=:[!&|?{};+-*%<>~^".includes(last))) {
      // A regular expression literal.
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== "\n") {
        if (source[j] === "\\") j += 2;
        else {
          if (source[j] === "[") inClass = true;
          else if (source[j] === "]") inClass = false;
          else if (source[j] === "/" && !inClass) break;
          j++;
        }
      }
      out += blank(source.slice(i, j + 1));
      i = j + 1;
      last = "a";
    } else if (ch === "}" && templates.length > 0 && templates.at(-1) === braces) {
      templates.pop();
      out += " ";
      i++;
      skipTemplateText();
    } else {
      if (ch === "{") braces++;
      else if (ch === "}") braces--;
      if (!/\s/.test(ch)) last = /[\w$)\]]/.test(ch) ? "a" : ch;
      out += ch;
      i++;
    }
  }
  return out;
}

/** The sites of one file that could reach the network without the guard. */
export function unguardedSites(source: string): { line: number; kind: string }[] {
  const code = codeOnly(source);
  const sites: { line: number; kind: string }[] = [];
  const lineOf = (index: number) => code.slice(0, index).split("\n").length;
  // The global fetch, called or passed on (not `typeof fetch`, not a property or parameter name with a type).
  for (const m of code.matchAll(/(?<![\w$.#])(?<!typeof\s+)fetch\b(?!\s*\??:)/g)) {
    sites.push({ line: lineOf(m.index), kind: "global fetch" });
  }
  for (const m of code.matchAll(/[.#]fetch\s*\(/g)) {
    sites.push({ line: lineOf(m.index), kind: "member fetch call" });
  }
  for (const m of code.matchAll(/createRemoteJWKSet\s*\(/g)) {
    if (!code.slice(m.index, m.index + 600).includes("[customFetch]")) {
      sites.push({ line: lineOf(m.index), kind: "createRemoteJWKSet without customFetch" });
    }
  }
  return sites;
}

async function* sourceFiles(dir: URL, path: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const child = `${path}/${entry.name}`;
    if (entry.isDirectory) yield* sourceFiles(new URL(`${entry.name}/`, dir), child);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) yield child;
  }
}

Deno.test("the scanner finds plain fetches and ignores comments, strings and typed names", () => {
  const found = (source: string) => unguardedSites(source).map((s) => s.kind);
  assert.deepEqual(found("const r = await fetch(url);"), ["global fetch"]);
  assert.deepEqual(found("const f = options.fetch ?? fetch;"), ["global fetch"]);
  assert.deepEqual(found("await globalThis.fetch(url)"), ["member fetch call"]);
  assert.deepEqual(found("await this.#fetch(url)"), ["member fetch call"]);
  assert.deepEqual(found("createRemoteJWKSet(new URL(u), { timeoutDuration: 1 })"), [
    "createRemoteJWKSet without customFetch",
  ]);
  assert.deepEqual(found("createRemoteJWKSet(new URL(u), { [customFetch]: outbound })"), []);
  assert.deepEqual(found("const x = `${await fetch(u)}`;"), ["global fetch"]);
  assert.deepEqual(
    found(
      [
        "// fetch(url) in a comment",
        "/** fetch(url) in a doc */",
        'const s = "fetch(url)";',
        "const t = `fetch(${1})`;",
        "const re = /fetch\\(/;",
        "interface A { fetch?: typeof fetch; readonly fetch: OutboundFetch }",
        "const o = { fetch: outbound };",
        "await outbound(url); await doFetch(url); await outboundFetch(url);",
      ].join("\n"),
    ),
    [],
  );
});

Deno.test("every server-side fetch in the sources goes through the outbound guard", async () => {
  const unexpected: string[] = [];
  const used = new Set<number>();
  for (const dir of SCANNED) {
    for await (const file of sourceFiles(new URL(`${dir}/`, ROOT), dir)) {
      const source = await Deno.readTextFile(new URL(file, ROOT));
      const lines = source.split("\n");
      for (const site of unguardedSites(source)) {
        const text = lines[site.line - 1].trim();
        const allowed = ALLOWED.findIndex((a) => a.file === file && text.includes(a.line));
        if (allowed >= 0) used.add(allowed);
        else unexpected.push(`${file}:${site.line} (${site.kind}): ${text}`);
      }
    }
  }
  assert.deepEqual(
    unexpected,
    [],
    "a fetch that does not go through the outbound guard: use the `OutboundFetch` svc builds " +
      "(PluginContext.outbound, createOutboundFetch), or add it to ALLOWED with its reason",
  );
  const stale = ALLOWED.filter((_, i) => !used.has(i)).map((a) => `${a.file}: ${a.line}`);
  assert.deepEqual(stale, [], "allow-list entries that match no site any more");
});
