/**
 * SCIM `/Bulk` (RFC 7644 §3.7): several writes in one request, advertised in
 * `/ServiceProviderConfig` with `maxOperations` (`SVC_SCIM_BULK_MAX_OPERATIONS`) and
 * `maxPayloadSize` (`SVC_SCIM_BULK_MAX_PAYLOAD_BYTES`).
 *
 * - **One code path.** Each operation (`POST`, `PUT`, `PATCH`, `DELETE` on `/Users`, `/Groups`
 *   or one of theirs) is handed to the very handler its own route uses (`ScimCall`), so it is
 *   checked, confined to the connection's organization, written in its own admin mutation with
 *   its audit entry and events, exactly as the single request would be; a bulk request is not
 *   atomic (RFC 7644 §3.7). Each operation also lands in the provisioning log.
 * - **bulkId.** A `POST` names a `bulkId`; a later (or earlier) operation refers to the
 *   resource it creates as `bulkId:<id>` in its `path` or anywhere in its `data` (a group's
 *   `members[].value`). Operations run in the request's order, except that one waits for the
 *   operations whose bulkIds it refers to. A reference to a bulkId no operation defines, or whose
 *   operation failed, fails with 409 `invalidValue`; operations whose references go round in a
 *   circle are refused (409 `invalidValue`), never run.
 * - **failOnErrors.** Processing stops once that many operations failed; the answer lists the
 *   operations processed so far.
 * - **Limits.** More operations than `maxOperations`: 413 with `scimType: tooMany`; a body over
 *   `maxPayloadSize`: 413. Each operation's `data` is held to the single request's body limit.
 *
 * @module
 */
import * as v from "valibot";
import { errorResponse, scimJson } from "./answers.ts";
import type { ScimHandler } from "./call.ts";
import { invalidSyntax, ScimError } from "./errors.ts";
import type { ScimConnection } from "./store.ts";

/** The schema of a bulk request. */
export const BULK_REQUEST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";
/** The schema of a bulk response. */
export const BULK_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:BulkResponse";

type Method = "POST" | "PUT" | "PATCH" | "DELETE";
type Endpoint = "Users" | "Groups";

/** The writes bulk operations go to: the routes' own handlers. */
export type BulkWrites = Readonly<Record<Endpoint, Readonly<Record<Method, ScimHandler>>>>;

/** What the bulk handler is built with. */
export interface BulkOptions {
  readonly writes: BulkWrites;
  /** The most operations of one request. */
  readonly maxOperations: number;
  /** The largest `data` of one operation (the single request's body limit), in bytes. */
  readonly maxOperationBytes: number;
  /** Records an operation in the provisioning log. */
  log(connection: ScimConnection, entry: BulkLogEntry): Promise<void>;
  /** Reports an unexpected failure. */
  logError(line: string): void;
}

/** One operation as the provisioning log shows it. */
export interface BulkLogEntry {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly scimType: string | null;
  readonly detail: string | null;
  readonly resourceId: string | null;
}

const BulkIdSchema = v.pipe(
  v.string("bulkId must be a string"),
  v.minLength(1, "bulkId must not be empty"),
  v.maxLength(256, "bulkId is longer than 256 characters"),
  v.regex(/^[^\s:]+$/, "bulkId must not contain spaces or ':'"),
);

/** One operation of a bulk request. */
export const BulkOperationSchema = v.object({
  method: v.pipe(
    v.string("method must be a string"),
    v.transform((m) => m.toUpperCase()),
    v.picklist(["POST", "PUT", "PATCH", "DELETE"], "method must be POST, PUT, PATCH or DELETE"),
  ),
  bulkId: v.optional(BulkIdSchema),
  version: v.optional(v.pipe(v.string("version must be a string"), v.maxLength(200, "version is too long"))),
  path: v.pipe(v.string("path must be a string"), v.minLength(1), v.maxLength(600, "path is too long")),
  data: v.optional(v.record(v.string(), v.unknown(), "data must be an object")),
});

/** A bulk request (its operations are checked one by one: a bad one fails alone). */
export const BulkRequestSchema = v.object({
  schemas: v.pipe(
    v.array(v.string("schemas must be a list of strings"), "schemas must be a list"),
    v.check((s) => s.includes(BULK_REQUEST_SCHEMA), `schemas must name ${BULK_REQUEST_SCHEMA}`),
  ),
  failOnErrors: v.optional(
    v.pipe(
      v.number("failOnErrors must be an integer"),
      v.integer("failOnErrors must be an integer"),
      v.minValue(1, "failOnErrors must be at least 1"),
    ),
  ),
  Operations: v.pipe(
    v.array(v.unknown(), "Operations must be a list"),
    v.minLength(1, "Operations must not be empty"),
  ),
});

