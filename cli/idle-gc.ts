/**
 * Gives a load's garbage back once the server goes quiet: a full garbage collection of the V8
 * heap when no request came for a while and the heap grew since the last one.
 *
 * V8 shrinks its heap on its own (its memory reducer) only when a full collection during the load
 * started it: a load that ended between two such collections leaves the heap at its peak, for
 * good, on a server with no more requests (nothing allocates, so nothing collects). Measured on
 * Deno 2.9.5 (docs/operations/memory.md): 45 s after 8 sign-ins and 2,000 refreshes on Postgres,
 * one server idled at 104 MiB, another, identical, at 163 MiB for as long as it was watched, the
 * difference all in V8's 256 KiB heap pages.
 *
 * No runtime exposes `gc()` without a V8 flag, and V8's flags are frozen once the process runs;
 * the inspector protocol's `HeapProfiler.collectGarbage`, through an in-process `node:inspector`
 * session (no port, no debugger: the session is opened for the one command and closed), is the
 * same full collection. Deno asks for `--allow-sys=inspector` (`-A` has it); without it nothing
 * is collected and nothing is prompted.
 *
 * @module
 */
import { Session } from "node:inspector";
import { getHeapStatistics } from "node:v8";

/** A full garbage collection, resolved when it is done. */
export type CollectGarbage = () => Promise<void>;

/**
 * The inspector's full collection, or null where this process may not open an inspector session
 * (Deno without `--allow-sys=inspector`; it is never prompted for) or the runtime has none.
 */
export function inspectorGarbageCollector(): CollectGarbage | null {
  if (typeof Deno !== "undefined") {
    // "inspector" is a kind of the sys permission that Deno's types do not list yet.
    const descriptor = { name: "sys", kind: "inspector" } as unknown as Deno.SysPermissionDescriptor;
    try {
      if (Deno.permissions.querySync(descriptor).state !== "granted") return null;
    } catch {
      return null; // a Deno without that permission kind: no inspector session either
    }
  }
  if (typeof Session !== "function") return null;
  return () =>
    new Promise<void>((resolve, reject) => {
      const session = new Session();
      // Closed once the answer is in (Deno's session fails a command still pending when it
      // closes), and outside the answer's callback (Node 20's disconnect never returns there).
      const close = () => {
        try {
          session.disconnect();
        } catch { /* already closed */ }
      };
      try {
        session.connect();
        session.post("HeapProfiler.collectGarbage", (error: Error | null) => {
          setTimeout(close, 0);
          if (error) reject(error);
          else resolve();
        });
      } catch (error) {
        close();
        reject(error);
      }
    });
}

/** The options of {@link collectGarbageWhenQuiet}. */
export interface QuietCollectorOptions {
  /** The full collection ({@link inspectorGarbageCollector}). */
  readonly collect: CollectGarbage;
  /** Called after each collection (the Deno adapter trims the C heap: the collection freed buffers). */
  readonly afterCollect?: () => void;
  /** How long without a request makes the server quiet, in ms: the check's period. */
  readonly quietMs: number;
  /** Heap growth since the last collection (or since the start) that is worth one, in bytes. */
  readonly minGrowthBytes: number;
  /** The V8 heap's size now (committed), in bytes. */
  readonly heapSize?: () => number;
  /** The timer functions (injected in tests). */
  readonly setInterval?: (callback: () => void, ms: number) => unknown;
  readonly clearInterval?: (timer: unknown) => void;
  /** Makes a timer keep no process alive (`Deno.unrefTimer` on Deno). */
  readonly unref?: (timer: unknown) => void;
  /** Told when a collection fails (it is not retried before the heap grows again). */
  readonly onError?: (error: unknown) => void;
}

/** What {@link collectGarbageWhenQuiet} returns. */
export interface QuietCollector {
  /** Called for each request the server takes: the period it falls in is not quiet. */
  noteRequest(): void;
  /** Stops the checks. */
  stop(): void;
}

/**
 * Every `quietMs`, when no request came during the period and the heap is `minGrowthBytes` or more
 * above its size after the last collection (0 before the first: the boot's garbage counts),
 * collects once. A server under steady traffic is never quiet and keeps V8's own schedule; one
 * that went quiet after a load is collected once, between `quietMs` and twice that after its last
 * request, and not again until its heap grows.
 */
export function collectGarbageWhenQuiet(options: QuietCollectorOptions): QuietCollector {
  const heapSize = options.heapSize ?? (() => getHeapStatistics().total_heap_size);
  const set = options.setInterval ?? ((callback, ms) => setInterval(callback, ms));
  const clear = options.clearInterval ?? ((timer) => clearInterval(timer as number));
  let requests = 0;
  let baseline = 0;
  let collecting = false;
  const timer = set(() => {
    const busy = requests > 0;
    requests = 0;
    if (busy || collecting || heapSize() < baseline + options.minGrowthBytes) return;
    collecting = true;
    options.collect().then(
      () => {
        options.afterCollect?.();
        baseline = heapSize();
      },
      (error) => {
        baseline = heapSize();
        options.onError?.(error);
      },
    ).finally(() => collecting = false);
  }, options.quietMs);
  options.unref?.(timer);
  return {
    noteRequest: () => void requests++,
    stop: () => clear(timer),
  };
}

/** How long without a request before a grown heap is collected, in a server: V8's own reducer waits 8 s. */
export const SERVER_QUIET_MS = 10_000;
/** The heap growth since the last collection that is worth a full one when a server is quiet. */
export const SERVER_QUIET_GC_MIN_GROWTH_BYTES = 8 * 1024 * 1024;

/**
 * The quiet collector of a serving process ({@link SERVER_QUIET_MS}, {@link SERVER_QUIET_GC_MIN_GROWTH_BYTES}),
 * or null where no inspector session opens. `unref` keeps its timer from holding the process alive.
 */
export function serverQuietCollector(
  options: Pick<QuietCollectorOptions, "unref" | "afterCollect">,
): QuietCollector | null {
  const collect = inspectorGarbageCollector();
  if (collect === null) return null;
  return collectGarbageWhenQuiet({
    collect,
    quietMs: SERVER_QUIET_MS,
    minGrowthBytes: SERVER_QUIET_GC_MIN_GROWTH_BYTES,
    ...options,
  });
}
