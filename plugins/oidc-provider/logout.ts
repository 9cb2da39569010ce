/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) at `GET|POST /oidc/logout`.
 *
 * - With a valid, unexpired `id_token_hint` the session it names (and the client sessions opened
 *   from it) ends at once.
 * - Without a hint, or with an expired one (which still identifies the client), nothing ends
 *   until the user confirms on a page whose form (double-submit token, no scripts) posts back
 *   here; the confirmation ends the browser's own svc session and the client sessions opened
 *   from it.
 * - `post_logout_redirect_uri` must be registered for the client (named by the hint's `aud` or
 *   `client_id`); it is redirected to with `state`. Without one, a "Signed out" page answers.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  bodyLimit,
  type ClientRecord,
  documented,
  noStore,
  type OperationDoc,
  type RouteInstaller,
} from "../../mod.ts";
import { browserSession, errorPage, escape, formToken, formTokenValid, page } from "./pages.ts";
import {
  FORM_BODY_LIMIT,
  formFields,
  grantsOfBrowserSession,
  OIDC_EVENTS,
  PATHS,
  type Provider,
  verifyJwt,
} from "./shared.ts";

const param = v.optional(v.pipe(v.string(), v.maxLength(8192)));

/** The parameters of a logout request (query or form), and of the confirmation form. */
export const LogoutParamsSchema = v.looseObject({
  id_token_hint: param,
  client_id: param,
  post_logout_redirect_uri: param,
  state: param,
  logout_hint: param,
  ui_locales: param,
  /** The confirmation form's decision (`yes`). */
  confirm: param,
  /** The confirmation form's token. */
  form: param,
});

const RESPONSES = {
  200: { description: "The confirmation page, or the signed-out page", mediaType: "text/html" },
  303: { description: "To the registered post_logout_redirect_uri (with state)" },
  400: { description: "Invalid hint, client mismatch or unregistered redirect", mediaType: "text/html" },
  403: { description: "The confirmation form's token is missing or stale", mediaType: "text/html" },
};

/** The operations (a function: `PATHS` is read once the modules are loaded). */
const operations = (): readonly OperationDoc[] => [
  {
    method: "GET",
    path: PATHS.logout,
    summary: "RP-initiated logout",
    description:
      "`id_token_hint`, `client_id`, `post_logout_redirect_uri`, `state`. Without a valid, unexpired hint the user confirms first.",
    tags: ["OIDC provider"],
    auth: "public",
    query: LogoutParamsSchema,
    responses: RESPONSES,
  },
  {
    method: "POST",
    path: PATHS.logout,
    summary: "RP-initiated logout by POST, and its confirmation",
    description:
      "The parameters of `GET /oidc/logout` as an `application/x-www-form-urlencoded` body; with `confirm=yes` and the page's `form` token, the confirmation.",
    tags: ["OIDC provider"],
    auth: "public",
    responses: { ...RESPONSES, 413: { description: "The body is larger than the limit" } },
  },
];

/** The logout routes. */
export function logoutRoutes(p: Provider): RouteInstaller {
  return documented((app) => {
    app.get(PATHS.logout, noStore, (c) => logout(p, c, c.req.query()));
    app.post(PATHS.logout, noStore, bodyLimit(FORM_BODY_LIMIT), async (c) => {
      const form = await formFields(c);
      if (form === null) return errorPage(c, 400, "The logout request could not be read.");
      return await logout(p, c, form);
    });
  }, operations);
}

type Checked =
  | { ok: false; response: Response }
  | {
    ok: true;
    /** The hint's claims when it is valid and unexpired. */
    current: Record<string, unknown> | null;
    client: ClientRecord | null;
    redirect: URL | null;
  };

