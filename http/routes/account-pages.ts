/**
 * The hosted account pages (issue 14): the built app (`console/account/`, embedded by the page
 * pipeline) at `SVC_ACCOUNT_MOUNT_PATH` (default `/account`), and the public settings it reads at
 * start, `GET /auth/hosted-settings?realm=`: the realm's branding (product name, colour, logo; the
 * server's `SVC_BRAND_*` where the realm sets none), whether its sign-up page is open, and the
 * origins a `returnTo` may send the browser to after sign-in (anything else is refused: no open
 * redirect).
 *
 * @module
 */
import * as v from "valibot";
import type { SvcConfig } from "../../core/config/mod.ts";
import { app as accountPages } from "../../console/generated/account.ts";
import type { RouteInstaller } from "../app.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import { NotFoundError } from "../../core/errors.ts";
import type { Realm, RealmStore } from "../../core/storage/realms.ts";
import { parseQuery } from "../admin/kit.ts";
import { STATIC_APP_CSP, staticAppRoutes } from "../static-app.ts";

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
    realm: v.pipe(
      v.nullable(v.string()),
      v.description("The realm asked for (`?realm=`), or null: the default."),
    ),
    selfSignUp: v.pipe(v.boolean(), v.description("Whether the realm's sign-up page is open.")),
  }),
  v.title("HostedSettings"),
);

/**
 * The public settings of the hosted pages for `realm` (its branding over the server's; the
 * `returnTo` origins always include svc's own).
 */
export function hostedSettings(config: SvcConfig, realm: Realm): v.InferOutput<typeof HostedSettingsSchema> {
  return {
    productName: realm.branding.productName ?? config.branding.productName ?? config.relyingParty.name,
    color: realm.branding.color ?? config.branding.color,
    logoUrl: realm.branding.logoUrl ?? config.branding.logoUrl ?? null,
    realm: realm.isDefault ? null : realm.name,
    selfSignUp: realm.selfSignUp,
    // svc's own origin always: the OIDC provider sends the browser back to its authorization endpoint.
    returnToOrigins: [...new Set([new URL(config.server.baseUrl).origin, ...config.account.returnToOrigins])],
  };
}

/** The query of `GET /auth/hosted-settings`. */
export const HostedSettingsQuerySchema = v.object({
  realm: v.optional(
    v.pipe(v.string(), v.maxLength(200), v.description("A realm name or id (default: the default realm).")),
  ),
});

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: "/auth/hosted-settings",
    summary: "Branding and sign-in settings of the hosted account pages",
    tags: ["Hosted pages"],
    auth: "public",
    query: HostedSettingsQuerySchema,
    responses: {
      200: { description: "The settings", body: HostedSettingsSchema },
      ...errorResponses(400, 404),
    },
  },
];

/** The hosted pages' settings route (`?realm=` picks the realm whose branding and sign-up apply). */
export function hostedSettingsRoutes(
  realms: Pick<RealmStore, "get" | "getByName" | "getDefault">,
): DocumentedInstaller {
  return documented((app, deps) => {
    app.get("/auth/hosted-settings", async (c) => {
      const wanted = parseQuery(c, HostedSettingsQuerySchema).realm;
      const realm = wanted
        ? (await realms.get(wanted)) ?? (await realms.getByName(wanted))
        : await realms.getDefault();
      if (realm === null) throw new NotFoundError("No such realm.");
      c.header("Cache-Control", "no-cache");
      return c.json(hostedSettings(deps.config, realm));
    });
  }, OPERATIONS);
}

/**
 * The origins each CAPTCHA provider's widget needs (its script, its iframe, its calls). None of
 * them can be self-hosted: the widget is the provider's remote script, so the pages that may
 * show it allow these origins, and only when that provider is configured.
 */
export const CAPTCHA_ORIGINS: Readonly<Record<"turnstile" | "hcaptcha" | "recaptcha", readonly string[]>> = {
  turnstile: ["https://challenges.cloudflare.com"],
  hcaptcha: ["https://hcaptcha.com", "https://*.hcaptcha.com"],
  recaptcha: ["https://www.google.com", "https://www.gstatic.com", "https://recaptcha.google.com"],
};

/** The pages that go through the abuse gate, so may have to show a CAPTCHA widget. */
export const CAPTCHA_PAGES: readonly string[] = ["sign-in", "sign-up"];

/**
 * The CSP of a hosted page: {@link STATIC_APP_CSP}, widened on the sign-in and sign-up pages by
 * the configured CAPTCHA provider's origins (script, frame, style and connect sources).
 */
export function accountPageCsp(page: string, config: SvcConfig): string {
  const provider = config.abuse.captcha.provider;
  if (provider === "none" || !CAPTCHA_PAGES.includes(page)) return STATIC_APP_CSP;
  const origins = CAPTCHA_ORIGINS[provider].join(" ");
  const widened = STATIC_APP_CSP.split("; ").map((directive) =>
    /^(script-src|style-src|connect-src) /.test(directive) ? `${directive} ${origins}` : directive
  );
  widened.push(`frame-src ${origins}`);
  return widened.join("; ");
}

/** The hosted account app at its mount. */
export const accountPageRoutes: RouteInstaller = staticAppRoutes(
  accountPages,
  (config) => config.account.mountPath,
  accountPageCsp,
);
