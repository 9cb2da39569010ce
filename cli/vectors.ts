/**
 * `svc vectors [FILE...]`: runs golden-vector files against this engine. Runtime
 * agnostic: file access and output come through `io`.
 *
 * @module
 */
import { runVectorFile } from "../core/authz/vectors.ts";

function fromUrl(url: URL): string {
  return decodeURIComponent(url.pathname);
}

/** The four vector files of the repository, used when no path is given. */
export const DEFAULT_VECTOR_FILES: readonly string[] = Object.freeze([
  fromUrl(new URL("../vectors/pattern.json", import.meta.url)),
  fromUrl(new URL("../vectors/condition.json", import.meta.url)),
  fromUrl(new URL("../vectors/evaluate.json", import.meta.url)),
  fromUrl(new URL("../vectors/visibility.json", import.meta.url)),
]);

/** What {@link vectorsCommand} needs from the runtime. */
export interface VectorsIo {
  /** Reads a whole file as UTF-8 text. */
  readTextFile(path: string): Promise<string>;
  /** Prints one line. */
  print(line: string): void;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs every case of every file, prints each failure with its file and case name,
 * ends with `N passed, N failed` and returns the exit code: 1 when any case failed
 * or a file could not be read or parsed (each such file counts as one failure), else 0.
 */
export async function vectorsCommand(paths: string[], io: VectorsIo): Promise<number> {
  const files = paths.length > 0 ? paths : DEFAULT_VECTOR_FILES;
  let passed = 0, failed = 0;
  for (const file of files) {
    let json: unknown;
    try {
      json = JSON.parse(await io.readTextFile(file));
    } catch (error) {
      failed++;
      io.print(`FAIL ${file}: cannot read the file: ${message(error)}`);
      continue;
    }
    let results;
    try {
      results = runVectorFile(json);
    } catch (error) {
      failed++;
      io.print(`FAIL ${file}: invalid vector file: ${message(error)}`);
      continue;
    }
    for (const result of results) {
      if (result.ok) {
        passed++;
      } else {
        failed++;
        io.print(`FAIL ${file} :: ${result.name}: ${result.message ?? "failed"}`);
      }
    }
  }
  io.print(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}