const PATH = /^\/(Users|Groups)(?:\/([^/?#]+))?$/;
const REF = /^bulkId:([^\s:]+)$/;

/** An operation, checked. */
interface Planned {
  readonly index: number;
  readonly method: Method;
  readonly bulkId: string | undefined;
  readonly version: string | undefined;
  readonly path: string;
  readonly endpoint: Endpoint;
  /** The resource id of the path, or a `bulkId:` reference, or "" (POST). */
  readonly target: string;
  readonly data: Record<string, unknown> | undefined;
  /** The bulkIds the path and data refer to. */
  readonly refs: ReadonlySet<string>;
}

/** An operation's outcome, as the bulk response lists it. */
interface Outcome {
  readonly method: string;
  readonly bulkId?: string;
  readonly location?: string;
  readonly version?: string;
  readonly status: string;
  readonly response?: unknown;
}

/** The `bulkId:` references anywhere in `value`. */
function referencesIn(value: unknown, into: Set<string>): void {
  if (typeof value === "string") {
    const match = REF.exec(value);
    if (match !== null) into.add(match[1]);
  } else if (Array.isArray(value)) {
    for (const item of value) referencesIn(item, into);
  } else if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) referencesIn(item, into);
  }
}

/** `value` with each `bulkId:` reference replaced by the id it resolved to. */
function resolve(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") {
    const match = REF.exec(value);
    return match === null ? value : ids.get(match[1]) ?? value;
  }
  if (Array.isArray(value)) return value.map((item) => resolve(item, ids));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, resolve(item, ids)]));
  }
  return value;
}

/** Checks one operation; a refusal is its outcome. */
function plan(index: number, raw: unknown): Planned | ScimError {
  const parsed = v.safeParse(BulkOperationSchema, raw);
  if (!parsed.success) return invalidSyntax(`Operations[${index}]: ${parsed.issues[0].message}.`);
  const op = parsed.output;
  const match = PATH.exec(op.path);
  if (match === null) {
    return new ScimError(
      400,
      "invalidPath",
      `Operations[${index}]: path must be /Users, /Groups or one of theirs.`,
    );
  }
  const [, endpoint, target = ""] = match;
  if (op.method === "POST") {
    if (target !== "") {
      return new ScimError(400, "invalidPath", `Operations[${index}]: POST goes to /Users or /Groups.`);
    }
    if (op.bulkId === undefined) return invalidSyntax(`Operations[${index}]: a POST names a bulkId.`);
  } else if (target === "") {
    return new ScimError(400, "invalidPath", `Operations[${index}]: ${op.method} goes to one resource.`);
  }
  if (op.method !== "DELETE" && op.data === undefined) {
    return invalidSyntax(`Operations[${index}]: ${op.method} needs data.`);
  }
  const refs = new Set<string>();
  referencesIn(decodeURIComponentSafe(target), refs);
  referencesIn(op.data, refs);
  return {
    index,
    method: op.method,
    bulkId: op.bulkId,
    version: op.version,
    path: op.path,
    endpoint: endpoint as Endpoint,
    target: decodeURIComponentSafe(target),
    data: op.data,
    refs,
  };
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The bulk handler of a connection's `/Bulk`: the request body as read by the routes (which
 * refuse one over maxPayloadSize with 413).
 */
