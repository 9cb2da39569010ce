/**
 * The Node runtime adapter of svc's CLI (20 or later), served by @hono/node-server, with
 * password hashing in a `worker_threads` pool (so a Node host never hashes on its event loop).
 * `cli/node.ts` runs it; host files that add plugins import it from `@svc/svc/server`.
 *
 * @example A Node host with a plugin (it runs `svc` and exits with its status, so it is not run as a test)
 * ```ts ignore
 * import process from "node:process";
 * import { nodeRuntime, runCli } from "@svc/svc/server";
 *
 * process.exit(await runCli(process.argv.slice(2), nodeRuntime, { plugins: [] }));
 * ```
 *
 * @module
 */
import { nodeReadLine } from "./node-read-line.ts";
import { nodeWriteSecretFile } from "./node-secret-file.ts";
import { lookup, resolveTxt } from "node:dns/promises";
import { readFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import process from "node:process";
import { serve } from "@hono/node-server";
import { createNodePasswordHasher } from "./node-password-workers.ts";
import { nodeLockFiles } from "./node-lock-files.ts";
import { nodePreparedClusterFiles } from "./node-prepared-cluster.ts";
import { preparedClusterSource } from "./prepared-cluster.ts";
import { nodeImportFiles, nodeProgress } from "./node-import-files.ts";
import { pinnedFetch } from "./pinned-fetch.ts";
import { nodeRs256Signer } from "./node-rs256.ts";
import type { RuntimeAdapter } from "./run.ts";
import { serverQuietCollector } from "./idle-gc.ts";

/** How long in-flight requests get to finish on shutdown before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

/** svc's CLI on Node: environment, files, `@hono/node-server`, signals, DNS, the worker pool and the data-folder lock. */
export const nodeRuntime: RuntimeAdapter = {
  name: "node",
  env: () => ({ ...process.env }),
  readTextFile: (path) => readFile(path, "utf8"),
  embeddedStoreFiles: preparedClusterSource(nodePreparedClusterFiles),
  async resolveHost(hostname) {
    return (await lookup(hostname, { all: true })).map((entry) => entry.address);
  },
  connectPinned: pinnedFetch,
  resolveTxt: (name) => resolveTxt(name),
  createPasswordHasher: (workers, idleMs, options) => createNodePasswordHasher(workers, idleMs, options),
  // RS256 through node:crypto's sign on the thread pool: the same signatures as WebCrypto without
  // jose's and WebCrypto's work around each one (`SVC_RSA_NATIVE_SIGNER=false`: jose as before).
  createJwsSigner: () => nodeRs256Signer(process.versions.openssl),
  serve(fetch, { hostname, port }) {
    return new Promise((resolve, reject) => {
      // A load's garbage given back once the server goes quiet (V8 may not do it on its own).
      const collector = serverQuietCollector({ unref: (timer) => (timer as { unref(): void }).unref() });
      const fail = (error: Error) => {
        collector?.stop();
        reject(error);
      };
      const server = serve({
        fetch: (req: Request, env: { incoming?: { socket?: { remoteAddress?: string } } }) => {
          collector?.noteRequest();
          return fetch(req, { address: env?.incoming?.socket?.remoteAddress });
        },
        hostname,
        port,
      }, (info: AddressInfo) => {
        server.off("error", fail);
        resolve({
          port: info.port,
          close: () => {
            collector?.stop();
            return close(server);
          },
        });
      }) as Server;
      server.once("error", fail);
    });
  },
  onShutdown(handler) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void handler());
  },
  lockFiles: nodeLockFiles,
  importFiles: nodeImportFiles,
  progress: nodeProgress,
  readLine: nodeReadLine,
  writeSecretFile: nodeWriteSecretFile,
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
};

/** Stops accepting, lets in-flight requests finish (idle keep-alive connections close at once). */
function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close((err) => {
      clearTimeout(force);
      if (err) reject(err);
      else resolve();
    });
    server.closeIdleConnections();
  });
}
