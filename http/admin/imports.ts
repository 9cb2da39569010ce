/**
 * Imports over HTTP (issue 15; spec 2.11 and the appendix "Migration importer behaviour"):
 *
 * | Route | What |
 * |---|---|
 * | `POST /svc-admin/imports/:kind?realm=<id>&dryRun=true\|false` | runs one import; the body is the export |
 *
 * Kinds: `auth0` (newline-delimited JSON, parsed one line at a time from the body stream),
 * `keycloak` (a realm export file), `aspnet` (a JSON export of the Identity tables, or with
 * `Content-Type: text/csv` a CSV export of `AspNetUsers`), `clients` (a JSON array of clients).
 * Reading an Identity database by URL is the CLI's (`svc import aspnet postgres://…`): the server
 * never connects to a URL named in a request.
 *
 * The body has its own limit (`SVC_MAX_IMPORT_BYTES`). The answer is the ImportReport (camelCase,
 * `Cache-Control: no-store`: it carries generated client secrets). A real import that creates or
 * updates something appends one audit chain entry with the report's counts (never the secrets);
 * one that changes nothing (every item skipped or refused) and a dry run write nothing, not even
 * that entry. Realm-wide permission `svc:global:import` only; `realm` defaults to the
 * caller's realm, and another realm is 404. The import touches only what the caller's authority
 * covers (`./authority.ts`): an existing user holding a permission the caller lacks (an admin),
 * like a break-glass account, is an `Error` issue and left alone; an existing role or group granting
 * such permissions is not assigned. A user the export newly marks suspended is suspended as the
 * suspend route does (sessions, refresh tokens and API keys end at once; one audit entry each).
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { IMPORT_GLOBAL } from "../../core/definitions/permissions/imports.ts";
import { SvcError } from "../../core/errors.ts";
import { aspnetItems, aspnetTablesFromCsv, aspnetTablesFromJson } from "../../core/imports/aspnet.ts";
import { auth0Items } from "../../core/imports/auth0.ts";
import { clientConfigItems } from "../../core/imports/client-config.ts";
import { type ImportEngineDeps, runImport, secretsOf } from "../../core/imports/engine.ts";
import { keycloakItems } from "../../core/imports/keycloak.ts";
import { decodeUtf8 } from "../../core/imports/lines.ts";
import { COUNTED_ENTITIES, type ImportItem, type ImportReport } from "../../core/imports/model.ts";
import { issueItem, parseJson } from "../../core/imports/source.ts";
import { suspendUser } from "../../core/accounts/suspension.ts";
import { auditActor } from "../auth/audit-actor.ts";
import { fence } from "../auth/fence.ts";
import { bodyLimit } from "../body-limit.ts";
import { documented, errorResponses, type OperationDoc } from "../openapi/operation.ts";
import type { SvcEnv } from "../request-id.ts";
import { noStore } from "../security-headers.ts";
import { importGuard } from "./authority.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { adminMutation, hidden, parseQuery } from "./kit.ts";

/** The import kinds. */
export const IMPORT_KINDS = ["aspnet", "keycloak", "auth0", "clients"] as const;

/** One of {@link IMPORT_KINDS}. */
export type ImportKind = (typeof IMPORT_KINDS)[number];

/** The query of an import. */
export const ImportQuerySchema = v.strictObject({
  realm: v.optional(
    v.pipe(
      v.string(),
      v.uuid("realm must be a realm id"),
      v.description("Target realm (default: the caller's)."),
    ),
  ),
  dryRun: v.optional(
    v.pipe(
      v.picklist(["true", "false"], "dryRun must be true or false"),
      v.transform((s) => s === "true"),
      v.description("true: same matching and counts, nothing persisted (default false)."),
    ),
  ),
  orgMapping: v.optional(
    v.pipe(
      v.picklist(["FlattenToRealm"], "orgMapping must be FlattenToRealm"),
      v.description(
        "How source organizations map: only FlattenToRealm (everything at realm level; the default).",
      ),
    ),
  ),
});

const CountsSchema = v.object({
  created: v.number(),
  updated: v.number(),
  skipped: v.number(),
  total: v.number(),
});

/** The ImportReport answer. */
export const ImportReportSchema = v.pipe(
  v.object({
    users: CountsSchema,
    credentials: CountsSchema,
    roles: CountsSchema,
    roleAssignments: CountsSchema,
    groups: CountsSchema,
    groupMemberships: CountsSchema,
    clients: CountsSchema,
    issues: v.array(v.object({
      severity: v.picklist(["Info", "Warning", "Error"]),
      entity: v.string(),
      key: v.string(),
      message: v.string(),
    })),
    dryRun: v.boolean(),
    generatedClientSecrets: v.pipe(
      v.record(v.string(), v.string()),
      v.description(
        "Client id → plaintext secret: the only place the plaintext exists (empty for dry runs).",
      ),
    ),
  }),
  v.title("ImportReport"),
);

/** The body as documented: the export in its source's own format (not validated as one JSON shape). */
const ExportBodySchema = v.pipe(
  v.unknown(),
  v.title("ImportExport"),
  v.description(
    "auth0: newline-delimited JSON (one user per line); keycloak: a realm export file; aspnet: a JSON object of " +
      "the Identity tables (AspNetUsers, AspNetRoles, AspNetUserRoles, AspNetUserClaims) or, as text/csv, " +
      "AspNetUsers as CSV; clients: a JSON array of client objects.",
  ),
);

