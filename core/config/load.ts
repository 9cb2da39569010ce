/**
 * Loads svc's configuration from `SVC_*` environment variables and an optional JSON config
 * file (env overrides the file, the file overrides the defaults). Pure: the caller reads the
 * environment and the file.
 *
 * @module
 */
import * as v from "valibot";
import { SvcError } from "../errors.ts";
import { type SettingShape, settingShape } from "../settings/describe.ts";
import {
  developmentBaseUrl,
  ENV_SETTINGS,
  type EnvSetting,
  FIELD_PLACEHOLDER,
  isLocalHostname,
  RESERVED_ENV,
  type SvcConfig,
  SvcConfigSchema,
} from "./schema.ts";

/**
 * The configuration is invalid; boot stops. Code `config_invalid`. The message is one line:
 * `config: <setting>: <value> <problem>; set <setting> to <what is expected>`.
 */
export class ConfigError extends SvcError {
  /** The one-line boot error (the setting, its value and what it should be). */
  constructor(message: string) {
    super("config_invalid", message, 500);
  }
}

/** What `loadConfig` reads. */
export interface ConfigSources {
  /** The environment; only `SVC_*` names are read. */
  env: Record<string, string | undefined>;
  /** Text of the JSON config file named by `SVC_CONFIG_FILE`, read by the caller. */
  fileText?: string;
  /** Variables plugins read (their config sections); accepted beside svc's own. */
  pluginEnv?: readonly string[];
}

/** A loaded configuration. */
export interface LoadedConfig {
  /** The validated configuration, every default filled in. */
  config: SvcConfig;
  /**
   * Deployment settings (listen address, storage, relying party) that took their development
   * default because neither the environment nor the file set them, as env var names in
   * `ENV_SETTINGS` order. Format them with `describeDefaults`.
   */
  defaultsUsed: string[];
}

type Json = Record<string, unknown>;

/**
 * Validates the configuration. Throws `ConfigError` with a one-line message naming the first
 * bad setting, its problem and the fix.
 *
 * @example
 * ```ts
 * const { config, defaultsUsed } = loadConfig({ env: { SVC_PORT: "9000" } });
 * config.server.baseUrl; // "http://localhost:9000"
 * ```
 */
export function loadConfig(sources: ConfigSources): LoadedConfig {
  const env = nonEmptyEnv(sources.env);
  rejectUnknownEnv(env, sources.pluginEnv ?? []);
  const fileName = env.SVC_CONFIG_FILE ?? "the config file";

  let file: Json = {};
  if (sources.fileText !== undefined) {
    file = parseFile(sources.fileText, fileName);
    // The file alone must be valid, so that every problem in it is reported against the file.
    const checked = v.safeParse(SvcConfigSchema, file);
    if (!checked.success) throw issueError(checked.issues[0], fileName, new Map());
  }

  const fromEnv = envObject(env);
  const merged = mergeSources(file, fromEnv.object);
  const parsed = v.safeParse(SvcConfigSchema, merged);
  if (!parsed.success) throw issueError(parsed.issues[0], fileName, fromEnv.texts);
  const config = parsed.output;

  const isSet = (path: string) => fromEnv.texts.has(path) || getPath(file, path) !== undefined;
  const label = (setting: EnvSetting) =>
    fromEnv.texts.has(setting.path) || getPath(file, setting.path) === undefined
      ? setting.name
      : `${setting.path} in ${fileName}`;
  crossCheck(config, isSet, (name) => label(setting(name)));

  const defaultsUsed = ENV_SETTINGS.filter((s) =>
    s.deployment && !isSet(s.path) &&
    (s.path !== "storage.dataDir" || config.storage.kind === "embedded")
  ).map((s) => s.name);
  return { config, defaultsUsed };
}

/**
 * The configuration once the server listens on `port` (which differs from the configured one
 * when that was 0): a defaulted base URL and origins follow the real port.
 */
export function withListenPort(loaded: LoadedConfig, port: number): LoadedConfig {
  const { config, defaultsUsed } = loaded;
  if (port === config.server.port) return loaded;
  const baseUrl = defaultsUsed.includes("SVC_BASE_URL") ? developmentBaseUrl(port) : config.server.baseUrl;
  const origins = defaultsUsed.includes("SVC_RP_ORIGINS")
    ? [new URL(baseUrl).origin]
    : config.relyingParty.origins;
  return {
    config: {
      ...config,
      server: { ...config.server, port, baseUrl },
      relyingParty: { ...config.relyingParty, origins },
    },
    defaultsUsed,
  };
}

