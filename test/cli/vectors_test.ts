/**
 * `svc vectors`: the four repository files pass; a deliberately wrong case in a temporary
 * file fails, is named, and gives exit code 1 (in process and through the Deno adapter).
 */
import assert from "node:assert/strict";
import { DEFAULT_VECTOR_FILES, vectorsCommand } from "../../cli/vectors.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function io() {
  const lines: string[] = [];
  return {
    lines,
    io: {
      readTextFile: (path: string) => Deno.readTextFile(path),
      print: (line: string) => lines.push(line),
    },
  };
}

const WRONG = {
  kind: "evaluate",
  version: 1,
  cases: [
    {
      name: "correct-allow",
      subject: { id: "u1", orgId: "o1", teamIds: [], attributes: {} },
      grants: [{ pattern: "docs:org:*", effect: "Allow", source: "role:x" }],
      check: { permission: "docs:org:read", resourceOrgId: "o1" },
      expect: { decision: "Allowed" },
    },
    {
      name: "deliberately-wrong-deny-overrides",
      subject: { id: "u1", orgId: "o1", teamIds: [], attributes: {} },
      grants: [
        { pattern: "docs:org:*", effect: "Allow", source: "role:x" },
        { pattern: "docs:org:read", effect: "Deny", source: "role:y" },
      ],
      check: { permission: "docs:org:read", resourceOrgId: "o1" },
      expect: { decision: "Allowed" },
    },
  ],
};

Deno.test("vectorsCommand: the default files all pass", async () => {
  assert.equal(DEFAULT_VECTOR_FILES.length, 4);
  const { lines, io: runtime } = io();
  assert.equal(await vectorsCommand([], runtime), 0);
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0], /^\d+ passed, 0 failed$/);
  assert.ok(Number(lines[0].split(" ")[0]) >= 33 + 32 + 28 + 12);
});

Deno.test("vectorsCommand: a wrong case fails by name with exit code 1", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/wrong.json`;
    await Deno.writeTextFile(file, JSON.stringify(WRONG));
    const { lines, io: runtime } = io();
    assert.equal(await vectorsCommand([file], runtime), 1);
    assert.equal(lines.length, 2);
    assert.match(lines[0], /deliberately-wrong-deny-overrides: expected Allowed, got Denied/);
    assert.equal(lines[1], "1 passed, 1 failed");
    const missing = io();
    assert.equal(await vectorsCommand([`${dir}/absent.json`], missing.io), 1);
    assert.equal(missing.lines.at(-1), "0 passed, 1 failed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno run cli/deno.ts vectors: exit code 0 on the defaults, 1 with a wrong case", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/wrong.json`;
    await Deno.writeTextFile(file, JSON.stringify(WRONG));
    const run = (args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "cli/deno.ts", "vectors", ...args],
        cwd: ROOT,
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
    const ok = await run([]);
    const okOut = new TextDecoder().decode(ok.stdout);
    assert.equal(ok.code, 0, okOut + new TextDecoder().decode(ok.stderr));
    assert.match(okOut, /\d+ passed, 0 failed\n$/);
    const bad = await run(["vectors/pattern.json", file]);
    const badOut = new TextDecoder().decode(bad.stdout);
    assert.equal(bad.code, 1, badOut);
    assert.match(badOut, /deliberately-wrong-deny-overrides/);
    assert.match(badOut, /\d+ passed, 1 failed\n$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