/** The audit record's view of a report: counts and issue totals, never secrets. */
export function reportSummary(kind: string, report: ImportReport): Record<string, unknown> {
  const counts: Record<string, unknown> = {};
  for (const entity of COUNTED_ENTITIES) counts[entity] = { ...report[entity] };
  const issues = { Info: 0, Warning: 0, Error: 0 };
  for (const issue of report.issues) issues[issue.severity]++;
  return {
    kind,
    ...counts,
    issues,
    generatedClientSecrets: Object.keys(report.generatedClientSecrets).length,
  };
}

/** The import items of a request body of `kind`. */
async function itemsOf(
  c: Context<SvcEnv>,
  kind: ImportKind,
  now: Date,
): Promise<AsyncIterable<ImportItem> | Iterable<ImportItem>> {
  if (kind === "auth0") {
    // The body limit has read the body already (Hono's body cache): its bytes, as one chunk.
    const bytes = await c.req.bytes();
    return auth0Items(
      decodeUtf8((async function* () {
        yield bytes;
      })()),
      c.get("jsonLimits"),
    );
  }
  const text = await c.req.text();
  if (text.includes("\u0000")) {
    throw new SvcError("invalid_request", "Invalid request: the export contains U+0000.", 400);
  }
  if (kind === "clients") return clientConfigItems(text);
  if (kind === "keycloak") {
    const parsed = parseJson(text);
    if (!parsed.ok) {
      return [issueItem("Error", "Source", "document", `The document is not JSON: ${parsed.message}`)];
    }
    return keycloakItems([parsed.value]);
  }
  const mediaType = (c.req.header("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
  if (mediaType === "text/csv") return aspnetItems(aspnetTablesFromCsv({ users: text }), now);
  const read = aspnetTablesFromJson(text);
  if ("error" in read) return [issueItem("Error", "Source", "document", read.error)];
  return aspnetItems(read.tables, now);
}

const TAGS = ["Admin: imports"];

/** The import route. */
export function importRoutes(deps: AdminRouteDeps) {
  return documented((app, appDeps) => {
    const { clock, random, config } = appDeps;
    app.post("/svc-admin/imports/:kind", noStore, bodyLimit(config.imports.maxBytes), async (c) => {
      const scope = await fence(c, deps.snapshots, { global: [IMPORT_GLOBAL] }, "You may not import.");
      const kind = c.req.param("kind");
      if (!(IMPORT_KINDS as readonly string[]).includes(kind)) throw hidden("import kind");
      const query = parseQuery(c, ImportQuerySchema);
      const realmId = query.realm ?? scope.principal.realmId;
      if (realmId !== scope.principal.realmId) throw hidden("realm");
      const dryRun = query.dryRun ?? false;
      const engine: ImportEngineDeps = {
        storage: deps.storage,
        random,
        ...secretsOf(deps.passwords),
        jsonLimits: c.get("jsonLimits"),
        // The authority rule: nobody holding more than the importer is changed by the import.
        guard: await importGuard(deps, scope),
        // A suspension by import is a suspension: sessions, refresh tokens and API keys end at once.
        suspend: async (userId) => {
          await suspendUser(
            {
              storage: deps.storage,
              clock,
              publisher: deps.publisher,
              sessions: deps.sessions,
              snapshots: deps.snapshots,
            },
            realmId,
            userId,
            auditActor(scope.principal),
            { reason: `import.${kind}` },
          );
        },
      };
      const items = await itemsOf(c, kind as ImportKind, new Date(clock.now()));
      const report = await runImport(
        engine,
        { targetRealmId: realmId, dryRun, orgMapping: query.orgMapping ?? "FlattenToRealm" },
        items,
      );
      if (!dryRun) {
        // An import that created and updated nothing (every item skipped or refused) is a no-op:
        // it writes no entry (a suspension it made has the suspend route's own entry).
        const changed = COUNTED_ENTITIES.some((entity) =>
          report[entity].created > 0 || report[entity].updated > 0
        );
        await adminMutation(deps, scope, () =>
          Promise.resolve({
            value: null,
            audit: changed
              ? { action: `import.${kind}`, target: realmId, after: reportSummary(kind, report) }
              : null,
          }));
      }
      return c.json(report);
    });
  }, OPERATIONS);
}

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/svc-admin/imports/:kind",
    summary: "Import (or dry-run) an export of ASP.NET Identity, Keycloak, Auth0 or a client config",
    description:
      "Idempotent by natural key: users by email, roles and groups by key, clients by client id, credentials by " +
      "user and algorithm. The body limit is SVC_MAX_IMPORT_BYTES. A real import appends one audit entry with " +
      "the counts.",
    tags: TAGS,
    permissions: [IMPORT_GLOBAL],
    params: { kind: "`aspnet`, `keycloak`, `auth0` or `clients`." },
    query: ImportQuerySchema,
    body: ExportBodySchema,
    responses: {
      200: { description: "The ImportReport", body: ImportReportSchema },
      ...errorResponses(400, 401, 403, 404, 413),
    },
  },
];
