/**
 * The shape of a built page app (`console/generated/<app>.ts`, written by `console/build.ts`):
 * its HTML shell and its hashed assets, embedded as text so the server and a compiled binary
 * carry them without reading files.
 *
 * @module
 */

/** One built asset. */
export interface EmbeddedAsset {
  /** Its `Content-Type`. */
  readonly type: string;
  /** Its content. */
  readonly body: string;
}

/**
 * Placeholders of the shell the server fills in when it serves it (HTML-escaped): the app's
 * base URL path (path base + mount, with a trailing slash; the shell's `<base href>`) and the
 * server's path base (where the API lives).
 */
export const SHELL_PLACEHOLDERS = {
  base: "%SVC_BASE%",
  pathBase: "%SVC_PATH_BASE%",
} as const;

/** A built app. */
export interface EmbeddedApp {
  /** Its name (the directory under `console/`). */
  readonly name: string;
  /** The HTML shell, with the {@link SHELL_PLACEHOLDERS} still in it. */
  readonly shell: string;
  /** The assets by hashed file name (served under `<mount>/assets/`). */
  readonly assets: Readonly<Record<string, EmbeddedAsset>>;
}