async function check(p: Provider, c: Context, params: Record<string, string>): Promise<Checked> {
  if (!v.safeParse(LogoutParamsSchema, params).success) {
    return { ok: false, response: errorPage(c, 400, "The logout request could not be read.") };
  }
  const hint = params.id_token_hint;
  const claims = hint === undefined ? null : await verifyJwt(p, hint, ["JWT"], true);
  if (hint !== undefined && claims === null) {
    return { ok: false, response: errorPage(c, 400, "The logout request's id_token_hint is not valid.") };
  }
  const expired = claims !== null &&
    (typeof claims.exp !== "number" || claims.exp * 1000 <= p.ctx.clock.now());
  const hinted = claims === null ? undefined : typeof claims.aud === "string" ? claims.aud : undefined;
  if (claims !== null && hinted === undefined) {
    return { ok: false, response: errorPage(c, 400, "The logout request's id_token_hint is not valid.") };
  }
  if (hinted !== undefined && params.client_id !== undefined && params.client_id !== hinted) {
    return { ok: false, response: errorPage(c, 400, "client_id does not match the id_token_hint.") };
  }
  const clientId = hinted ?? params.client_id;
  const client = clientId === undefined
    ? null
    : await p.ctx.storage.clients.getByClientId(p.realmId, clientId);
  const postLogout = params.post_logout_redirect_uri;
  if (postLogout !== undefined && (client === null || !client.postLogoutRedirectUris.includes(postLogout))) {
    return {
      ok: false,
      response: errorPage(c, 400, "The post-logout redirect URI is not registered for this application."),
    };
  }
  let redirect: URL | null = null;
  if (postLogout !== undefined) {
    redirect = new URL(postLogout);
    if (params.state !== undefined) redirect.searchParams.set("state", params.state);
  }
  return { ok: true, current: expired ? null : claims, client, redirect };
}

/** Ends a browser session and the client sessions opened from it; one event. */
async function endBrowserSession(p: Provider, userId: string, sessionId: string, clientId: string | null) {
  for (const id of [sessionId, ...await grantsOfBrowserSession(p, sessionId)]) {
    await p.ctx.sessions.logout(id);
  }
  p.ctx.events.emit({
    kind: OIDC_EVENTS.loggedOut,
    occurredAt: p.ctx.clock.now(),
    realmId: p.realmId,
    userId,
    data: { clientId, sessionId },
  });
}

function done(c: Context, redirect: URL | null): Response {
  if (redirect !== null) return c.redirect(redirect.href, 303);
  return page(c, 200, "Signed out", "<p>You are signed out.</p>");
}

async function logout(p: Provider, c: Context, params: Record<string, string>): Promise<Response> {
  const checked = await check(p, c, params);
  if (!checked.ok) return checked.response;
  const { current, client, redirect } = checked;
  const clientId = client?.clientId ?? null;
  if (c.req.method === "POST" && params.confirm !== undefined) {
    if (!formTokenValid(c, params.form)) {
      return errorPage(c, 403, "The form expired; go back to the application.");
    }
    if (params.confirm !== "yes") {
      return page(c, 200, "Still signed in", "<p>You are still signed in.</p>");
    }
    const signedIn = await browserSession(p, c);
    if (signedIn !== null) await endBrowserSession(p, signedIn.user.id, signedIn.session.id, clientId);
    return done(c, redirect);
  }
  if (current !== null && typeof current.sid === "string" && typeof current.sub === "string") {
    const browser = await p.ctx.storage.sessions.get(current.sid);
    if (browser !== null && browser.userId === current.sub) {
      await endBrowserSession(p, current.sub, current.sid, clientId);
    }
    return done(c, redirect);
  }
  // No valid hint: the user confirms (the form carries the request, checked again on submit).
  const token = formToken(p, c);
  const fields: Record<string, string> = { form: token };
  for (const name of ["id_token_hint", "client_id", "post_logout_redirect_uri", "state"]) {
    if (params[name] !== undefined) fields[name] = params[name];
  }
  const hidden = Object.entries(fields).map(([name, value]) =>
    `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`
  ).join("");
  const who = clientId === null ? "An application" : escape(clientId);
  return page(
    c,
    200,
    "Sign out?",
    `<p>${who} asks to sign you out.</p><form method="post" action="${
      escape(p.path(PATHS.logout))
    }">${hidden}<button type="submit" name="confirm" value="yes">Sign out</button> <button type="submit" name="confirm" value="no">Stay signed in</button></form>`,
    redirect === null ? null : redirect.origin,
  );
}
