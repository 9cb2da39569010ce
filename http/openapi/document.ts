/**
 * The OpenAPI 3.1 document of svc, generated from the operations route modules document
 * (`operation.ts`) and the valibot schemas they validate with: request and response bodies are
 * converted by `@valibot/to-json-schema` (JSON Schema 2020-12, the dialect of OpenAPI 3.1).
 * A schema piped with `v.title("Name")` becomes the component `#/components/schemas/Name`,
 * referenced wherever it is used.
 *
 * @module
 */
import { type JsonSchema, toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { OperationAuth, OperationDoc, ResponseDoc } from "./operation.ts";

/** What the document describes besides the operations. */
export interface DocumentInfo {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
  /** The public URL svc is served at, path base included (`config.server.baseUrl` + path base). */
  readonly serverUrl: string;
}

/** An OpenAPI 3.1 document (the parts svc writes). */
export interface OpenApiDocument {
  readonly openapi: "3.1.0";
  readonly info: { title: string; version: string; description?: string };
  readonly servers: { url: string }[];
  readonly paths: Record<string, Record<string, unknown>>;
  readonly components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, unknown>;
  };
  readonly tags: { name: string }[];
}

/** `/users/:id` → `/users/{id}`. */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, "{$1}");
}

/** The names of the path parameters of a Hono path, in order. */
export function pathParameters(honoPath: string): string[] {
  return [...honoPath.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}

const SECURITY: Record<OperationAuth, Record<string, string[]>[] | undefined> = {
  public: [],
  user: [{ bearer: [] }, { serviceAccount: [] }, { cookie: [] }],
  optional: [{}, { bearer: [] }, { serviceAccount: [] }, { cookie: [] }],
};

function titleOf(schema: v.GenericSchema): string | undefined {
  const pipe = (schema as { pipe?: unknown }).pipe;
  if (!Array.isArray(pipe)) return undefined;
  for (const item of pipe) {
    if (item?.kind === "metadata" && item?.type === "title" && typeof item.title === "string") {
      return item.title;
    }
  }
  return undefined;
}

/** Converts valibot schemas, collecting titled ones as components. */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};
  readonly #byName = new Map<string, v.GenericSchema>();

  /** The JSON Schema of `schema`: a `$ref` when it is titled. */
  convert(schema: v.GenericSchema): JsonSchema {
    const name = titleOf(schema);
    if (name === undefined) return this.#raw(schema, null);
    this.#component(name, schema);
    return { $ref: `#/components/schemas/${name}` };
  }

  #component(name: string, schema: v.GenericSchema): void {
    const known = this.#byName.get(name);
    if (known !== undefined) {
      if (known !== schema) {
        throw new Error(`openapi: two different schemas are titled ${JSON.stringify(name)}`);
      }
      return;
    }
    this.#byName.set(name, schema);
    this.components[name] = this.#raw(schema, schema);
  }

  #raw(schema: v.GenericSchema, root: v.GenericSchema | null): JsonSchema {
    const json = toJsonSchema(schema, {
      target: "draft-2020-12",
      typeMode: "input",
      errorMode: "ignore",
      overrideSchema: (context) => {
        const nested = context.valibotSchema as v.GenericSchema;
        if (nested === root) return undefined;
        const name = titleOf(nested);
        if (name === undefined) return undefined;
        this.#component(name, nested);
        return { $ref: `#/components/schemas/${name}` };
      },
    }) as Record<string, unknown>;
    delete json.$schema;
    return json as JsonSchema;
  }
}

function responseObject(converter: SchemaConverter, response: ResponseDoc): Record<string, unknown> {
  const out: Record<string, unknown> = { description: response.description };
  if (response.headers) {
    out.headers = Object.fromEntries(
      Object.entries(response.headers).map(([name, description]) => [name, {
        description,
        schema: { type: "string" },
      }]),
    );
  }
  if (response.body) {
    out.content = {
      [response.mediaType ?? "application/json"]: { schema: converter.convert(response.body) },
    };
  } else if (response.mediaType) {
    out.content = { [response.mediaType]: { schema: { type: "string" } } };
  }
  return out;
}

function operationObject(converter: SchemaConverter, op: OperationDoc): Record<string, unknown> {
  const parameters: Record<string, unknown>[] = pathParameters(op.path).map((name) => ({
    name,
    in: "path",
    required: true,
    description: op.params?.[name],
    schema: { type: "string" },
  }));
  if (op.query) {
    const query = converter.convert(op.query) as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      const { description, ...rest } = schema as Record<string, unknown>;
      parameters.push({
        name,
        in: "query",
        required: (query.required ?? []).includes(name),
        ...(typeof description === "string" ? { description } : {}),
        schema: rest,
      });
    }
  }
  const auth = op.auth ?? "user";
  const out: Record<string, unknown> = {
    operationId: operationId(op),
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [...op.tags],
    ...(parameters.length > 0 ? { parameters } : {}),
    security: SECURITY[auth],
    responses: Object.fromEntries(
      Object.entries(op.responses).map(([status, response]) => [status, responseObject(converter, response)]),
    ),
  };
  if (op.body) {
    out.requestBody = {
      required: op.bodyRequired ?? true,
      content: { "application/json": { schema: converter.convert(op.body) } },
    };
  }
  // Declared even when empty: an admin route open to any signed-in caller says so (`[]`).
  if (op.permissions !== undefined) out["x-svc-permissions"] = [...op.permissions];
  return out;
}

/** A stable operation id: method and path, for example `post_svc-admin_users_id_suspend`. */
export function operationId(op: Pick<OperationDoc, "method" | "path">): string {
  const path = op.path.replace(/[:{}]/g, "").split("/").filter(Boolean).join("_").replace(
    /[^A-Za-z0-9_-]/g,
    "_",
  );
  return `${op.method.toLowerCase()}_${path || "root"}`;
}

/**
 * Builds the document. Operations sharing a path become one path item; the same method and
 * path documented twice is an error (a programming mistake caught by the tests).
 */
export function buildOpenApiDocument(
  info: DocumentInfo,
  operations: readonly OperationDoc[],
): OpenApiDocument {
  const converter = new SchemaConverter();
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const op of operations) {
    const path = openApiPath(op.path);
    const item = paths[path] ??= {};
    const method = op.method.toLowerCase();
    if (item[method] !== undefined) throw new Error(`openapi: ${op.method} ${op.path} is documented twice`);
    item[method] = operationObject(converter, op);
    for (const tag of op.tags) tags.add(tag);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: info.title,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
    },
    servers: [{ url: info.serverUrl }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      schemas: Object.fromEntries(
        Object.entries(converter.components).sort(([a], [b]) => a.localeCompare(b)),
      ),
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An access token (JWT, typ at+svc) or an API key (sak_…).",
        },
        serviceAccount: {
          type: "http",
          scheme: "basic",
          description: 'A service account: base64("<key>:<sas_… secret>") or "<realm>/<key>:<secret>".',
        },
        cookie: {
          type: "apiKey",
          in: "cookie",
          name: "svc_at",
          description: "Browser session cookies; state-changing requests also send X-Svc-Csrf.",
        },
      },
    },
    tags: [...tags].sort().map((name) => ({ name })),
  };
}
