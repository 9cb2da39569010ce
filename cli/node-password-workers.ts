/**
 * The Node adapter of the password worker pool: `worker_threads` workers running
 * `cli/node-password-worker.ts`, one per core by default (`os.availableParallelism()`, at most 4).
 * Idle workers are unref'd, so they never keep the process alive on their own.
 *
 * @example
 * ```ts
 * import { DEFAULT_ARGON2ID_PARAMS as params, PasswordService } from "@svc/svc";
 * import { createNodePasswordHasher } from "@svc/svc/server";
 *
 * const passwords = new PasswordService({ hasher: createNodePasswordHasher(), params });
 * ```
 *
 * @module
 */
import os from "node:os";
import process from "node:process";
import { Worker } from "node:worker_threads";
import type { PasswordHasher } from "../core/passwords/hasher.ts";
import type { PasswordJobReply } from "../core/passwords/jobs.ts";
import {
  defaultWorkerCount,
  type PasswordWorkerFactory,
  WorkerPoolPasswordHasher,
} from "../core/passwords/pool.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import { withNativeArgon2id } from "./native-argon2.ts";

/**
 * The worker's entry beside this module: the TypeScript source in the tree, or the bundled
 * `node-password-worker.js` beside the bundle (`npm run build:node` builds both).
 */
const WORKER_ENTRY = import.meta.url.endsWith(".ts")
  ? "./node-password-worker.ts"
  : "./node-password-worker.js";

/** `worker_threads` workers for `WorkerPoolPasswordHasher`. */
export function nodePasswordWorkerFactory(
  url: URL = new URL(WORKER_ENTRY, import.meta.url),
): PasswordWorkerFactory {
  return () => {
    const worker = spawn(url);
    worker.unref();
    return {
      post: (message) => worker.postMessage(message),
      listen(onReply, onFailure) {
        worker.on("message", (reply: PasswordJobReply) => onReply(reply));
        worker.on("error", onFailure);
        worker.on("messageerror", onFailure);
        worker.on("exit", (code) => onFailure(new Error(`password worker exited with code ${code}`)));
      },
      setBusy: (busy) => (busy ? worker.ref() : worker.unref()),
      terminate: () => void worker.terminate(),
    };
  };
}

/**
 * Node runs svc's TypeScript through tsx, whose loader registers itself in the main thread
 * only (on Node 20): a TypeScript worker entry is then started from a small bootstrap that
 * registers tsx's ESM hooks in the worker first. Deno and Bun run `.ts` workers directly.
 */
function spawn(url: URL): Worker {
  const versions = process.versions as Record<string, string | undefined>;
  if (!url.pathname.endsWith(".ts") || versions.deno || versions.bun) return new Worker(url);
  const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${
    JSON.stringify(url.href)
  }); });`;
  return new Worker(bootstrap, { eval: true });
}

/** Number of cores Node reports, at most `MAX_DEFAULT_WORKERS` (see `defaultWorkerCount`). */
export function nodeWorkerCount(): number {
  return defaultWorkerCount(
    typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length || 1,
  );
}

/**
 * The password hasher on Node: a `worker_threads` pool of `workers` threads (one per core,
 * at most four, when undefined), or the in-thread fallback when `workers` is 0. A thread idle for `idleMs`
 * stops (0 or absent: never). Where a native argon2id loads (the `@node-rs/argon2` addon, else
 * `crypto.argon2` of Node 24.7+: `./native-argon2.ts`) and `options.native` is not false,
 * argon2id runs on it, at most `workers` at once (at least one), and the pool keeps the other
 * tags' verifiers.
 */
export function createNodePasswordHasher(
  workers?: number,
  idleMs?: number,
  options?: { readonly native?: boolean },
): PasswordHasher {
  const size = workers ?? nodeWorkerCount();
  const portable = size === 0
    ? createPasswordHasher({ workers: 0 })
    : new WorkerPoolPasswordHasher({ size, factory: nodePasswordWorkerFactory(), idleMs });
  return withNativeArgon2id(portable, size, options?.native);
}
