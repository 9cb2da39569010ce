/**
 * `GET /openapi.json` (the OpenAPI 3.1 document of every route the app serves) and
 * `GET /openapi` (the browsable reference, with its script and stylesheet). Public: the
 * document describes the API, not its data; every operation lists who may call it.
 *
 * @module
 */
import * as v from "valibot";
import type { SvcApp } from "../app-deps.ts";
import { sha256Hex } from "../../core/digest.ts";
import { buildOpenApiDocument, type DocumentInfo, type OpenApiDocument } from "./document.ts";
import type { OperationDoc } from "./operation.ts";
import { REFERENCE_CSS, REFERENCE_HTML, REFERENCE_JS } from "./reference-page.ts";

/** The Content-Security-Policy of the reference page: only its own script, style and document. */
export const REFERENCE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The operations of the OpenAPI routes themselves. */
export const OPENAPI_OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/openapi.json",
    summary: "This OpenAPI 3.1 document",
    tags: ["Reference"],
    auth: "public",
    responses: { 200: { description: "The document", body: v.record(v.string(), v.unknown()) } },
  },
  {
    method: "GET",
    path: "/openapi",
    summary: "The browsable API reference",
    tags: ["Reference"],
    auth: "public",
    responses: { 200: { description: "An HTML page", mediaType: "text/html" } },
  },
  {
    method: "GET",
    path: "/openapi/reference.js",
    summary: "Script of the API reference page",
    tags: ["Reference"],
    auth: "public",
    responses: { 200: { description: "JavaScript", mediaType: "text/javascript" } },
  },
  {
    method: "GET",
    path: "/openapi/reference.css",
    summary: "Stylesheet of the API reference page",
    tags: ["Reference"],
    auth: "public",
    responses: { 200: { description: "CSS", mediaType: "text/css" } },
  },
];

function asset(body: string, contentType: string): { body: string; contentType: string; etag: string } {
  return { body, contentType, etag: `"${sha256Hex(body).slice(0, 32)}"` };
}

/**
 * Installs the document and the reference page. `operations` is read on the first request,
 * once every route module has been installed; the document is built once.
 */
export function installOpenApiRoutes(
  app: SvcApp,
  info: DocumentInfo,
  operations: () => readonly OperationDoc[],
): void {
  let document: { json: string; etag: string } | null = null;
  const built = (): { json: string; etag: string } => {
    if (document === null) {
      const doc: OpenApiDocument = buildOpenApiDocument(info, operations());
      const json = JSON.stringify(doc);
      document = { json, etag: `"${sha256Hex(json).slice(0, 32)}"` };
    }
    return document;
  };
  const assets = {
    "/openapi": asset(REFERENCE_HTML, "text/html; charset=utf-8"),
    "/openapi/reference.js": asset(REFERENCE_JS, "text/javascript; charset=utf-8"),
    "/openapi/reference.css": asset(REFERENCE_CSS, "text/css; charset=utf-8"),
  };
  app.get("/openapi.json", (c) => {
    const { json, etag } = built();
    c.header("Cache-Control", "no-cache");
    c.header("ETag", etag);
    if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
    c.header("Content-Type", "application/json");
    return c.body(json, 200);
  });
  for (const [path, file] of Object.entries(assets)) {
    app.get(path, (c) => {
      c.header("Cache-Control", "no-cache");
      c.header("ETag", file.etag);
      c.header("Content-Security-Policy", REFERENCE_CSP);
      if (c.req.header("If-None-Match") === file.etag) return c.body(null, 304);
      c.header("Content-Type", file.contentType);
      return c.body(file.body, 200);
    });
  }
}
