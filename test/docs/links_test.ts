/**
 * The documentation's links and commands: every relative link in README.md, CONTRIBUTING.md and
 * docs/ names a file that exists (and, with `#anchor`, a heading of that file), every page under
 * docs/ is reachable from the README through links, and no shell block runs a bare `deno` (there
 * is no `deno` on a fresh machine's PATH: the commands say `npx deno` or use npm scripts).
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);

async function markdownFiles(dir: URL, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory) found.push(...await markdownFiles(new URL(`${entry.name}/`, dir), `${path}/`));
    else if (entry.name.endsWith(".md")) found.push(path);
  }
  return found.sort();
}

async function allPages(): Promise<string[]> {
  return [
    "README.md",
    "CONTRIBUTING.md",
    "ARCHITECTURE.md",
    ...await markdownFiles(new URL("docs/", root), "docs/"),
  ]
    .filter((path) => {
      try {
        Deno.statSync(new URL(path, root));
        return true;
      } catch {
        return false;
      }
    });
}

/** GitHub's heading anchors: lowercased, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    const m = /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, "").replaceAll(" ", "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The link targets of a page, outside code blocks and code spans. */
function linksOf(markdown: string): string[] {
  const links: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    const text = line.replace(/`[^`]*`/g, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) links.push(m[1]);
  }
  return links;
}

function resolve(from: string, target: string): string {
  return new URL(target, new URL(from, "file:///repo/")).pathname.replace(/^\/repo\//, "");
}

Deno.test("every relative link in the docs names an existing file and heading", async () => {
  const pages = await allPages();
  const texts = new Map(
    await Promise.all(pages.map(async (p) => [p, await Deno.readTextFile(new URL(p, root))] as const)),
  );
  const broken: string[] = [];
  for (const [page, text] of texts) {
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto:
      const [file, anchor] = link.split("#", 2);
      const target = file === "" ? page : resolve(page, file);
      let targetText = texts.get(target);
      if (targetText === undefined) {
        try {
          const info = await Deno.stat(new URL(target, root));
          if (!info.isFile && !info.isDirectory) throw new Error();
          if (anchor === undefined) continue;
          targetText = await Deno.readTextFile(new URL(target, root));
        } catch {
          broken.push(`${page}: ${link} (no such file)`);
          continue;
        }
      }
      if (anchor !== undefined && anchor !== "" && !anchorsOf(targetText).has(anchor)) {
        broken.push(`${page}: ${link} (no such heading)`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("every page under docs/ is reachable from the README", async () => {
  const pages = await allPages();
  const texts = new Map(
    await Promise.all(pages.map(async (p) => [p, await Deno.readTextFile(new URL(p, root))] as const)),
  );
  const reached = new Set<string>(["README.md"]);
  const queue = ["README.md"];
  while (queue.length > 0) {
    const page = queue.shift()!;
    for (const link of linksOf(texts.get(page) ?? "")) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      const file = link.split("#", 1)[0];
      if (file === "") continue;
      const target = resolve(page, file);
      if (texts.has(target) && !reached.has(target)) {
        reached.add(target);
        queue.push(target);
      }
    }
  }
  const unreached = pages.filter((p) => p.startsWith("docs/") && !reached.has(p));
  assert.deepEqual(unreached, []);
});

Deno.test("no shell block in the docs runs a bare `deno` (a fresh machine has `npx deno`)", async () => {
  const bare: string[] = [];
  for (const page of await allPages()) {
    const lines = (await Deno.readTextFile(new URL(page, root))).split("\n");
    let fenced = false;
    let shell = false;
    lines.forEach((line, i) => {
      if (line.startsWith("```")) {
        fenced = !fenced;
        shell = fenced && /^```(sh|bash|shell|console)?\s*$/.test(line);
        return;
      }
      if (shell && /(^|[;&|(]\s*|\$\s*)deno\s/.test(line.trimStart())) {
        bare.push(`${page}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(bare, []);
});
