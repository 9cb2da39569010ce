/**
 * `WorkerPoolPasswordHasher`: argon2id (and every verifier) runs in a pool of workers so
 * that the event loop keeps serving other requests during a login burst. Each worker
 * runs one job at a time; jobs beyond the pool's size wait in a FIFO queue. Workers start
 * on first use, a worker that crashes is replaced on the next job, and a worker idle for
 * `idleMs` stops, giving back its memory (argon2id's memory stays with the worker that used it).
 *
 * The pool talks to its workers through `PasswordWorker`, so any runtime can supply them:
 * `webWorkerFactory` makes Web Workers (Deno, Bun, browsers); the Node adapter
 * (`cli/node-password-workers.ts`) makes `worker_threads` workers.
 *
 * @module
 */
import type { Argon2idParams } from "./argon2-params.ts";
import type { PasswordHasher } from "./hasher.ts";
import type { PasswordJob, PasswordJobMessage, PasswordJobReply } from "./jobs.ts";
import { passwordAlgorithm } from "./registry.ts";

/** One worker, seen by the pool. */
export interface PasswordWorker {
  /** Posts a job. */
  post(message: PasswordJobMessage): void;
  /** Installs the pool's listeners: a reply, or a failure of the worker itself. Called once. */
  listen(onReply: (reply: PasswordJobReply) => void, onFailure: (error: unknown) => void): void;
  /** Told when the worker gets or finishes a job (Node uses it to ref/unref the thread). */
  setBusy?(busy: boolean): void;
  /** Stops the worker. */
  terminate(): void;
}

/** Makes a new worker. */
export type PasswordWorkerFactory = () => PasswordWorker;

/** Options of the pool. */
export interface WorkerPoolOptions {
  /** Number of workers (at least 1). */
  readonly size: number;
  /** How workers are made. */
  readonly factory: PasswordWorkerFactory;
  /** A worker idle this long stops (the next job starts one again); 0 or absent: never. */
  readonly idleMs?: number;
  /** Timers for the idle stop (tests pass their own); default: `setTimeout`, unref'd where it can be. */
  readonly timers?: PoolTimers;
}

/** Schedules and cancels the pool's idle stops. */
export interface PoolTimers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const SYSTEM_TIMERS: PoolTimers = {
  set(run, ms) {
    const handle = setTimeout(run, ms);
    // Node and Bun: an idle stop alone does not keep the process alive.
    (handle as { unref?: () => void }).unref?.();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as number),
};

/** Occupancy of the pool. */
export interface WorkerPoolStats {
  /** Workers started and alive. */
  readonly workers: number;
  /** Workers running a job. */
  readonly busy: number;
  /** Jobs waiting for a worker. */
  readonly queued: number;
}

interface Pending {
  readonly message: PasswordJobMessage;
  readonly resolve: (value: string | boolean) => void;
  readonly reject: (error: unknown) => void;
}

interface Slot {
  readonly worker: PasswordWorker;
  job: Pending | null;
  /** The pending idle stop, while the worker has no job. */
  idle: unknown;
}

/**
 * The most workers a pool gets by default. Each busy worker holds argon2id's memory (64 MiB by
 * default) beside its own JavaScript heap, about 85 MiB in all, and keeps it until it has been idle
 * `idleMs`: one per core without a bound would make a login burst's peak grow with the machine
 * (1.4 GiB on 16 cores). Jobs beyond the workers wait in the pool's FIFO queue; the hash cost is
 * the configured one whatever the pool's size. `SVC_PASSWORD_HASH_WORKERS` sets any other size.
 */
export const MAX_DEFAULT_WORKERS = 4;

/**
 * The default pool size: the number of logical cores (`cores`, by default the runtime's report; 1
 * when it reports none), at most {@link MAX_DEFAULT_WORKERS}.
 */
export function defaultWorkerCount(
  cores: number | undefined = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator
    ?.hardwareConcurrency,
): number {
  const n = typeof cores === "number" && cores >= 1 ? Math.floor(cores) : 1;
  return Math.min(n, MAX_DEFAULT_WORKERS);
}

/**
 * Web Workers running `worker.ts` (Deno, Bun and browsers):
 * `new Worker(new URL("./worker.ts", import.meta.url), { type: "module" })`.
 */
export function webWorkerFactory(url: URL = new URL("./worker.ts", import.meta.url)): PasswordWorkerFactory {
  return () => {
    const worker = new Worker(url, { type: "module" });
    return {
      post: (message) => worker.postMessage(message),
      listen(onReply, onFailure) {
        worker.onmessage = (event: MessageEvent<PasswordJobReply>) => onReply(event.data);
        worker.onerror = (event: ErrorEvent) => {
          event.preventDefault();
          onFailure(event.error ?? new Error(event.message || "password worker failed"));
        };
        worker.onmessageerror = () => onFailure(new Error("password worker sent an unreadable message"));
      },
      terminate: () => worker.terminate(),
    };
  };
}

