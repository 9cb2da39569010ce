/**
 * The data folder lock's file operations on Node and Bun (`node:fs`, `node:os`, `node:process`).
 *
 * @module
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import process from "node:process";
import type { LockFiles } from "./data-dir-lock.ts";

/** `LockFiles` over `node:` APIs. */
export const nodeLockFiles: LockFiles = {
  pid: process.pid,
  hostname: hostname(),
  makeDirectory: async (path) => void await mkdir(path, { recursive: true }),
  async createExclusive(path, text) {
    try {
      await writeFile(path, text, { flag: "wx" });
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === "EEXIST") return false;
      throw err;
    }
  },
  readTextFile: (path) => readFile(path, "utf8"),
  removeFile: (path) => rm(path, { force: true }),
  replaceFile: (path, text) => writeFile(path, text),
  isProcessAlive: (pid) => isProcessAlive(pid),
};

/** Signal 0 checks that a process exists: ESRCH means gone, EPERM means alive (another user's). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}
