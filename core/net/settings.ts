/**
 * The network settings (`SvcConfig.server`: the listener, the public URL, request limits and CORS;
 * `SvcConfig.outbound`: the outbound guard of every server-side fetch): their valibot sections,
 * their written-out types and their variables. `core/config/schema.ts` composes them into the
 * whole configuration.
 *
 * @module
 */
import * as v from "valibot";
import {
  baseUrl,
  corsOrigins,
  type Exactly,
  host,
  int,
  mountPath,
  port,
  receiverAllowList,
  trustedProxyList,
} from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.server`: the listener, the public URL, request limits and CORS. */
export type ServerConfig = {
  host: string;
  port: number;
  baseUrl: string;
  pathBase: string;
  trustedProxies: string[];
  maxBodyBytes: number;
  maxUploadBytes: number;
  maxJsonDepth: number;
  maxJsonMembers: number;
  corsOrigins: string[];
};

/** `SvcConfigInput.server`: the listener, the public URL, request limits and CORS, as a config file gives it. */
export type ServerConfigInput = {
  host?: string;
  port?: number;
  baseUrl?: string;
  pathBase?: string;
  trustedProxies?: string[];
  maxBodyBytes?: number;
  maxUploadBytes?: number;
  maxJsonDepth?: number;
  maxJsonMembers?: number;
  corsOrigins?: string[];
};

/** The `server` section of the configuration. */
export const serverSettingsSchema = v.optional(
  v.strictObject({
    /** Interface to listen on. */
    host: v.optional(host(), "127.0.0.1"),
    /** Listen port; 0 picks a free one. */
    port: v.optional(port(), 8080),
    /** Public URL of svc (issuer, links); default http://localhost:<port>. */
    baseUrl: v.optional(baseUrl()),
    /** Path every route is mounted under ("" for the root). */
    pathBase: v.optional(mountPath(true), ""),
    /** Proxies whose X-Forwarded-For is believed (IP addresses or CIDR ranges). */
    trustedProxies: v.optional(trustedProxyList(), []),
    /** Largest request body in bytes (413 payload_too_large above it). */
    maxBodyBytes: v.optional(int(1024, 104_857_600, "bytes"), 65_536),
    /** Largest request body of the routes that take files (they declare it themselves). */
    maxUploadBytes: v.optional(int(1024, 1_073_741_824, "bytes"), 10_485_760),
    /** Most levels of nested objects and arrays in a JSON body or import line (400 invalid_request above). */
    maxJsonDepth: v.optional(int(1, 1000, "levels"), 160),
    /** Most members (keys or items) of one JSON object or array in a body or import line. */
    maxJsonMembers: v.optional(int(1, 1_000_000, "members"), 1000),
    /** Origins allowed to call svc from a browser with credentials (CORS); none: CORS is off. */
    corsOrigins: v.optional(corsOrigins(), []),
  }),
  {},
);

/** `SvcConfig.outbound`: the outbound guard of every server-side fetch (SSRF). */
export type OutboundConfig = {
  allowPrivate: string[];
  timeoutMs: number;
  maxResponseKib: number;
};

/** `SvcConfigInput.outbound`: the outbound guard of every server-side fetch (SSRF), as a config file gives it. */
export type OutboundConfigInput = {
  allowPrivate?: string[];
  timeoutMs?: number;
  maxResponseKib?: number;
};

/** The `outbound` section of the configuration. */
export const outboundSettingsSchema = v.optional(
  v.strictObject({
    /**
     * Private or loopback destinations every server-side fetch may reach despite the outbound
     * guard (empty: public only). Development and tests: `127.0.0.1`.
     */
    allowPrivate: v.optional(receiverAllowList(), []),
    /** Time limit of one outbound exchange (resolution, connection, body). */
    timeoutMs: v.optional(int(100, 120_000, "milliseconds"), 10_000),
    /** Largest outbound response body read, in KiB. */
    maxResponseKib: v.optional(int(1, 65_536, "KiB"), 1024),
  }),
  {},
);

/** The `SVC_*` variables of `server`. */
export const SERVER_ENV_SETTINGS: readonly EnvSetting[] = [
  { name: "SVC_HOST", path: "server.host", kind: "string", doc: "interface to listen on", deployment: true },
  {
    name: "SVC_PORT",
    path: "server.port",
    kind: "int",
    doc: "listen port (0 picks a free port)",
    deployment: true,
  },
  {
    name: "SVC_BASE_URL",
    path: "server.baseUrl",
    kind: "string",
    doc: "public URL of svc; outside localhost the relying-party identity must be set too",
    defaultText: "http://localhost:<port>",
    deployment: true,
  },
  {
    name: "SVC_PATH_BASE",
    path: "server.pathBase",
    kind: "string",
    doc: "path every route is mounted under",
  },
  {
    name: "SVC_TRUSTED_PROXIES",
    path: "server.trustedProxies",
    kind: "string-list",
    doc:
      "comma-separated IPs or CIDR ranges of reverse proxies whose X-Forwarded-For gives the client address",
    defaultText: "unset (the peer address is the client)",
  },
  {
    name: "SVC_MAX_BODY_BYTES",
    path: "server.maxBodyBytes",
    kind: "int",
    doc:
      "largest request body in bytes (64 KiB); a larger one answers 413 payload_too_large before it is read",
  },
  {
    name: "SVC_MAX_UPLOAD_BYTES",
    path: "server.maxUploadBytes",
    kind: "int",
    doc: "largest request body of the routes that take files (10 MiB)",
  },
  {
    name: "SVC_MAX_JSON_DEPTH",
    path: "server.maxJsonDepth",
    kind: "int",
    doc:
      "most levels of nested objects and arrays in a JSON request body or import line; deeper answers 400 invalid_request",
  },
  {
    name: "SVC_MAX_JSON_MEMBERS",
    path: "server.maxJsonMembers",
    kind: "int",
    doc:
      "most members (keys or items) of one object or array in a JSON request body or import line; more answers 400 invalid_request",
  },
  {
    name: "SVC_CORS_ORIGINS",
    path: "server.corsOrigins",
    kind: "string-list",
    doc: "comma-separated origins allowed to call svc from a browser, with credentials (CORS)",
    defaultText: "unset (CORS off)",
  },
];

/** The `SVC_*` variables of `outbound`. */
export const OUTBOUND_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_OUTBOUND_ALLOW_PRIVATE",
    path: "outbound.allowPrivate",
    kind: "string-list",
    doc:
      "comma-separated hosts, IPs or CIDR ranges any server-side fetch may reach though private (dev and tests)",
    defaultText: "unset (public only)",
  },
  {
    name: "SVC_OUTBOUND_TIMEOUT_MS",
    path: "outbound.timeoutMs",
    kind: "int",
    doc: "time limit of one server-side fetch: DNS, connection and body",
  },
  {
    name: "SVC_OUTBOUND_MAX_RESPONSE_KIB",
    path: "outbound.maxResponseKib",
    kind: "int",
    doc: "largest response body a server-side fetch reads (cut at the first byte past it)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
// `server.baseUrl` is filled in by the composition (core/config/schema.ts), whose check covers
// `ServerConfig`; the section itself outputs it optional.
const _serverInput: Exactly<v.InferInput<typeof serverSettingsSchema>, ServerConfigInput | undefined> = true;
const _outboundOutput: Exactly<v.InferOutput<typeof outboundSettingsSchema>, OutboundConfig> = true;
const _outboundInput: Exactly<v.InferInput<typeof outboundSettingsSchema>, OutboundConfigInput | undefined> =
  true;
