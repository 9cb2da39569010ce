/**
 * The Node adapter of the password pool (`worker_threads`), run here through Deno's
 * `node:worker_threads`; `tsx` runs the same file on Node.
 */
import assert from "node:assert/strict";
import { createNodePasswordHasher, nodePasswordWorkerFactory } from "../../cli/node-password-workers.ts";
import { WorkerPoolPasswordHasher } from "../../core/passwords/pool.ts";
import { PasswordService } from "../../core/passwords/service.ts";

Deno.test("node adapter: worker_threads workers hash, verify and run the dummy verification", async () => {
  const pool = new WorkerPoolPasswordHasher({ size: 1, factory: nodePasswordWorkerFactory() });
  const passwords = new PasswordService({
    hasher: pool,
    params: { memoryKiB: 256, iterations: 1, parallelism: 1 },
  });
  try {
    const stored = await passwords.hash("hunter2");
    assert.deepEqual(await passwords.verify(stored, "hunter2"), { valid: true, needsRehash: false });
    assert.equal((await passwords.verify(stored, "hunter3")).valid, false);
    assert.equal(
      await pool.verify("bcrypt", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"),
      true,
    );
    assert.equal(await passwords.verifyAgainstDummy("hunter2"), false);
    assert.deepEqual(pool.stats(), { workers: 1, busy: 0, queued: 0 });
  } finally {
    await passwords.close();
  }
  const off = { native: false };
  assert.equal(createNodePasswordHasher(0, undefined, off).kind, "in-thread");
  const sized = createNodePasswordHasher(3, undefined, off) as WorkerPoolPasswordHasher;
  assert.equal(sized.size, 3);
  await sized.close();
  // Where the @node-rs/argon2 addon loads (here), argon2id runs on it by default.
  const native = createNodePasswordHasher(3);
  assert.equal(native.kind, "native");
  const params = { memoryKiB: 8192, iterations: 1, parallelism: 1 };
  const encoded = await native.hashArgon2id("correct horse", params, new Uint8Array(16).fill(9));
  assert.equal(await native.verify("argon2id", encoded, "correct horse"), true);
  assert.equal(await native.verify("argon2id", encoded, "wrong horse"), false);
  await native.close();
});
