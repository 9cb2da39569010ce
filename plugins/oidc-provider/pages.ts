/**
 * What the provider's HTML pages share (consent, logout confirmation): the page frame and its
 * CSP (no scripts), the double-submit form token, and the browser's svc session.
 *
 * @module
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { ACCESS_COOKIE, randomToken, sha256Hex } from "../../mod.ts";
import type { Provider } from "./shared.ts";

/**
 * The pages' CSP. `form-action` also governs the redirects after a form is sent, so the pages
 * whose form ends at the client's redirect URI allow that origin too.
 */
function csp(formTarget: string | null): string {
  return `default-src 'none'; form-action 'self'${
    formTarget === null ? "" : ` ${formTarget}`
  }; frame-ancestors 'none'; base-uri 'none'`;
}

const FORM_COOKIE = "svc_oidc_form";

/** The browser's live svc session (from the `svc_at` cookie), or null. */
export async function browserSession(p: Provider, c: Context) {
  const token = getCookie(c, ACCESS_COOKIE);
  if (token === undefined) return null;
  let claims;
  try {
    claims = await p.ctx.tokens.verify("at+svc", token);
  } catch {
    return null;
  }
  if (claims.realm !== p.realmId || claims.act !== undefined) return null;
  const session = await p.ctx.storage.sessions.getActive(claims.sid);
  if (session === null || session.userId !== claims.sub) return null;
  const user = await p.ctx.storage.users.get(session.userId);
  if (user === null || user.status !== "Active") return null;
  return { session, user };
}

/** Escapes text for HTML. */
export function escape(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** A page with svc's headers (no scripts; `formTarget` is an origin the form may end at). */
export function page(
  c: Context,
  status: 200 | 400 | 403,
  title: string,
  body: string,
  formTarget: string | null = null,
): Response {
  c.header("Content-Security-Policy", csp(formTarget));
  c.header("Cache-Control", "no-store");
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${
      escape(title)
    }</title></head><body><main><h1>${escape(title)}</h1>${body}</main></body></html>`,
    status,
  );
}

/** An error page. */
export function errorPage(c: Context, status: 400 | 403, message: string): Response {
  return page(c, status, "Sign-in cannot continue", `<p role="alert">${escape(message)}</p>`);
}

/** A form token bound to a cookie (double submit), against cross-site form posts. */
export function formToken(p: Provider, c: Context): string {
  const existing = getCookie(c, FORM_COOKIE);
  if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken(p.ctx.random, 32);
  setCookie(c, FORM_COOKIE, token, {
    path: p.path("/oidc"),
    httpOnly: true,
    secure: p.ctx.cookies.secure,
    sameSite: "Strict",
  });
  return token;
}

/** Whether a presented form token matches the cookie. */
export function formTokenValid(c: Context, presented: string | undefined): boolean {
  const cookie = getCookie(c, FORM_COOKIE);
  return cookie !== undefined && presented !== undefined && presented.length === cookie.length &&
    sha256Hex(cookie) === sha256Hex(presented);
}
