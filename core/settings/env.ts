/**
 * The shape of one row of the `SVC_*` environment table: each domain's settings module lists its
 * own rows, and `core/config/schema.ts` concatenates them into `ENV_SETTINGS`.
 *
 * @module
 */

/** How an environment variable's text becomes a config value. */
export type EnvKind = "string" | "int" | "string-list" | "int-list";

/** One `SVC_*` environment variable. */
export interface EnvSetting {
  /** The variable's name. */
  readonly name: string;
  /** The config field it sets (dotted path). */
  readonly path: string;
  /** How its text is read. */
  readonly kind: EnvKind;
  /** What it means, for the docs and `svc help`. */
  readonly doc: string;
  /** The default as text, where it is not a plain value of the schema. */
  readonly defaultText?: string;
  /** Never echo the value (`hide`), or echo it with the password removed (`url`). */
  readonly secret?: "hide" | "url";
  /** A deployment setting (listen address, storage, RP identity): reported when its default is used. */
  readonly deployment?: true;
}
