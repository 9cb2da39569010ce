/**
 * The worker pool: Web Workers doing real argon2id work (and legacy verifications), the
 * event loop staying responsive while several hashes run, and the pool's scheduling and
 * failure handling with scripted workers.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { utf8 } from "../../../core/encoding.ts";
import { createPasswordHasher } from "../../../core/passwords/create.ts";
import { InThreadPasswordHasher } from "../../../core/passwords/hasher.ts";
import type { PasswordJobMessage, PasswordJobReply } from "../../../core/passwords/jobs.ts";
import {
  defaultWorkerCount,
  MAX_DEFAULT_WORKERS,
  type PasswordWorker,
  webWorkerFactory,
  WorkerPoolPasswordHasher,
} from "../../../core/passwords/pool.ts";
import { UnknownPasswordAlgorithmError } from "../../../core/passwords/registry.ts";

const REF = "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4";

Deno.test("pool: Web Workers hash and verify under every tag", async () => {
  const pool = new WorkerPoolPasswordHasher({ size: 2, factory: webWorkerFactory() });
  try {
    const params = { memoryKiB: 256, iterations: 2, parallelism: 1 };
    assert.equal(await pool.hashArgon2id("password", params, utf8("somesalt")), REF);
    const results = await Promise.all([
      pool.verify("argon2id", REF, "password"),
      pool.verify("argon2id", REF, "wrong"),
      pool.verify("bcrypt", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", "U*U"),
      pool.verify(
        "pbkdf2-sha256",
        "$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ",
        "password",
      ),
      pool.verify(
        "framework-identity-v3",
        "AQAAAAIAAAAyAAAAEOMwvh3+FZxqkdMBz2ekgGhwQ4B6pZWND6zgESBuWiHw",
        "my password",
      ),
      pool.verify("argon2id", "$argon2id$malformed", "password"),
    ]);
    assert.deepEqual(results, [true, false, true, true, true, false]);
    assert.deepEqual(pool.stats(), { workers: 2, busy: 0, queued: 0 });
    await assert.rejects(pool.verify("sha1", "x", "y"), UnknownPasswordAlgorithmError);
  } finally {
    await pool.close();
  }
});

/** Ticks of a 5 ms timer while `work` runs, and whether a 10 ms "other request" finished before it. */
async function whileRunning(work: () => Promise<unknown>): Promise<{ ticks: number; otherFirst: boolean }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const order: string[] = [];
  const other = new Promise<void>((resolve) =>
    setTimeout(() => resolve(void order.push("other request")), 10)
  );
  try {
    await work().then(() => order.push("hashing"));
    await other;
    return { ticks, otherFirst: order[0] === "other request" };
  } finally {
    clearInterval(timer);
  }
}

// Asserted on ordering and on the timer firing at all, not on latency figures: this machine
// is shared, and scheduling delays under load are not the pool's doing.
Deno.test("pool: the event loop keeps serving while several argon2id hashes run in the workers", async () => {
  const params = { memoryKiB: 16384, iterations: 3, parallelism: 1 };
  const salt = new Uint8Array(16);
  const pool = new WorkerPoolPasswordHasher({ size: 2, factory: webWorkerFactory() });
  try {
    // Start both workers and compile the WASM outside the measurement.
    await Promise.all([
      pool.hashArgon2id("warm-up", params, salt),
      pool.hashArgon2id("warm-up", params, salt),
    ]);

    // Contrast: in the calling thread a hash holds the event loop; the other request waits for it.
    const inThread = new InThreadPasswordHasher();
    await inThread.hashArgon2id("warm-up", params, salt);
    const blocked = await whileRunning(() => inThread.hashArgon2id("a", params, salt));
    assert.equal(blocked.otherFirst, false, "in-thread: the hash finished before the 10 ms request");

    let busyWhenServed = 0;
    const served = await whileRunning(async () => {
      const hashes = [1, 2, 3, 4].map((i) => pool.hashArgon2id(`password ${i}`, params, salt));
      await new Promise((resolve) => setTimeout(resolve, 10));
      busyWhenServed = pool.stats().busy;
      assert.equal(new Set(await Promise.all(hashes)).size, 4);
    });
    assert.equal(served.otherFirst, true, "pool: the 10 ms request finished while the hashes ran");
    assert.equal(busyWhenServed, 2, "both workers were hashing when the other request was served");
    assert.ok(served.ticks >= 4, `the timer kept firing during the pool run (${served.ticks} ticks)`);
  } finally {
    await pool.close();
  }
});

