/**
 * The Deno runtime adapter of svc's CLI (`cli/deno.ts` runs it; host files that add plugins
 * import it: see `examples/host.ts`).
 *
 * @module
 */
import { nodeReadLine } from "./node-read-line.ts";
import { nodeWriteSecretFile } from "./node-secret-file.ts";
import { lookup } from "node:dns/promises";
import { isProcessAlive } from "./node-lock-files.ts";
import { nodeImportFiles, nodeProgress } from "./node-import-files.ts";
import { preparedClusterSource } from "./prepared-cluster.ts";
import { limitRetainedFreeMemory, loadMallocTrim, trimFreedMemoryEvery } from "./deno-malloc-trim.ts";
import { serverQuietCollector } from "./idle-gc.ts";
import type { RuntimeAdapter } from "./run.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import { defaultWorkerCount, webWorkerFactory } from "../core/passwords/pool.ts";
import { withNativeArgon2id } from "./native-argon2.ts";
import { lazyOpenSslRs256Signer } from "./deno-openssl-rs256.ts";

/** How often a serving process gives freed native memory back (`cli/deno-malloc-trim.ts`). */
const TRIM_INTERVAL_MS = 30_000;

// Before anything allocates much (the embedded store's WebAssembly is compiled when it opens):
// glibc then gives a thread's freed memory back instead of keeping it for the process's life.
limitRetainedFreeMemory();

/**
 * argon2id on the @node-rs/argon2 addon where it loads (Deno has no argon2 of its own): 2.5 times
 * faster than the WebAssembly build; the Web Worker pool (`worker`, its entry module) keeps the
 * other tags' verifiers.
 */
function passwordHasherWith(worker: URL): RuntimeAdapter["createPasswordHasher"] {
  return (workers, idleMs, options) =>
    withNativeArgon2id(
      createPasswordHasher({ workers, idleMs, factory: webWorkerFactory(worker) }),
      workers ?? defaultWorkerCount(),
      options?.native,
    );
}

/** svc's CLI on Deno: environment, files, `Deno.serve`, signals, DNS and the data-folder lock. */
export const denoRuntime: RuntimeAdapter = {
  name: "deno",
  env: () => Deno.env.toObject(),
  readTextFile: (path) => Deno.readTextFile(path),
  embeddedStoreFiles: preparedClusterSource({
    exists: (path) => Deno.stat(path).then(() => true, () => false),
    read: (url) => Deno.readFile(url),
  }),
  serve(fetch, { hostname, port }) {
    // A load's garbage given back once the server goes quiet (V8 may not do it on its own).
    // What a collection freed outside the heap (buffers' memory) goes back to the system too.
    const collector = serverQuietCollector({
      afterCollect: loadMallocTrim() ?? undefined,
      unref: (timer) => Deno.unrefTimer(timer as number),
    });
    const server = Deno.serve(
      { hostname, port, onListen() {} },
      (req, info) => {
        collector?.noteRequest();
        return fetch(req, { address: (info.remoteAddr as Deno.NetAddr).hostname });
      },
    );
    // An idle server's native heap holds freed pages (the boot's, a load's): given back every 30 s.
    const stopTrimming = trimFreedMemoryEvery(TRIM_INTERVAL_MS);
    return Promise.resolve({
      port: server.addr.port,
      close: async () => {
        stopTrimming();
        collector?.stop();
        await server.shutdown();
      },
    });
  },
  onShutdown(handler) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => void handler());
  },
  createPasswordHasher: passwordHasherWith(new URL("../core/passwords/worker.ts", import.meta.url)),
  // RS256 on OpenSSL's libcrypto through FFI where it loads: Deno's WebCrypto RSA (RustCrypto)
  // costs five to six times the CPU per signature, and every token svc mints is one.
  createJwsSigner: (report) => lazyOpenSslRs256Signer({ report }),
  // The system resolver (hosts file included), as the runtime's own connections use it; the
  // outbound guard then connects to the address it checked.
  async resolveHost(hostname) {
    return (await lookup(hostname, { all: true })).map((entry) => entry.address);
  },
  // The pinning connector (`node:http`, `node:https`, `node:stream`) loads with the first outbound
  // request the guard lets through (a webhook delivery, a federation fetch): 0.2 to 0.4 MiB of heap.
  connectPinned: async (url, addresses, init) =>
    (await import("./pinned-fetch.ts")).pinnedFetch(url, addresses, init),
  resolveTxt: (name) => Deno.resolveDns(name, "TXT"),
  lockFiles: {
    // Read when the lock is taken, not when this module loads: a Node host imports this module
    // beside the Node adapter (`@svc/svc/server`), where `Deno` does not exist.
    get pid() {
      return Deno.pid;
    },
    get hostname() {
      return Deno.hostname();
    },
    makeDirectory: (path) => Deno.mkdir(path, { recursive: true }),
    async createExclusive(path, text) {
      try {
        await Deno.writeTextFile(path, text, { createNew: true });
        return true;
      } catch (err) {
        if (err instanceof Deno.errors.AlreadyExists) return false;
        throw err;
      }
    },
    readTextFile: (path) => Deno.readTextFile(path),
    removeFile: (path) =>
      Deno.remove(path).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }),
    replaceFile: (path, text) => Deno.writeTextFile(path, text),
    // Deno.kill takes no signal 0; node:process's kill does, on Deno as on Node.
    isProcessAlive,
  },
  importFiles: nodeImportFiles,
  progress: nodeProgress,
  readLine: nodeReadLine,
  writeSecretFile: nodeWriteSecretFile,
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
};

/**
 * {@link denoRuntime} with the password worker's entry module at `passwordWorker`: the bundle's
 * (`cli/deno.ts` in `dist/deno/`, `cli/build-deno.ts`), which is not where the source's is. The
 * prepared cluster needs no such name: `PREPARED_CLUSTER_URL` resolves from the bundle too.
 */
export function denoRuntimeWith(passwordWorker: URL): RuntimeAdapter {
  return { ...denoRuntime, createPasswordHasher: passwordHasherWith(passwordWorker) };
}
