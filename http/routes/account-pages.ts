/**
 * The hosted account pages (issue 14): the built app (`console/account/`, embedded by the page
 * pipeline) at `SVC_ACCOUNT_MOUNT_PATH` (default `/account`), and the public settings it reads at
 * start, `GET /auth/hosted-settings`: the branding (product name, colour, logo) and the origins a
 * `returnTo` may send the browser to after sign-in (anything else is refused: no open redirect).
 *
 * @module
 */
import * as v from "valibot";
import type { SvcConfig } from "../../core/config/mod.ts";
import { app as accountPages } from "../../console/generated/account.ts";
import type { RouteInstaller } from "../app.ts";
import { documented, type OperationDoc } from "../openapi/operation.ts";
import { staticAppRoutes } from "../static-app.ts";

/** The answer of `GET /auth/hosted-settings`. */
export const HostedSettingsSchema = v.pipe(
  v.object({
    productName: v.string(),
    color: v.pipe(v.string(), v.description("Accent colour, #rrggbb.")),
    logoUrl: v.nullable(v.string()),
    returnToOrigins: v.pipe(
      v.array(v.string()),
      v.description("Origins a returnTo may point at after sign-in."),
    ),
  }),
  v.title("HostedSettings"),
);

/** The public settings of the hosted pages (the `returnTo` origins always include svc's own). */
export function hostedSettings(config: SvcConfig): v.InferOutput<typeof HostedSettingsSchema> {
  return {
    productName: config.branding.productName ?? config.relyingParty.name,
    color: config.branding.color,
    logoUrl: config.branding.logoUrl ?? null,
    // svc's own origin always: the OIDC provider sends the browser back to its authorization endpoint.
    returnToOrigins: [...new Set([new URL(config.server.baseUrl).origin, ...config.account.returnToOrigins])],
  };
}

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/auth/hosted-settings",
    summary: "Branding and sign-in settings of the hosted account pages",
    tags: ["Hosted pages"],
    auth: "public",
    responses: { 200: { description: "The settings", body: HostedSettingsSchema } },
  },
];

/** The hosted pages' settings route. */
export const hostedSettingsRoutes = documented((app, deps) => {
  const body = hostedSettings(deps.config);
  app.get("/auth/hosted-settings", (c) => {
    c.header("Cache-Control", "no-cache");
    return c.json(body);
  });
}, OPERATIONS);

/** The hosted account app at its mount. */
export const accountPageRoutes: RouteInstaller = staticAppRoutes(
  accountPages,
  (config) => config.account.mountPath,
);
