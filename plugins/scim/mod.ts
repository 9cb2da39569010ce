/**
 * The SCIM 2.0 plugin (`SVC_PLUGINS=scim`): an organization's identity provider (Okta, Entra ID,
 * Google Workspace…) provisions and deprovisions the organization's members and groups through
 * RFC 7644 at `{baseUrl}{pathBase}/scim/v2/{connectionId}` with the connection's bearer token.
 * Connections are managed at `/svc-admin/scim/connections` (fenced by `scim:global:*` realm-wide
 * and `scim:org:*` for the organization's own administrators), each with a provisioning log.
 * Changes are audited with actor kind `System` and actor id `scim:connection:<id>`. Built only on
 * what `mod.ts` exports.
 *
 * @module
 */
import * as v from "valibot";
import { definePlugin, type PluginSql, publicUrl, secondsSetting, type SvcPlugin } from "../../mod.ts";
import { adminRoutes } from "./admin.ts";
import { scimRoutes } from "./routes.ts";
import { PERMISSIONS, SCIM_PREFIX, type ScimConfig } from "./shared.ts";
import { TABLES } from "./store.ts";

export type { ScimConfig } from "./shared.ts";

/** A whole number from `min` to `max` (a number, or digits from an environment variable). */
const wholeNumber = (min: number, max: number, fallback: number, unit: string) => {
  const message = `a whole number of ${unit} from ${min} to ${max}`;
  return v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,9}$/, "a whole number"), v.transform(Number))]),
      v.integer(message),
      v.minValue(min, message),
      v.maxValue(max, message),
    ),
    fallback,
  );
};

const ConfigSchema = v.object({
  defaultOverlapSeconds: secondsSetting(0, 7 * 86400, 3600),
  maxBodyBytes: wholeNumber(1024, 10 * 1024 * 1024, 1024 * 1024, "bytes"),
  bulkMaxOperations: wholeNumber(1, 1000, 100, "operations"),
  bulkMaxPayloadBytes: wholeNumber(1024, 10 * 1024 * 1024, 1024 * 1024, "bytes"),
});

/** Builds the SCIM plugin. */
export function scimPlugin(): SvcPlugin<ScimConfig> {
  let sql: PluginSql | null = null;
  return definePlugin<ScimConfig>({
    name: "scim",
    permissions: [
      { id: PERMISSIONS.readGlobal, description: "Read every organization's SCIM connections and logs" },
      { id: PERMISSIONS.manageGlobal, description: "Create, change, rotate and delete any SCIM connection" },
      { id: PERMISSIONS.readOrg, description: "Read the organization's SCIM connections and logs" },
      {
        id: PERMISSIONS.manageOrg,
        description: "Create, change, rotate and delete the organization's SCIM connections",
      },
    ],
    config: {
      schema: ConfigSchema,
      settings: [
        {
          env: "SVC_SCIM_DEFAULT_OVERLAP_SECONDS",
          key: "defaultOverlapSeconds",
          doc:
            "how long a SCIM connection's previous token stays valid after a rotation that names no overlap",
          defaultText: "3600",
        },
        {
          env: "SVC_SCIM_MAX_BODY_BYTES",
          key: "maxBodyBytes",
          doc: "the largest SCIM request body accepted, in bytes",
          defaultText: "1048576",
        },
        {
          env: "SVC_SCIM_BULK_MAX_OPERATIONS",
          key: "bulkMaxOperations",
          doc: "the most operations of one SCIM /Bulk request (1 to 1000; maxOperations)",
          defaultText: "100",
        },
        {
          env: "SVC_SCIM_BULK_MAX_PAYLOAD_BYTES",
          key: "bulkMaxPayloadBytes",
          doc: "the largest SCIM /Bulk request body, in bytes (1024 to 10485760; maxPayloadSize)",
          defaultText: "1048576",
        },
      ],
    },
    tables: TABLES,
    start(ctx) {
      sql = ctx.sql;
    },
    /**
     * A member who leaves the organization by other means (an administrator, an erasure) is no
     * longer one of its connections' users: their rows go, so the SCIM view stays the
     * organization's membership.
     */
    async onEvent(event) {
      if (sql === null || typeof event.userId !== "string") return;
      if (event.kind === "user.org_left" && typeof event.orgId === "string") {
        await sql.query(
          `DELETE FROM scim_users WHERE user_id = $1 AND connection_id IN (SELECT id FROM scim_connections WHERE org_id = $2)`,
          [event.userId, event.orgId],
        );
      } else if (event.kind === "user.erased") {
        await sql.query(`DELETE FROM scim_users WHERE user_id = $1`, [event.userId]);
        await sql.query(`DELETE FROM scim_departed WHERE user_id = $1`, [event.userId]);
      }
    },
    async readiness(ctx) {
      await ctx.sql.query("SELECT 1 FROM scim_connections LIMIT 1");
    },
    mount(ctx) {
      const baseUrlOf = (id: string) => publicUrl(ctx.svcConfig.server, `${SCIM_PREFIX}/${id}`);
      return [scimRoutes({ ctx, baseUrlOf }), adminRoutes(ctx, baseUrlOf)];
    },
  });
}
