/**
 * The shell blocks the documentation marks runnable (an HTML comment `<!-- runnable -->` on the
 * line before a ```sh block, in README.md and docs/getting-started.md) run with bash in the
 * repository folder, `node_modules/.bin` first on the PATH as after `npm ci`, and exit 0 (issue
 * 27). Only quick commands that change nothing are marked (never `npm ci` or `npm start`); the
 * test refuses a marked block that would.
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const PAGES = ["README.md", "docs/getting-started.md"];
/** Commands that install, serve or take long: never marked runnable. */
const REFUSED = /\bnpm\s+(ci|install|start|test)\b|\bsvc\s+start\b|\bnpm\s+run\s+start/;

/** The runnable blocks of a Markdown text, with the line each starts on. */
export function runnableBlocks(markdown: string): { line: number; script: string }[] {
  const lines = markdown.split("\n");
  const blocks: { line: number; script: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "<!-- runnable -->") continue;
    // The mark, blank lines (deno fmt puts one), then the block.
    let open = i + 1;
    while (open < lines.length && lines[open].trim() === "") open++;
    const fence = lines[open]?.trim();
    assert.ok(
      fence === "```sh" || fence === "```bash",
      `line ${i + 1}: a runnable mark before a non-shell block`,
    );
    const end = lines.findIndex((l, j) => j > open && l.trim() === "```");
    assert.ok(end > open, `line ${i + 1}: the block is not closed`);
    blocks.push({ line: open + 2, script: lines.slice(open + 1, end).join("\n") });
  }
  return blocks;
}

Deno.test("runnableBlocks finds only marked shell blocks", () => {
  const text = "a\n<!-- runnable -->\n\n```sh\necho 1\necho 2\n```\n```sh\nnpm start\n```\n";
  assert.deepEqual(runnableBlocks(text), [{ line: 5, script: "echo 1\necho 2" }]);
  assert.throws(() => runnableBlocks("<!-- runnable -->\n```text\nx\n```\n"));
});

for (const page of PAGES) {
  const text = await Deno.readTextFile(new URL(page, root));
  const blocks = runnableBlocks(text);
  Deno.test({
    name: `${page}: the commands marked runnable run and exit 0 (${blocks.length})`,
    ignore: blocks.length === 0,
    async fn() {
      const bin = new URL("node_modules/.bin", root).pathname;
      for (const { line, script } of blocks) {
        assert.doesNotMatch(script, REFUSED, `${page}:${line}: not quick or changes things`);
        const run = await new Deno.Command("bash", {
          args: ["-euo", "pipefail", "-c", script],
          cwd: root,
          env: {
            PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`,
            NO_COLOR: "1",
            npm_config_update_notifier: "false",
          },
          stdout: "piped",
          stderr: "piped",
          signal: AbortSignal.timeout(60_000),
        }).output();
        const output = new TextDecoder().decode(run.stderr).slice(-2000);
        assert.equal(run.code, 0, `${page}:${line}: \`${script}\` exited ${run.code}\n${output}`);
      }
    },
  });
}
