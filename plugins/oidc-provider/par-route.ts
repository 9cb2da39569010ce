/**
 * `POST /oidc/par`: the pushed authorization request endpoint (RFC 9126); see `par.ts`.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { bodyLimit, documented, noStore, type OperationDoc, type RouteInstaller } from "../../mod.ts";
import { validateRequest } from "./authorize.ts";
import { pushedAnswer, pushedParams, PushedRequestFormSchema, storePushedRequest } from "./par.ts";
import {
  authenticateClient,
  ClientAuthError,
  FORM_BODY_LIMIT,
  oauthError,
  OIDC_EVENTS,
  PATHS,
  pragmaNoCache,
  type Provider,
} from "./shared.ts";

const ErrorSchema = v.pipe(
  v.object({ error: v.string(), error_description: v.optional(v.string()) }),
  v.title("OidcParError"),
);

const operations = (): readonly OperationDoc[] => [
  {
    method: "POST",
    path: PATHS.par,
    summary: "Pushed authorization request (RFC 9126)",
    description:
      "An `application/x-www-form-urlencoded` body: the client's authentication (as at the token endpoint) and the parameters of an authorization request (not `request_uri`). They are checked as `/oidc/authorize` checks them. The answer's `request_uri` is then sent to `/oidc/authorize` with `client_id`; it must be first used within `expires_in` seconds and gives one code.",
    tags: ["OIDC provider"],
    auth: "public",
    responses: {
      201: {
        description: "`{request_uri, expires_in}`",
        body: v.pipe(v.object({ request_uri: v.string(), expires_in: v.number() }), v.title("OidcParAnswer")),
        headers: { "Cache-Control": "no-store" },
      },
      400: {
        description: "An OAuth error (`invalid_request`, `invalid_scope`, `invalid_target`…)",
        body: ErrorSchema,
      },
      401: { description: "`invalid_client`", body: ErrorSchema },
      413: { description: "The body is larger than the limit" },
    },
  },
];

/** The pushed authorization request route. */
export function parRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.post(PATHS.par, noStore, pragmaNoCache, bodyLimit(FORM_BODY_LIMIT), (c) => push(p, c));
  }, operations);
}

/**
 * The form of a pushed request: fields once each, except `resource`, which may repeat (RFC 8707);
 * null when it is not a form, or a value holds U+0000 or is too long.
 */
async function pushedForm(c: Context): Promise<{ form: Record<string, string>; resources: string[] } | null> {
  const type = c.req.header("Content-Type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return null;
  const body = await c.req.parseBody({ all: true });
  const form: Record<string, string> = {};
  const resources: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.length > 1 && name !== "resource") return null;
    for (const one of values) {
      if (typeof one !== "string" || one.includes("\u0000") || one.length > 8192) return null;
      if (name === "resource") resources.push(one);
      else form[name] = one;
    }
  }
  return { form, resources };
}

async function push(p: Provider, c: Context): Promise<Response> {
  const parsed = await pushedForm(c);
  if (parsed === null || !v.safeParse(PushedRequestFormSchema, parsed.form).success) {
    return oauthError(c, 400, "invalid_request", "send application/x-www-form-urlencoded fields");
  }
  const form = parsed.form;
  let caller;
  try {
    caller = await authenticateClient(p, c, form, PATHS.par);
  } catch (error) {
    if (!(error instanceof ClientAuthError)) throw error;
    caller = null;
  }
  if (caller === null || caller.kind !== "client") {
    p.ctx.events.emit({
      kind: OIDC_EVENTS.authorizationRefused,
      occurredAt: p.ctx.clock.now(),
      realmId: p.realmId,
      data: { clientId: form.client_id ?? null, reason: "invalid_client", endpoint: "par" },
    });
    return oauthError(c, 401, "invalid_client", "client authentication failed");
  }
  const client = caller.client;
  const made = pushedParams(client, form, parsed.resources);
  if ("error" in made) return oauthError(c, 400, made.error, made.description);
  const checked = await validateRequest(p, made.params, { requestUri: null });
  if (!checked.ok) {
    const refusal = checked.refusal;
    p.ctx.events.emit({
      kind: OIDC_EVENTS.authorizationRefused,
      occurredAt: p.ctx.clock.now(),
      realmId: p.realmId,
      data: {
        clientId: client.clientId,
        reason: refusal.at === "page" ? refusal.reason : refusal.error,
        endpoint: "par",
      },
    });
    return refusal.at === "page"
      ? oauthError(c, 400, "invalid_request", refusal.reason)
      : oauthError(c, 400, refusal.error, refusal.description);
  }
  return pushedAnswer(c, await storePushedRequest(p, client.clientId, made.params));
}
