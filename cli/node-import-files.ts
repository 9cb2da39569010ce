/**
 * `svc import`'s file access on runtimes with `node:fs` (Node, Bun, and Deno's Node compatibility):
 * files as byte streams, directory listings, and a progress line on a terminal's stderr.
 *
 * @module
 */
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import process from "node:process";
import type { ImportFiles } from "./import.ts";

/** Files for `svc import`. */
export const nodeImportFiles: ImportFiles = {
  openFile: (path) => createReadStream(path) as AsyncIterable<Uint8Array>,
  async listDirectory(path) {
    try {
      if (!(await stat(path)).isDirectory()) return null;
    } catch {
      return null;
    }
    return await readdir(path);
  },
};

/** Redraws one progress line on stderr when it is a terminal. */
export function nodeProgress(line: string): void {
  if (!process.stderr.isTTY) return;
  process.stderr.write(`\r\x1b[2K${line}`);
}
