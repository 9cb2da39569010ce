/**
 * svc's runtime adapter for Bun: `bun cli/bun.ts <command>` runs it from the tree, and the
 * compiled binary (`cli/binary.ts`) runs it with the files it carries.
 *
 * @module
 */
import { nodeReadLine } from "./node-read-line.ts";
import { nodeWriteSecretFile } from "./node-secret-file.ts";
import { lookup, resolveTxt } from "node:dns/promises";
import { readFile } from "node:fs/promises";
import process from "node:process";
import { nodeLockFiles } from "./node-lock-files.ts";
import { nodePreparedClusterFiles } from "./node-prepared-cluster.ts";
import { preparedClusterSource } from "./prepared-cluster.ts";
import { nodeImportFiles, nodeProgress } from "./node-import-files.ts";
import { pinnedFetch } from "./pinned-fetch.ts";
import { runCli, type RuntimeAdapter } from "./run.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import { defaultWorkerCount } from "../core/passwords/pool.ts";
import { withNativeArgon2id } from "./native-argon2.ts";

/** The part of Bun's global this adapter uses (Bun's own types are not installed). */
interface BunServer {
  readonly port: number;
  requestIP(req: Request): { address: string } | null;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
const bun = (globalThis as unknown as {
  Bun: {
    serve(options: {
      hostname: string;
      port: number;
      fetch: (req: Request, server: BunServer) => Response | Promise<Response>;
    }): BunServer;
  };
}).Bun;

/** The Bun adapter; `extra` adds what a host carries itself (the binary: PGlite's files, the worker). */
export function bunAdapter(extra: Partial<RuntimeAdapter> = {}): RuntimeAdapter {
  return { ...adapter, ...extra };
}

const adapter: RuntimeAdapter = {
  name: "bun",
  env: () => ({ ...process.env }),
  readTextFile: (path) => readFile(path, "utf8"),
  embeddedStoreFiles: preparedClusterSource(nodePreparedClusterFiles),
  async resolveHost(hostname) {
    return (await lookup(hostname, { all: true })).map((entry) => entry.address);
  },
  connectPinned: pinnedFetch,
  resolveTxt: (name) => resolveTxt(name),
  serve(fetch, { hostname, port }) {
    // Bun's graceful stop() also waits for idle keep-alive connections, which a client may hold
    // for minutes: count the requests in flight, let them finish, then cut what is left.
    let inFlight = 0;
    let drained: (() => void) | undefined;
    const server = bun.serve({
      hostname,
      port,
      fetch: async (req, bunServer) => {
        inFlight++;
        try {
          return await fetch(req, { address: bunServer.requestIP(req)?.address });
        } finally {
          if (--inFlight === 0) drained?.();
        }
      },
    });
    const close = async () => {
      const stopped = server.stop();
      if (inFlight > 0) await new Promise<void>((resolve) => drained = resolve);
      await Promise.all([stopped, server.stop(true)]);
    };
    return Promise.resolve({ port: server.port, close });
  },
  onShutdown(handler) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void handler());
  },
  // argon2id on the @node-rs/argon2 addon, else Bun's crypto.argon2 (at most one per password
  // worker at once); the Web Worker pool keeps the verifiers of imported hashes.
  createPasswordHasher: (workers, idleMs, options) =>
    withNativeArgon2id(
      createPasswordHasher({ workers, idleMs }),
      workers ?? defaultWorkerCount(),
      options?.native,
    ),
  lockFiles: nodeLockFiles,
  importFiles: nodeImportFiles,
  progress: nodeProgress,
  readLine: nodeReadLine,
  writeSecretFile: nodeWriteSecretFile,
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
};

if (import.meta.main) process.exit(await runCli(process.argv.slice(2), adapter));