/** Hashes and verifies passwords in a pool of workers. */
export class WorkerPoolPasswordHasher implements PasswordHasher {
  /** Work runs in the pool's workers. */
  readonly kind = "workers" as const;
  /** The most workers the pool runs at once. */
  readonly size: number;
  readonly #factory: PasswordWorkerFactory;
  readonly #idleMs: number;
  readonly #timers: PoolTimers;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  #nextId = 1;
  #closed = false;

  /** A pool of at most `options.size` workers made by `options.factory`, started on demand. */
  constructor(options: WorkerPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) {
      throw new RangeError("A worker pool needs at least one worker.");
    }
    this.size = options.size;
    this.#factory = options.factory;
    this.#idleMs = options.idleMs ?? 0;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
  }

  /** The argon2id PHC string of `password`, computed in a worker. */
  hashArgon2id(password: string, params: Argon2idParams, salt: Uint8Array): Promise<string> {
    return this.#submit({ op: "hash", password, params, salt }) as Promise<string>;
  }

  /** Whether `password` matches `hash` stored under `tag`, computed in a worker. */
  verify(tag: string, hash: string, password: string): Promise<boolean> {
    try {
      passwordAlgorithm(tag); // an unknown tag fails here, with its own error, not in a worker
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#submit({ op: "verify", tag, hash, password }) as Promise<boolean>;
  }

  /** Occupancy, for health reports and tests. */
  stats(): WorkerPoolStats {
    return {
      workers: this.#slots.length,
      busy: this.#slots.filter((s) => s.job).length,
      queued: this.#queue.length,
    };
  }

  /** Terminates the workers and rejects the work still pending. Idempotent. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    const error = new Error("The password hasher is closed.");
    for (const pending of this.#queue.splice(0)) pending.reject(error);
    for (const slot of this.#slots.splice(0)) {
      this.#cancelIdle(slot);
      slot.job?.reject(error);
      slot.worker.terminate();
    }
    return Promise.resolve();
  }

  #submit(job: PasswordJob): Promise<string | boolean> {
    if (this.#closed) return Promise.reject(new Error("The password hasher is closed."));
    return new Promise((resolve, reject) => {
      this.#queue.push({ message: { ...job, id: this.#nextId++ }, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const slot = this.#slots.find((s) => s.job === null) ??
        (this.#slots.length < this.size ? this.#spawn() : undefined);
      if (!slot) return;
      const pending = this.#queue.shift()!;
      this.#cancelIdle(slot);
      slot.job = pending;
      slot.worker.setBusy?.(true);
      try {
        slot.worker.post(pending.message);
      } catch (error) {
        this.#fail(slot, error);
      }
    }
  }

  #spawn(): Slot {
    const slot: Slot = { worker: this.#factory(), job: null, idle: null };
    slot.worker.listen(
      (reply) => this.#settle(slot, reply),
      (error) => this.#fail(slot, error),
    );
    this.#slots.push(slot);
    return slot;
  }

  #settle(slot: Slot, reply: PasswordJobReply): void {
    const pending = slot.job;
    if (!pending || pending.message.id !== reply.id) return;
    slot.job = null;
    slot.worker.setBusy?.(false);
    if (reply.ok) pending.resolve(reply.value);
    else pending.reject(new Error(`password worker: ${reply.message}`));
    this.#pump();
    if (slot.job === null) this.#armIdle(slot);
  }

  /** Stops `slot`'s worker once it has been idle for `idleMs`. */
  #armIdle(slot: Slot): void {
    if (this.#idleMs <= 0 || this.#closed) return;
    this.#cancelIdle(slot);
    slot.idle = this.#timers.set(() => {
      slot.idle = null;
      const index = this.#slots.indexOf(slot);
      if (index < 0 || slot.job !== null) return;
      this.#slots.splice(index, 1);
      slot.worker.terminate();
    }, this.#idleMs);
  }

  #cancelIdle(slot: Slot): void {
    if (slot.idle !== null) {
      this.#timers.clear(slot.idle);
      slot.idle = null;
    }
  }

  /** A worker died: its job fails, the worker is dropped, the next job starts a new one. */
  #fail(slot: Slot, error: unknown): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#slots.splice(index, 1);
    this.#cancelIdle(slot);
    slot.job?.reject(error instanceof Error ? error : new Error(String(error)));
    slot.job = null;
    try {
      slot.worker.terminate();
    } catch {
      // already gone
    }
    this.#pump();
  }
}
