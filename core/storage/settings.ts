/**
 * The settings of svc's storage (`SvcConfig.storage`: the embedded PGlite store in a folder, or a
 * Postgres server): its valibot section, its written-out types and its `SVC_DATA_DIR` /
 * `SVC_DATABASE_URL` variables. `core/config/schema.ts` composes it into the whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, nonEmpty, postgresUrl, rule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.storage`: the embedded PGlite store in a folder, or a Postgres server. */
export type StorageConfig = { kind: "embedded"; dataDir: string } | { kind: "postgres"; url: string };

/** `SvcConfigInput.storage`: the storage as a config file gives it. */
export type StorageConfigInput = { kind: "embedded"; dataDir?: string } | { kind: "postgres"; url: string };

/** The `storage` section of the configuration. */
export const storageSettingsSchema = v.optional(
  v.variant("kind", [
    v.strictObject({
      kind: v.literal("embedded"),
      dataDir: v.optional(
        nonEmpty("a folder for the embedded database, such as /var/lib/svc"),
        ".svc-data",
      ),
    }),
    v.strictObject({ kind: v.literal("postgres"), url: postgresUrl() }),
  ], rule("is not a storage kind", '"embedded" (with dataDir) or "postgres" (with url)')),
  { kind: "embedded" },
);

/** The `SVC_*` variables of `storage`. */
export const STORAGE_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_DATA_DIR",
    path: "storage.dataDir",
    kind: "string",
    doc: "folder of the embedded database (PGlite); not used when SVC_DATABASE_URL is set",
    deployment: true,
  },
  {
    name: "SVC_DATABASE_URL",
    path: "storage.url",
    kind: "string",
    doc: "Postgres server URL; when set, the embedded store is not used",
    defaultText: "unset (embedded store)",
    secret: "url",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _storageOutput: Exactly<v.InferOutput<typeof storageSettingsSchema>, StorageConfig> = true;
const _storageInput: Exactly<v.InferInput<typeof storageSettingsSchema>, StorageConfigInput | undefined> =
  true;
