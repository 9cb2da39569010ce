/**
 * One svc process per embedded data folder: a second start on the same folder refuses with one
 * line naming the folder and the holder; a lock left by a crash is taken over.
 */
import assert from "node:assert/strict";
import { DataDirLockedError, lockDataDir, type LockFiles } from "../../cli/data-dir-lock.ts";
import { childEnv, RUNTIMES, serverCommand, startServer } from "../support/server.ts";

/** In-memory files and a set of live pids, for the lock's rules. */
function memoryFiles(
  pid: number,
  hostname: string,
  files = new Map<string, string>(),
  alive = new Set<number>(),
) {
  const lockFiles: LockFiles = {
    pid,
    hostname,
    makeDirectory: () => Promise.resolve(),
    createExclusive(path, text) {
      if (files.has(path)) return Promise.resolve(false);
      files.set(path, text);
      return Promise.resolve(true);
    },
    readTextFile(path) {
      const text = files.get(path);
      return text === undefined ? Promise.reject(new Error("ENOENT")) : Promise.resolve(text);
    },
    removeFile(path) {
      files.delete(path);
      return Promise.resolve();
    },
    isProcessAlive: (p) => alive.has(p),
  };
  return { lockFiles, files, alive };
}

const NOW = new Date(Date.UTC(2026, 0, 1));

Deno.test("lock: a live holder on this host keeps the folder; release frees it", async () => {
  const first = memoryFiles(100, "box");
  first.alive.add(100);
  const lock = await lockDataDir(first.lockFiles, "/data", NOW);
  assert.equal(lock.path, "/data/svc.lock");
  assert.equal(lock.tookOver, null);
  assert.deepEqual(JSON.parse(first.files.get("/data/svc.lock")!), {
    pid: 100,
    hostname: "box",
    startedAt: "2026-01-01T00:00:00.000Z",
  });

  const second = memoryFiles(200, "box", first.files, first.alive);
  const refused = await lockDataDir(second.lockFiles, "/data", NOW).catch((e) => e);
  assert.ok(refused instanceof DataDirLockedError);
  assert.equal(
    refused.message,
    "storage: the data folder /data is in use by another svc process (pid 100 on host box, since " +
      "2026-01-01T00:00:00.000Z); stop it or set SVC_DATA_DIR to another folder",
  );
  // The refused process does not remove the holder's lock.
  assert.ok(first.files.has("/data/svc.lock"));

  // Release by another process's handle would not remove it; the holder's does.
  await lock.release();
  assert.equal(first.files.size, 0);
  assert.equal((await lockDataDir(second.lockFiles, "/data", NOW)).tookOver, null);
});

Deno.test("lock: a holder that is gone is taken over; one on another host or unreadable is not", async () => {
  const crashed = memoryFiles(300, "box");
  await lockDataDir(crashed.lockFiles, "/data", NOW);
  const next = memoryFiles(301, "box", crashed.files, crashed.alive);
  const lock = await lockDataDir(next.lockFiles, "/data", NOW);
  assert.deepEqual(lock.tookOver, { pid: 300, hostname: "box", startedAt: NOW.toISOString() });
  assert.equal(JSON.parse(crashed.files.get("/data/svc.lock")!).pid, 301);

  // A restarted container often runs as the same pid as its crashed predecessor: that lock is stale too.
  const samePid = memoryFiles(301, "box", crashed.files, new Set([301]));
  assert.equal((await lockDataDir(samePid.lockFiles, "/data", NOW)).tookOver?.pid, 301);

  const elsewhere = memoryFiles(5, "other-host", crashed.files);
  await assert.rejects(lockDataDir(elsewhere.lockFiles, "/data", NOW), /pid 301 on host box/);

  const garbled = memoryFiles(6, "box", new Map([["/data/svc.lock", "not json"]]));
  await assert.rejects(
    lockDataDir(garbled.lockFiles, "/data", NOW),
    /locked by \/data\/svc\.lock, which names no process/,
  );
});

/** Runs `svc start` to its exit (it must exit by itself). */
async function startToExit(runtime: string, dataDir: string): Promise<{ code: number; stderr: string }> {
  const { cmd, args, cwd } = await serverCommand(runtime);
  const out = await new Deno.Command(cmd, {
    args: [...args, "start"],
    cwd,
    env: childEnv({ SVC_DATA_DIR: dataDir, SVC_PORT: "0" }),
    clearEnv: true,
    stdin: "null",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

for (const runtime of Object.keys(RUNTIMES)) {
  Deno.test(`lock (${runtime}): a second server on the same data folder refuses; after a crash the next one takes over`, async () => {
    const dir = await Deno.makeTempDir({ prefix: `svc-lock-${runtime}-` });
    const dataDir = `${dir}/data`;
    try {
      const first = await startServer(runtime, { SVC_PORT: "0", SVC_DATA_DIR: dataDir });
      let firstKilled = false;
      try {
        // The holder is the server process itself (Node runs the bundle directly, no tsx parent).
        const holder = JSON.parse(await Deno.readTextFile(`${dataDir}/svc.lock`));
        assert.equal(holder.pid, first.pid);
        assert.equal(holder.hostname, Deno.hostname());
        const second = await startToExit(runtime, dataDir);
        assert.equal(second.code, 1);
        assert.equal(
          second.stderr.trim(),
          `storage: the data folder ${dataDir} is in use by another svc process (pid ${holder.pid} on host ${holder.hostname}, since ${holder.startedAt}); stop it or set SVC_DATA_DIR to another folder`,
        );
        // The first server is untouched.
        assert.equal((await fetch(`${first.url}/readyz`)).status, 200);

        // A crash: the holder dies without cleaning up, the lock stays behind.
        Deno.kill(holder.pid, "SIGKILL");
        await first.kill();
        firstKilled = true;
        assert.equal(JSON.parse(await Deno.readTextFile(`${dataDir}/svc.lock`)).pid, holder.pid);
        const third = await startServer(runtime, { SVC_PORT: "0", SVC_DATA_DIR: dataDir });
        try {
          assert.equal((await fetch(`${third.url}/readyz`)).status, 200);
          assert.notEqual(JSON.parse(await Deno.readTextFile(`${dataDir}/svc.lock`)).pid, holder.pid);
        } finally {
          assert.equal((await third.stop()).code, 0, await third.stderr);
        }
        assert.match(
          await third.stdout,
          new RegExp(
            `^storage: took over the lock of ${dataDir} from pid ${holder.pid} on host .+, which is gone$`,
            "m",
          ),
        );
        // A clean stop releases the lock.
        await assert.rejects(Deno.stat(`${dataDir}/svc.lock`), Deno.errors.NotFound);
      } finally {
        if (!firstKilled) await first.kill();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