/** `defaultsUsed` as `NAME=value` pairs, for the boot log. */
export function describeDefaults(loaded: LoadedConfig): string {
  if (loaded.defaultsUsed.length === 0) return "none";
  return loaded.defaultsUsed.map((name) => {
    const value = getPath(loaded.config as unknown as Json, setting(name).path);
    const text = Array.isArray(value) ? value.join(",") : String(value);
    return `${name}=${/[\s,"]/.test(text) ? JSON.stringify(text) : text}`;
  }).join(", ");
}

function setting(name: string): EnvSetting {
  const found = ENV_SETTINGS.find((s) => s.name === name);
  if (!found) throw new Error(`unknown setting ${name}`);
  return found;
}

/** Unset and empty variables are the same: `SVC_X=` means "use the default". */
function nonEmptyEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith("SVC_") && value !== undefined && value !== "") out[name] = value;
  }
  return out;
}

function rejectUnknownEnv(env: Record<string, string>, pluginEnv: readonly string[]): void {
  const known = [...ENV_SETTINGS.map((s) => s.name), ...Object.keys(RESERVED_ENV), ...pluginEnv];
  for (const name of Object.keys(env).sort()) {
    if (known.includes(name)) continue;
    const guess = closest(name, known);
    throw new ConfigError(
      `config: ${name}: is not a setting of svc; remove it or fix its name` +
        (guess ? ` (did you mean ${guess}?)` : " (svc help lists every setting)"),
    );
  }
}

function parseFile(text: string, fileName: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    throw new ConfigError(
      `config: SVC_CONFIG_FILE: ${fileName} is not valid JSON (${reason}); fix the file or unset SVC_CONFIG_FILE`,
    );
  }
  if (!isObject(value)) {
    throw new ConfigError(
      `config: SVC_CONFIG_FILE: ${fileName} is not a JSON object; write the settings as an object such as {"server": {"port": 8080}}`,
    );
  }
  return value;
}

/** The config object the environment describes, and the variables' texts by the path they set. */
function envObject(env: Record<string, string>): { object: Json; texts: Map<string, string> } {
  const object: Json = {};
  const texts = new Map<string, string>();
  for (const s of ENV_SETTINGS) {
    const text = env[s.name];
    if (text === undefined) continue;
    setPath(object, s.path, fromText(s, text));
    texts.set(s.path, text);
  }
  // Storage is one of two shapes: a database URL selects Postgres, a data folder the embedded store.
  if (texts.has("storage.url") && texts.has("storage.dataDir")) {
    throw new ConfigError(
      "config: SVC_DATA_DIR: is set together with SVC_DATABASE_URL; unset SVC_DATA_DIR (the embedded store is not used with a Postgres server) or SVC_DATABASE_URL",
    );
  }
  if (isObject(object.storage)) object.storage.kind = texts.has("storage.url") ? "postgres" : "embedded";
  return { object, texts };
}

function fromText(s: EnvSetting, text: string): unknown {
  const int = (t: string) => /^[+-]?\d+$/.test(t.trim()) ? Number(t.trim()) : t;
  const list = (t: string) => t.split(",").map((x) => x.trim()).filter((x) => x !== "");
  switch (s.kind) {
    case "int":
      return int(text);
    case "string-list":
      return list(text);
    case "int-list":
      return list(text).map(int);
    case "string":
      return text;
  }
}

/** The file, with each section the environment touches overridden field by field. */
function mergeSources(file: Json, fromEnv: Json): Json {
  const merge = (base: unknown, over: unknown): unknown => {
    if (!isObject(base) || !isObject(over)) return over;
    const out: Json = { ...base };
    for (const [k, value] of Object.entries(over)) out[k] = merge(base[k], value);
    return out;
  };
  const out = merge(file, fromEnv) as Json;
  // A storage kind from the environment replaces the file's storage rather than mixing with it.
  if (isObject(fromEnv.storage)) out.storage = fromEnv.storage;
  return out;
}

