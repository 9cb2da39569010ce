/**
 * Writes a file only its owner may read (mode 0600, its folder 0700 when created), through
 * `node:fs`, which Deno, Node and Bun all carry: the token file of `svc login`.
 *
 * @module
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";

/** Writes `text` to `path` with mode 0600 (also when the file existed with another mode). */
export async function nodeWriteSecretFile(path: string, text: string): Promise<void> {
  const folder = path.slice(0, Math.max(path.lastIndexOf("/"), 0));
  if (folder !== "") await mkdir(folder, { recursive: true, mode: 0o700 });
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
}