/** A scripted worker: the test decides when and how each job finishes. */
class FakeWorker implements PasswordWorker {
  static made: FakeWorker[] = [];
  jobs: PasswordJobMessage[] = [];
  /** Jobs answered or failed. */
  answered = 0;
  terminated = false;
  #reply!: (r: PasswordJobReply) => void;
  #fail!: (e: unknown) => void;
  constructor() {
    FakeWorker.made.push(this);
  }
  post(message: PasswordJobMessage) {
    this.jobs.push(message);
  }
  listen(onReply: (r: PasswordJobReply) => void, onFailure: (e: unknown) => void) {
    this.#reply = onReply;
    this.#fail = onFailure;
  }
  answer(value: boolean | string) {
    this.answered++;
    this.#reply({ id: this.jobs.at(-1)!.id, ok: true, value });
  }
  crash() {
    this.answered++;
    this.#fail(new Error("worker crashed"));
  }
  terminate() {
    this.terminated = true;
  }
}

Deno.test("pool: jobs queue in order beyond the pool size; a crashed worker fails its job and is replaced", async () => {
  FakeWorker.made = [];
  const pool = new WorkerPoolPasswordHasher({ size: 2, factory: () => new FakeWorker() });
  const a = pool.verify("argon2id", "a", "pw");
  const b = pool.verify("argon2id", "b", "pw");
  const c = pool.verify("argon2id", "c", "pw");
  assert.equal(FakeWorker.made.length, 2);
  assert.deepEqual(pool.stats(), { workers: 2, busy: 2, queued: 1 });
  const [w1, w2] = FakeWorker.made;
  w1.answer(true);
  assert.equal(await a, true);
  assert.equal(w1.jobs.length, 2, "the queued job went to the freed worker");
  assert.equal((w1.jobs[1] as { hash: string }).hash, "c");
  w2.crash();
  await assert.rejects(b, /worker crashed/);
  assert.equal(w2.terminated, true);
  assert.deepEqual(pool.stats(), { workers: 1, busy: 1, queued: 0 });
  const d = pool.verify("argon2id", "d", "pw");
  assert.equal(FakeWorker.made.length, 3, "a replacement worker started");
  FakeWorker.made[2].answer(false);
  assert.equal(await d, false);
  w1.answer(true);
  assert.equal(await c, true);
  await pool.close();
  await assert.rejects(pool.verify("argon2id", "e", "pw"), /closed/);
});

Deno.test("pool: close rejects queued and running jobs and stops the workers", async () => {
  FakeWorker.made = [];
  const pool = new WorkerPoolPasswordHasher({ size: 1, factory: () => new FakeWorker() });
  const running = pool.verify("argon2id", "a", "pw");
  const queued = pool.verify("argon2id", "b", "pw");
  await pool.close();
  await assert.rejects(running, /closed/);
  await assert.rejects(queued, /closed/);
  assert.equal(FakeWorker.made[0].terminated, true);
  assert.throws(() => new WorkerPoolPasswordHasher({ size: 0, factory: () => new FakeWorker() }), RangeError);
});

/** Timers run by the test: `fire()` runs the idle stops that are due. */
class ManualTimers {
  #next = 1;
  readonly pending = new Map<number, { run: () => void; ms: number }>();
  set(run: () => void, ms: number): unknown {
    const handle = this.#next++;
    this.pending.set(handle, { run, ms });
    return handle;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  fire(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const timer of due) timer.run();
  }
}

Deno.test("pool: a worker idle for idleMs stops; a busy one never; the next job starts a new one", async () => {
  FakeWorker.made = [];
  const timers = new ManualTimers();
  const pool = new WorkerPoolPasswordHasher({
    size: 2,
    factory: () => new FakeWorker(),
    idleMs: 60_000,
    timers,
  });
  try {
    const a = pool.verify("argon2id", "a", "pw");
    const b = pool.verify("argon2id", "b", "pw");
    const [w1, w2] = FakeWorker.made;
    assert.equal(timers.pending.size, 0, "no idle stop while busy");
    w1.answer(true);
    assert.equal(await a, true);
    assert.deepEqual([...timers.pending.values()].map((t) => t.ms), [60_000]);
    // A new job before the stop is due cancels it.
    const c = pool.verify("argon2id", "c", "pw");
    assert.equal(timers.pending.size, 0);
    w1.answer(false);
    assert.equal(await c, false);
    timers.fire();
    assert.equal(w1.terminated, true, "the idle worker stopped");
    assert.equal(w2.terminated, false, "the busy one did not");
    assert.deepEqual(pool.stats(), { workers: 1, busy: 1, queued: 0 });
    w2.answer(true);
    assert.equal(await b, true);
    timers.fire();
    assert.equal(w2.terminated, true);
    assert.deepEqual(pool.stats(), { workers: 0, busy: 0, queued: 0 });
    const d = pool.verify("argon2id", "d", "pw");
    assert.equal(FakeWorker.made.length, 3, "the next job started a worker again");
    FakeWorker.made[2].answer(true);
    assert.equal(await d, true);
  } finally {
    await pool.close();
  }
  assert.equal(timers.pending.size, 0, "close cancels the idle stops");
});