/** Rules that span fields. */
function crossCheck(
  config: SvcConfig,
  isSet: (path: string) => boolean,
  label: (name: string) => string,
): void {
  const { risk, server, bootstrap, tokens, sessions, cookies } = config;
  if (tokens.signingKeyOverlapSeconds < tokens.accessTokenTtlSeconds) {
    const name = label("SVC_SIGNING_KEY_OVERLAP_SECONDS");
    throw new ConfigError(
      `config: ${name}: ${tokens.signingKeyOverlapSeconds} is below the access token lifetime ${tokens.accessTokenTtlSeconds} (${
        label("SVC_ACCESS_TOKEN_TTL_SECONDS")
      }), so tokens signed before a rotation would fail early; set ${name} to at least ${tokens.accessTokenTtlSeconds}`,
    );
  }
  if (sessions.idleTimeoutSeconds > sessions.absoluteTimeoutSeconds) {
    const name = label("SVC_SESSION_IDLE_TIMEOUT_SECONDS");
    throw new ConfigError(
      `config: ${name}: ${sessions.idleTimeoutSeconds} is above the absolute timeout ${sessions.absoluteTimeoutSeconds} (${
        label("SVC_SESSION_ABSOLUTE_TIMEOUT_SECONDS")
      }); set ${name} to at most ${sessions.absoluteTimeoutSeconds}`,
    );
  }
  if (cookies.sameSite === "None" && cookies.secure === "never") {
    const name = label("SVC_COOKIE_SAME_SITE");
    throw new ConfigError(
      `config: ${name}: None requires Secure cookies (browsers drop SameSite=None without it), but ${
        label("SVC_COOKIE_SECURE")
      } is never; set ${name} to Lax or Strict, or ${label("SVC_COOKIE_SECURE")} to auto or always`,
    );
  }
  if (risk.stepUpAt > risk.blockAt) {
    const name = label("SVC_RISK_STEP_UP_AT");
    throw new ConfigError(
      `config: ${name}: ${risk.stepUpAt} is above the block threshold ${risk.blockAt} (${
        label("SVC_RISK_BLOCK_AT")
      }); set ${name} to at most ${risk.blockAt}`,
    );
  }

  const host = new URL(server.baseUrl).hostname;
  if (!isLocalHostname(host)) {
    const missing = ["SVC_RP_ID", "SVC_RP_NAME", "SVC_RP_ORIGINS"].filter((n) => !isSet(setting(n).path));
    if (missing.length > 0) {
      const expected: Record<string, string> = {
        SVC_RP_ID: `the relying-party id, a domain such as ${host}`,
        SVC_RP_NAME: "the name passkey prompts show",
        SVC_RP_ORIGINS: `the allowed origins, such as ${new URL(server.baseUrl).origin}`,
      };
      throw new ConfigError(
        `config: ${label(missing[0])}: not set while the base URL ${server.baseUrl} (${
          label("SVC_BASE_URL")
        }) is not localhost; set ${missing.map((n) => `${label(n)} to ${expected[n]}`).join(", and ")}` +
          " (the relying-party identity is required outside development)",
      );
    }
  }

  if ((bootstrap.adminEmail === undefined) !== (bootstrap.adminPassword === undefined)) {
    const [given, other] = bootstrap.adminEmail === undefined
      ? ["SVC_BOOTSTRAP_ADMIN_PASSWORD", "SVC_BOOTSTRAP_ADMIN_EMAIL"]
      : ["SVC_BOOTSTRAP_ADMIN_EMAIL", "SVC_BOOTSTRAP_ADMIN_PASSWORD"];
    throw new ConfigError(
      `config: ${label(other)}: not set while ${
        label(given)
      } is; set both to create the first administrator, or neither`,
    );
  }
}

/**
 * The one-line error for a valibot issue. `envTexts` holds the variables' texts by the config
 * path they set: an issue there is reported against the variable, any other against the file.
 */
