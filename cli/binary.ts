/**
 * The entry of the single binary (`npm run build:binary` → `dist/svc`, Bun's `--compile`): svc on
 * Bun with PGlite's files and the password worker carried inside the executable, so that it
 * boots from any folder without `node_modules`.
 *
 * Bun-only (file imports): excluded from Deno's checks; `test/cli/binary_test.ts` builds and runs it.
 *
 * @module
 */
import process from "node:process";
import pgliteWasmPath from "../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };
import initdbWasmPath from "../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import fsBundlePath from "../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
// Made by the install step (cli/prepare-cluster.ts); `npm run build:binary` makes it first.
import preparedClusterPath from "../node_modules/.cache/svc/cluster.tar.gz" with { type: "file" };
import { nodePreparedClusterFiles } from "./node-prepared-cluster.ts";
import { preparedClusterSource } from "./prepared-cluster.ts";
import { createPasswordHasher } from "../core/passwords/create.ts";
import { defaultWorkerCount, webWorkerFactory } from "../core/passwords/pool.ts";
import { bunAdapter } from "./bun.ts";
import { withNativeArgon2id } from "./native-argon2.ts";
import { runCli } from "./run.ts";

declare const Bun: { file(path: string): Blob };

/**
 * The project root: the executable's own folder in Bun's embedded file system when compiled
 * (`/$bunfs/root/`, where the build's `--root .` puts every entry point), the repository otherwise.
 */
const ROOT = import.meta.url.startsWith("file:///$bunfs/")
  ? new URL("./", import.meta.url)
  : new URL("../", import.meta.url);

/** The password worker, a second entry point of the build (`--compile cli/binary.ts core/passwords/worker.ts`). */
const WORKER_URL = new URL("core/passwords/worker.ts", ROOT);

/** The prepared cluster, read from the executable, for a data folder that has none. */
const preparedCluster = preparedClusterSource(
  { ...nodePreparedClusterFiles, read: async () => new Uint8Array(await Bun.file(preparedClusterPath).arrayBuffer()) },
);

const adapter = bunAdapter({
  embeddedStoreFiles: async (dataDir) => ({
    pgliteWasm: await WebAssembly.compile(await Bun.file(pgliteWasmPath).arrayBuffer()),
    initdbWasm: await WebAssembly.compile(await Bun.file(initdbWasmPath).arrayBuffer()),
    fsBundle: Bun.file(fsBundlePath),
    ...await preparedCluster(dataDir),
  }),
  createPasswordHasher: (workers, idleMs, options) =>
    withNativeArgon2id(
      createPasswordHasher({ workers, idleMs, factory: webWorkerFactory(WORKER_URL) }),
      workers ?? defaultWorkerCount(),
      options?.native,
    ),
});

process.exit(await runCli(process.argv.slice(2), adapter));