Deno.test("pool: without idleMs workers stay", async () => {
  FakeWorker.made = [];
  const timers = new ManualTimers();
  const pool = new WorkerPoolPasswordHasher({ size: 1, factory: () => new FakeWorker(), timers });
  const a = pool.verify("argon2id", "a", "pw");
  FakeWorker.made[0].answer(true);
  assert.equal(await a, true);
  assert.equal(timers.pending.size, 0);
  assert.equal(FakeWorker.made[0].terminated, false);
  await pool.close();
});

Deno.test("createPasswordHasher: a Web Worker pool by default here, in-thread for 0 workers", async () => {
  const pooled = createPasswordHasher({ workers: 1 });
  assert.equal(pooled.kind, "workers");
  assert.equal(await pooled.verify("argon2id", REF, "password"), true);
  await pooled.close();
  const byDefault = createPasswordHasher();
  assert.equal(byDefault.kind, "workers");
  assert.equal(
    (byDefault as WorkerPoolPasswordHasher).size,
    Math.min(navigator.hardwareConcurrency, MAX_DEFAULT_WORKERS),
  );
  await byDefault.close();
  const inThread = createPasswordHasher({ workers: 0 });
  assert.equal(inThread.kind, "in-thread");
  assert.equal(await inThread.verify("argon2id", REF, "password"), true);
});

Deno.test("pool: no worker before the first job; never more workers than the size, whatever the load (fast-check)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 6 }),
      // Each step submits a job, or finishes the oldest running job of the i-th busy worker, or
      // crashes it.
      fc.array(
        fc.oneof(
          fc.constant({ op: "submit" as const }),
          fc.record({ op: fc.constantFrom("answer" as const, "crash" as const), i: fc.nat(10) }),
        ),
        { maxLength: 60 },
      ),
      (size, steps) => {
        FakeWorker.made = [];
        const pool = new WorkerPoolPasswordHasher({ size, factory: () => new FakeWorker() });
        assert.deepEqual(pool.stats(), { workers: 0, busy: 0, queued: 0 }, "an idle pool has no worker");
        assert.equal(FakeWorker.made.length, 0);
        let outstanding = 0;
        const busy = new Set<FakeWorker>();
        for (const step of steps) {
          if (step.op === "submit") {
            outstanding++;
            pool.verify("argon2id", "h", "pw").catch(() => {});
          } else {
            const running = FakeWorker.made.filter((w) => !w.terminated && busy.has(w));
            if (running.length === 0) continue;
            const worker = running[step.i % running.length];
            outstanding--;
            busy.delete(worker);
            if (step.op === "answer") worker.answer(true);
            else worker.crash();
          }
          // Whichever worker got a job since is busy.
          for (const w of FakeWorker.made) {
            if (!w.terminated && w.jobs.length > w.answered) busy.add(w);
          }
          const stats = pool.stats();
          assert.ok(stats.workers <= size, `${stats.workers} workers for a pool of ${size}`);
          assert.equal(stats.busy + stats.queued, outstanding);
          assert.equal(stats.busy, Math.min(outstanding, size));
        }
        void pool.close();
      },
    ),
  );
});

Deno.test("defaultWorkerCount: one per core, at least 1, at most MAX_DEFAULT_WORKERS (fast-check)", () => {
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: -4, max: 512 }), fc.double(), fc.constant(undefined)), (cores) => {
      const n = defaultWorkerCount(cores);
      assert.ok(Number.isInteger(n) && n >= 1 && n <= MAX_DEFAULT_WORKERS, `${n} for ${cores}`);
      if (typeof cores === "number" && cores >= 1) {
        assert.equal(n, Math.min(Math.floor(cores), MAX_DEFAULT_WORKERS));
      }
    }),
  );
  assert.equal(MAX_DEFAULT_WORKERS, 4);
});