function issueError(
  issue: v.BaseIssue<unknown>,
  fileName: string,
  envTexts: Map<string, string>,
): ConfigError {
  const path = v.getDotPath(issue) ?? "";
  const keys = path === "" ? [] : path.split(".");
  const owner = ENV_SETTINGS.find((s) => path === s.path || path.startsWith(`${s.path}.`));
  const envText = owner && envTexts.get(owner.path);
  const name = owner && envText !== undefined
    ? owner.name
    : path === ""
    ? fileName
    : `${path} in ${fileName}`;

  if (issue.type === "strict_object") {
    if (issue.expected === "never") {
      const known = knownKeys(keys.slice(0, -1));
      const guess = closest(keys.at(-1) ?? "", known);
      return new ConfigError(
        `config: ${name}: is not a setting of svc; remove it or fix its name (${
          guess ? `did you mean ${guess}?` : `known here: ${known.join(", ")}`
        })`,
      );
    }
    if (issue.input !== undefined) {
      return new ConfigError(
        `config: ${name}: ${
          show(issue.input, owner)
        } is not an object; set ${name} to an object with the fields ${knownKeys(keys).join(", ")}`,
      );
    }
    // A required field is missing: report it with the field's own expectation.
    const leaf = nodesAt(keys)[0];
    if (leaf) issue = v.safeParse(leaf as unknown as v.GenericSchema, undefined).issues?.[0] ?? issue;
  }

  const [problem, fix] = issue.message.includes(FIELD_PLACEHOLDER)
    ? issue.message.split(`; set ${FIELD_PLACEHOLDER} to `)
    : [`is not valid (${issue.message})`, issue.expected ?? "a valid value"];
  // The variable's own text, unless the issue is about one element of a list it set.
  const value = show(envText !== undefined && path === owner?.path ? envText : issue.input, owner);
  return new ConfigError(
    `config: ${name}: ${
      issue.input === undefined ? "not set" : `${value} ${problem}`
    }; set ${name} to ${fix}`,
  );
}

/** A value for an error message, without secrets. */
function show(value: unknown, setting: EnvSetting | undefined): string {
  if (setting?.secret === "hide") return "(hidden value)";
  if (setting?.secret === "url" && typeof value === "string") {
    try {
      const u = new URL(value);
      if (u.password) u.password = "***";
      return JSON.stringify(u.href);
    } catch {
      return "(hidden value)";
    }
  }
  return JSON.stringify(value) ?? String(value);
}

type SchemaNode = {
  type: string;
  wrapped?: SchemaNode;
  entries?: Record<string, SchemaNode>;
  item?: SchemaNode;
  options?: SchemaNode[];
  default?: unknown;
};

/** The schema nodes at a path (several below a variant), optional wrappers removed. */
function nodesAt(path: readonly string[]): SchemaNode[] {
  const unwrap = (n: SchemaNode): SchemaNode[] =>
    n.type === "optional" && n.wrapped ? unwrap(n.wrapped) : n.options ? n.options.flatMap(unwrap) : [n];
  let nodes = unwrap(SvcConfigSchema as unknown as SchemaNode);
  for (const key of path) {
    nodes = nodes.flatMap((n) =>
      n.entries?.[key] ? unwrap(n.entries[key]) : n.item && /^\d+$/.test(key) ? unwrap(n.item) : []
    );
  }
  return nodes;
}

function knownKeys(path: readonly string[]): string[] {
  return [...new Set(nodesAt(path).flatMap((n) => Object.keys(n.entries ?? {})))];
}

/** The schema node of a setting's field (the first, below a variant). */
function leafOf(s: EnvSetting): SchemaNode | undefined {
  const keys = s.path.split(".");
  const parents = nodesAt(keys.slice(0, -1));
  return parents.map((n) => n.entries?.[keys.at(-1)!]).find((n) => n !== undefined);
}

/** The type and bounds of a setting, read from its schema, for the docs and `svc help`. */
export function envSettingShape(s: EnvSetting): SettingShape {
  const leaf = leafOf(s);
  if (leaf === undefined) throw new Error(`${s.name}: no field ${s.path} in the schema`);
  return settingShape(leaf);
}

/** The default of a setting as text, for the docs: `ENV_SETTINGS` with their defaults. */
export function settingDefault(s: EnvSetting): string {
  if (s.defaultText !== undefined) return s.defaultText;
  const value = leafOf(s)?.default;
  if (value === undefined) return "unset";
  return Array.isArray(value) ? value.join(",") : value === "" ? '""' : String(value);
}

/** The candidate closest to `word`, if it is within a typo's distance (a quarter of its length). */
function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 4)) + 1;
  for (const c of candidates) {
    const d = editDistance(word.toUpperCase(), c.toUpperCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

/** Edits (insert, delete, substitute, swap neighbours) from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const d = Array.from(
    { length: a.length + 1 },
    (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i + j),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function getPath(object: Json, path: string): unknown {
  let node: unknown = object;
  for (const key of path.split(".")) node = isObject(node) ? node[key] : undefined;
  return node;
}

function setPath(object: Json, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = object;
  for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Json;
  node[keys.at(-1)!] = value;
}
