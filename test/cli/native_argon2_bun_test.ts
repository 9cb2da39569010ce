/**
 * The runtime's native argon2id (`cli/native-argon2.ts`) and the WebAssembly backends make and
 * accept the same PHC strings, checked under Bun (the runtime of this repository's toolchain that
 * has `crypto.argon2`; Deno has none, the Node here is older than 24.7): runs
 * `test/support/argon2-cross-check.ts` with `bun` (from PATH, or `SVC_TEST_BUN`) and expects it to
 * succeed.
 */
import assert from "node:assert/strict";

// Bun from PATH (`npm install` without scripts leaves node_modules/.bin/bun a placeholder).
const BUN = Deno.env.get("SVC_TEST_BUN") ?? "bun";

Deno.test("native argon2 (bun): a hash from any backend verifies on every other, Bun.password included", async () => {
  const output = await new Deno.Command(BUN, {
    args: [new URL("../support/argon2-cross-check.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, text);
  assert.match(text, /ok: node:crypto argon2, wasm-simd, hash-wasm, @node-rs\/argon2, Bun.password/);
});
