/**
 * The prepared cluster of the embedded store: made once at install (`npm ci` runs
 * `cli/prepare-cluster.ts`) into {@link PREPARED_CLUSTER_URL}, and loaded into a fresh data folder
 * instead of running initdb there, so that a first start is ready in seconds. Without the file (or
 * when the folder already holds a cluster), the store starts as before.
 *
 * @module
 */
import type { EmbeddedStoreFilesSource } from "../storage/open.ts";

/**
 * Where the install step writes the prepared cluster (a gzip tarball), inside the tree's
 * `node_modules`: found from this module in the tree (`cli/`), or from the Node bundle that
 * carries it (`dist/node/cli/node.js`, `npm run build:node`), or from the Deno bundle's (`dist/deno/cli/`,
 * `cli/build-deno.ts`): both bundles put every chunk in the entry's folder.
 */
export const PREPARED_CLUSTER_URL: URL = new URL(
  `${import.meta.url.endsWith(".ts") ? "../" : "../../../"}node_modules/.cache/svc/cluster.tar.gz`,
  import.meta.url,
);

/** The file operations the source needs from the runtime. */
export interface PreparedClusterFiles {
  /** Whether a file exists. */
  exists(path: string): Promise<boolean>;
  /** A file's bytes; rejects when it is missing. */
  read(url: URL): Promise<Uint8Array<ArrayBuffer>>;
}

/**
 * An {@link EmbeddedStoreFilesSource} that offers the prepared cluster at `url` to a data folder
 * without a cluster (no `PG_VERSION` in it), and nothing otherwise.
 */
export function preparedClusterSource(
  files: PreparedClusterFiles,
  url: URL = PREPARED_CLUSTER_URL,
): EmbeddedStoreFilesSource {
  return async (dataDir) => {
    if (dataDir !== undefined && await files.exists(`${dataDir}/PG_VERSION`)) return {};
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = await files.read(url);
    } catch {
      return {};
    }
    return { preparedCluster: new Blob([bytes], { type: "application/gzip" }) };
  };
}
