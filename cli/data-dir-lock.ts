/**
 * The exclusive lock of the embedded store's data folder: one svc process per folder. Two
 * processes on one PGlite folder each keep their own state and lose the other's writes, so the
 * second refuses to start. The lock is the file `<dataDir>/svc.lock`, created exclusively and
 * holding the holder's pid, host name and start time, and, once `svc start` listens, the URL it
 * serves at (`url`: the CLI's `svc mail`, `svc import` and `svc login` find the running server
 * there); a lock whose holder is gone (a crash, on this host) is stale and taken over.
 *
 * Runtime-agnostic: the file operations come from the runtime adapter ({@link LockFiles}).
 *
 * @module
 */

/** The file operations and process facts the lock needs from the runtime. */
export interface LockFiles {
  /** This process's id. */
  readonly pid: number;
  /** This machine's host name. */
  readonly hostname: string;
  /** Creates the folder and its parents if missing. */
  makeDirectory(path: string): Promise<void>;
  /** Creates `path` holding `text` if no such file exists (atomically); false if it exists. */
  createExclusive(path: string, text: string): Promise<boolean>;
  /** The file's text. */
  readTextFile(path: string): Promise<string>;
  /** Removes the file; a missing file is not an error. */
  removeFile(path: string): Promise<void>;
  /** Replaces the text of an existing file; absent: the lock never names a URL. */
  replaceFile?(path: string, text: string): Promise<void>;
  /** Whether a process with this id runs on this machine. */
  isProcessAlive(pid: number): boolean;
}

/** What the lock file says about its holder. */
export interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
  /** The URL the holding server listens at (with its path base), once it listens. */
  url?: string;
}

/** A held lock. */
export interface DataDirLock {
  /** The lock file. */
  readonly path: string;
  /** The holder this lock replaced because its process was gone, if any. */
  readonly tookOver: LockHolder | null;
  /** Removes the lock file (if it is still this process's). */
  release(): Promise<void>;
  /** Records the URL this process serves at in the lock file (when the runtime can rewrite it). */
  announce(url: string): Promise<void>;
}

/** The data folder is locked by another live process; the message is the one line to print. */
export class DataDirLockedError extends Error {
  constructor(readonly dataDir: string, readonly holder: LockHolder | null, readonly lockPath: string) {
    super(
      holder === null
        ? `storage: the data folder ${dataDir} is locked by ${lockPath}, which names no process; ` +
          `if no svc uses this folder, remove ${lockPath}`
        : `storage: the data folder ${dataDir} is in use by another svc process (pid ${holder.pid} on host ` +
          `${holder.hostname}, since ${holder.startedAt}); stop it or set SVC_DATA_DIR to another folder`,
    );
    this.name = "DataDirLockedError";
  }
}

/** The lock file's name inside the data folder. */
export const LOCK_FILE_NAME = "svc.lock";

/**
 * Takes the lock of `dataDir`, creating the folder if needed. Throws {@link DataDirLockedError}
 * when a live process (or a process on another host, which cannot be checked) holds it.
 */
export async function lockDataDir(files: LockFiles, dataDir: string, now: Date): Promise<DataDirLock> {
  await files.makeDirectory(dataDir);
  const path = `${dataDir.replace(/\/+$/, "")}/${LOCK_FILE_NAME}`;
  const mine: LockHolder = { pid: files.pid, hostname: files.hostname, startedAt: now.toISOString() };
  let text = JSON.stringify(mine);
  let tookOver: LockHolder | null = null;
  // Two rounds: the second follows the removal of a stale lock.
  for (let round = 0; round < 2; round++) {
    if (await files.createExclusive(path, text)) {
      return {
        path,
        tookOver,
        release: () => releaseIfMine(files, path, text),
        async announce(url) {
          if (files.replaceFile === undefined) return;
          const next = JSON.stringify({ ...mine, url });
          await files.replaceFile(path, next);
          text = next;
        },
      };
    }
    const holder = parseHolder(await files.readTextFile(path).catch(() => ""));
    if (holder === null || !isStale(files, holder)) throw new DataDirLockedError(dataDir, holder, path);
    // The holder crashed. (Two processes taking over the same stale lock at the same instant
    // can both succeed; the window is the time between this read and the create below.)
    await files.removeFile(path);
    tookOver = holder;
  }
  throw new DataDirLockedError(dataDir, parseHolder(await files.readTextFile(path).catch(() => "")), path);
}

/** A lock is stale when its holder ran on this host and is gone (or had this process's id: pid reuse). */
function isStale(files: LockFiles, holder: LockHolder): boolean {
  if (holder.hostname !== files.hostname) return false;
  return holder.pid === files.pid || !files.isProcessAlive(holder.pid);
}

/** The holder a lock file's text names, or null. */
export function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text);
    return Number.isInteger(value?.pid) && value.pid > 0 && typeof value.hostname === "string" &&
        typeof value.startedAt === "string"
      ? {
        pid: value.pid,
        hostname: value.hostname,
        startedAt: value.startedAt,
        ...(typeof value.url === "string" && /^https?:\/\//.test(value.url) ? { url: value.url } : {}),
      }
      : null;
  } catch {
    return null;
  }
}

async function releaseIfMine(files: LockFiles, path: string, text: string): Promise<void> {
  const current = await files.readTextFile(path).catch(() => null);
  if (current === text) await files.removeFile(path);
}
