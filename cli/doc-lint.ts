/**
 * `deno run -A cli/doc-lint.ts <entry point>…`: `deno doc --lint` of the package's entry points,
 * failing on every diagnostic but one kind: a `private-type-ref` whose referenced type is a
 * dependency's (hono's `Context`, kysely's `Generated`, valibot's schema types, jose's
 * `JWTVerifyGetKey`). Deno drops those for jsr: and https: dependencies (denoland/deno#34339,
 * for #27364: the visibility of an external type is its own package's concern), but npm packages
 * resolve to file: URLs (`node_modules`), so their exported types are still reported as private.
 *
 * A referenced type counts as a dependency's only when svc's own sources declare nothing of that
 * name at the top of a module: an own type that the entry points do not export is always
 * reported, even when a dependency has a type of the same name. Prints what remains and exits 1
 * when anything does.
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url);
const SKIPPED_DIRECTORIES = new Set(["node_modules", "dist", ".git", ".svc-data"]);

/** Top-level declarations: `interface X`, `type X =`, `class X`, `enum X`, `const X`, `function X`. */
const DECLARATION =
  /^(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:(?:interface|type|class|enum)\s+([A-Za-z_$][\w$]*)\s*(?:<|=|\{|extends|implements)|(?:const|let|function\*?)\s+([A-Za-z_$][\w$]*))/gm;

async function ownDeclarations(dir: URL, names: Set<string>): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith(".") || SKIPPED_DIRECTORIES.has(entry.name)) continue;
    const url = new URL(entry.isDirectory ? `${entry.name}/` : entry.name, dir);
    if (entry.isDirectory) await ownDeclarations(url, names);
    else if (/\.tsx?$/.test(entry.name)) {
      for (const match of (await Deno.readTextFile(url)).matchAll(DECLARATION)) {
        names.add(match[1] ?? match[2]);
      }
    }
  }
}

/** One diagnostic of `deno doc --lint`: its text, its code and, for `private-type-ref`, the type. */
interface Diagnostic {
  text: string;
  code: string;
  referencedType: string | null;
}

function parseDiagnostics(output: string): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const block of output.split(/\n(?=error\[)/)) {
    const head = /^error\[([\w-]+)\]: (.*)$/m.exec(block);
    if (head === null || !block.startsWith("error[")) continue;
    const referenced = /references private type '([^']+)'/.exec(head[2]);
    diagnostics.push({
      // The closing "Found N documentation lint errors." belongs to no diagnostic.
      text: block.replace(/\nerror: Found \d+ documentation lint errors?\.[\s\S]*$/, "").trimEnd(),
      code: head[1],
      referencedType: referenced?.[1] ?? null,
    });
  }
  return diagnostics;
}

if (import.meta.main) {
  const entryPoints = Deno.args;
  if (entryPoints.length === 0) {
    console.error("usage: deno run -A cli/doc-lint.ts <entry point>…");
    Deno.exit(2);
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...entryPoints],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  const output = new TextDecoder().decode(out.stderr);
  const diagnostics = parseDiagnostics(output);
  if (!out.success && diagnostics.length === 0) {
    console.error(output);
    Deno.exit(1);
  }
  const own = new Set<string>();
  await ownDeclarations(ROOT, own);
  const remaining = diagnostics.filter((d) =>
    !(d.code === "private-type-ref" && d.referencedType !== null && !own.has(d.referencedType))
  );
  for (const d of remaining) console.error(`${d.text}\n`);
  const skipped = diagnostics.length - remaining.length;
  console.error(
    `${remaining.length} documentation lint error(s) in ${entryPoints.join(", ")}; ` +
      `${skipped} private-type-ref(s) to dependencies' types skipped`,
  );
  Deno.exit(remaining.length === 0 ? 0 : 1);
}