export function bulkHandler(options: BulkOptions) {
  return async (connection: ScimConnection, body: Record<string, unknown>) => {
    const parsed = v.safeParse(BulkRequestSchema, body);
    if (!parsed.success) throw invalidSyntax(`${parsed.issues[0].message}.`);
    const { Operations: rawOps, failOnErrors } = parsed.output;
    if (rawOps.length > options.maxOperations) {
      throw new ScimError(
        413,
        "tooMany",
        `The bulk request has ${rawOps.length} operations; maxOperations is ${options.maxOperations}.`,
      );
    }
    const planned = rawOps.map((raw, i) => plan(i, raw));
    const definedBy = new Map<string, number>();
    for (const op of planned) {
      if (op instanceof ScimError || op.bulkId === undefined) continue;
      if (definedBy.has(op.bulkId)) {
        throw new ScimError(400, "invalidValue", `bulkId ${op.bulkId} is defined by two operations.`);
      }
      definedBy.set(op.bulkId, op.index);
    }

    const outcomes: Outcome[] = [];
    const ids = new Map<string, string>();
    const failedIds = new Set<string>();
    let errors = 0;
    const record = async (
      op: Planned | { index: number; method: string; path: string; bulkId?: string },
      res: Response,
    ) => {
      const status = res.status;
      let response: unknown;
      if (status >= 400) response = await res.json();
      else await res.body?.cancel();
      const location = res.headers.get("Location") ?? undefined;
      const version = res.headers.get("ETag") ?? undefined;
      const resourceId = location?.slice(location.lastIndexOf("/") + 1) ??
        ("target" in op && !op.target.startsWith("bulkId:") ? op.target : undefined);
      if (status >= 400) {
        errors++;
        if (op.bulkId !== undefined) failedIds.add(op.bulkId);
      } else if (
        "endpoint" in op && op.method === "POST" && op.bulkId !== undefined && resourceId !== undefined
      ) {
        ids.set(op.bulkId, resourceId);
      }
      outcomes.push({
        method: op.method,
        ...(op.bulkId === undefined ? {} : { bulkId: op.bulkId }),
        ...(location === undefined ? {} : { location }),
        ...(version === undefined ? {} : { version }),
        status: String(status),
        ...(response === undefined ? {} : { response }),
      });
      const error = response as { scimType?: string; detail?: string } | undefined;
      try {
        await options.log(connection, {
          method: op.method,
          path: `/Bulk ${op.path}`.slice(0, 600),
          status,
          scimType: error?.scimType ?? null,
          detail: error?.detail ?? null,
          resourceId: resourceId ?? null,
        });
      } catch (caught) {
        options.logError(`scim: provisioning log: ${(caught as Error).message.split("\n")[0]}`);
      }
    };
    const refuse = (error: ScimError) => errorResponse(error);
    const stop = () => failOnErrors !== undefined && errors >= failOnErrors;

    // Operations refused as written come first, in their order.
    const pending: Planned[] = [];
    for (const [i, op] of planned.entries()) {
      if (op instanceof ScimError) {
        const rawOp = rawOps[i] as { method?: unknown; path?: unknown; bulkId?: unknown } | null;
        await record({
          index: i,
          method: typeof rawOp?.method === "string" ? rawOp.method.toUpperCase().slice(0, 10) : "",
          path: typeof rawOp?.path === "string" ? rawOp.path.slice(0, 200) : "",
          ...(typeof rawOp?.bulkId === "string" ? { bulkId: rawOp.bulkId.slice(0, 256) } : {}),
        }, refuse(op));
        if (stop()) return answer(outcomes);
      } else pending.push(op);
    }
    // Then the others in order, each once the operations it refers to have run.
    while (pending.length > 0) {
      const at = pending.findIndex((op) =>
        [...op.refs].every((ref) => ids.has(ref) || failedIds.has(ref) || !definedBy.has(ref))
      );
      if (at === -1) {
        // Every operation left waits for another one left: circular references.
        for (const op of pending) {
          await record(
            op,
            refuse(
              new ScimError(409, "invalidValue", `Operations[${op.index}]: circular bulkId references.`),
            ),
          );
          if (stop()) break;
        }
        break;
      }
      const [op] = pending.splice(at, 1);
      const missing = [...op.refs].find((ref) => !ids.has(ref));
      if (missing !== undefined) {
        const why = definedBy.has(missing)
          ? `the operation with bulkId ${missing} failed`
          : `no operation defines bulkId ${missing}`;
        await record(op, refuse(new ScimError(409, "invalidValue", `Operations[${op.index}]: ${why}.`)));
      } else {
        const data = op.data === undefined ? undefined : resolve(op.data, ids) as Record<string, unknown>;
        const id = String(resolve(op.target, ids)).toLowerCase();
        let res: Response;
        if (
          data !== undefined &&
          new TextEncoder().encode(JSON.stringify(data)).length > options.maxOperationBytes
        ) {
          res = refuse(
            new ScimError(413, null, `Operations[${op.index}]: data is larger than the body limit.`),
          );
        } else {
          try {
            res = await options.writes[op.endpoint][op.method]({
              connection,
              id,
              body: () => Promise.resolve(data ?? {}),
              ifMatch: op.version,
            });
          } catch (error) {
            res = errorResponse(error, options.logError);
          }
        }
        await record({ ...op, target: id }, res);
      }
      if (stop()) break;
    }
    return answer(outcomes);
  };
}

function answer(outcomes: readonly Outcome[]): Response {
  return scimJson({ schemas: [BULK_RESPONSE_SCHEMA], Operations: outcomes });
}
