/**
 * The prepared cluster's file operations on Node and Bun (`node:fs`).
 *
 * @module
 */
import { access, readFile } from "node:fs/promises";
import type { PreparedClusterFiles } from "./prepared-cluster.ts";

/** {@link PreparedClusterFiles} over `node:fs`. */
export const nodePreparedClusterFiles: PreparedClusterFiles = {
  exists: (path) => access(path).then(() => true, () => false),
  read: async (url) => new Uint8Array(await readFile(url)),
};
