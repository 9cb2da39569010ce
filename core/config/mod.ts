/**
 * svc's configuration: the valibot schema, the `SVC_*` environment variables and the loader.
 *
 * @module
 */
export {
  developmentBaseUrl,
  ENV_SETTINGS,
  type EnvKind,
  type EnvSetting,
  FILE_ONLY_SETTINGS,
  isLocalHostname,
  RESERVED_ENV,
  type SvcConfig,
  type SvcConfigInput,
  SvcConfigSchema,
} from "./schema.ts";
export {
  ConfigError,
  type ConfigSources,
  describeDefaults,
  envSettingShape,
  loadConfig,
  type LoadedConfig,
  settingDefault,
  withListenPort,
} from "./load.ts";
export { type SettingRow, type SettingShape, settingShape, shapeBounds } from "../settings/describe.ts";
