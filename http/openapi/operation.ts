/**
 * How a route describes itself for the OpenAPI document: its method and path, the valibot
 * schemas that validate its input (the same constants the handler passes to `parseBody`), the
 * schemas of its answers, who may call it and which `svc:` permissions fence it. Route modules
 * attach these to their installer with {@link documented}; `createApp` gathers them.
 *
 * @module
 */
import * as v from "valibot";
import type { AppDeps, RouteInstaller } from "../app-deps.ts";

/** HTTP methods svc routes use. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Who may call an operation: `public` (anyone), `user` (a bearer access token, API key,
 * service-account secret or the session cookies), `optional` (either).
 */
export type OperationAuth = "public" | "user" | "optional";

/** One answer of an operation. */
export interface ResponseDoc {
  /** What the answer means (the OpenAPI response description). */
  readonly description: string;
  /** The JSON body; absent: no body (204) or a body the description explains. */
  readonly body?: v.GenericSchema;
  /** Media type of a non-JSON body (for example `text/html`). */
  readonly mediaType?: string;
  /** Response headers worth naming: header name → description. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The schema of a query string: an object schema whose entries are its parameters. */
export type QuerySchema =
  | v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>
  | v.StrictObjectSchema<v.ObjectEntries, v.ErrorMessage<v.StrictObjectIssue> | undefined>
  | v.LooseObjectSchema<v.ObjectEntries, v.ErrorMessage<v.LooseObjectIssue> | undefined>;

/** One operation (method and path) of the API. */
export interface OperationDoc {
  /** The HTTP method the route is registered with. */
  readonly method: HttpMethod;
  /** The path as registered on the app (Hono syntax, `:name` for parameters), below the path base. */
  readonly path: string;
  /** One line saying what the operation does (the OpenAPI summary). */
  readonly summary: string;
  /** A longer explanation, when the summary is not enough; absent: none. */
  readonly description?: string;
  /** Groups in the reference (for example `Admin: users`). */
  readonly tags: readonly string[];
  /** Default `user`. */
  readonly auth?: OperationAuth;
  /**
   * The `svc:` permissions any of which lets a caller in (listed as `x-svc-permissions`); an
   * empty list declares a route fenced by something else (for example, only the target user).
   */
  readonly permissions?: readonly string[];
  /** The JSON request body schema (the one the handler validates with). */
  readonly body?: v.GenericSchema;
  /** Whether a body must be sent (default: true when `body` is set). */
  readonly bodyRequired?: boolean;
  /** Query parameters: an object schema (plain, strict or loose), one parameter per entry. */
  readonly query?: QuerySchema;
  /** Descriptions of path parameters (by name); every `:name` of the path is documented. */
  readonly params?: Readonly<Record<string, string>>;
  /** Answers by status code. */
  readonly responses: Readonly<Record<number, ResponseDoc>>;
}

/**
 * The operations of an installer: a list, or a function of the app's dependencies for routes
 * whose paths come from the configuration (such as the webhook mount path).
 */
export type OperationList = readonly OperationDoc[] | ((deps: AppDeps) => readonly OperationDoc[]);

/** A route installer carrying the operations it registers. */
export type DocumentedInstaller = RouteInstaller & { readonly operations: OperationList };

/**
 * Attaches operation docs to a route installer.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { documented } from "./operation.ts";
 *
 * export const pingRoutes = documented((app) => app.get("/ping", (c) => c.json({ ok: true })), [
 *   { method: "GET", path: "/ping", summary: "Ping", tags: ["Health"], auth: "public",
 *     responses: { 200: { description: "Alive", body: v.object({ ok: v.boolean() }) } } },
 * ]);
 * ```
 */
export function documented(
  install: RouteInstaller,
  operations: OperationList,
): DocumentedInstaller {
  const wrapped = ((app, deps) => install(app, deps)) as RouteInstaller & {
    operations: OperationList;
  };
  wrapped.operations = operations;
  return wrapped;
}

/**
 * The operations an installer documents (none for an undocumented one). `deps` resolves
 * operations given as a function of the app's dependencies (without it, those count as none).
 */
export function operationsOf(install: RouteInstaller, deps?: AppDeps): readonly OperationDoc[] {
  const operations = (install as Partial<DocumentedInstaller>).operations;
  if (operations === undefined) return [];
  if (typeof operations === "function") return deps === undefined ? [] : operations(deps);
  return operations;
}

/** An ISO 8601 time in an answer (`Date.prototype.toISOString()`). */
export const IsoTimeSchema: v.SchemaWithPipe<
  readonly [v.StringSchema<undefined>, v.DescriptionAction<string, string>]
> = v.pipe(v.string(), v.description("ISO 8601 time"));

/** The body of every error answer (`http/errors.ts`). */
export const ErrorBodySchema = v.object({
  error: v.object({
    code: v.pipe(v.string(), v.description("Stable snake_case code clients branch on.")),
    message: v.pipe(v.string(), v.description("For humans; never carries secrets.")),
    requestId: v.string(),
    details: v.optional(v.record(v.string(), v.unknown())),
  }),
});

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid request (`invalid_request` names the field, `invalid_json`)",
  401: "Not authenticated, or bad credentials",
  403: "Not allowed (`forbidden`, `csrf_failed`)",
  404: "Not found, or not visible to the caller",
  409: "Conflict with existing state (a stable code names it)",
  412: "The `If-Match` precondition failed (`precondition_failed`)",
  413: "The body is larger than the limit (`payload_too_large`)",
  428: "An `If-Match` header is required (`precondition_required`)",
  429: "Too many requests (`Retry-After`)",
};

/** Error answers in the one error shape, by status. */
export function errorResponses(...statuses: number[]): Record<number, ResponseDoc> {
  return Object.fromEntries(
    statuses.map((status) => [status, {
      description: ERROR_DESCRIPTIONS[status] ?? "Error",
      body: ErrorBodySchema,
    }]),
  );
}
