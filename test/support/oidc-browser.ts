/** The browser's part of an OIDC code flow against a real server, over plain HTTP (no browser). */
import { strict as assert } from "node:assert";

/** What {@link authorizeOverHttp} may be given besides the credentials. */
export interface AuthorizeOverHttpOptions {
  /**
   * The browser's cookies (name to value): a jar kept across calls is one browser, whose session
   * a later call reuses; by default each call is a fresh browser.
   */
  jar?: Map<string, string>;
  /** Sees every URL the browser requests (not the redirect URI), in order. */
  onHop?: (url: URL) => void;
  /** Sees every page the browser is shown (a 200 answer): the hosted sign-in page, a consent page. */
  onPage?: (url: URL, html: string) => void;
}

/**
 * A browser's part of the code flow, over HTTP: the hosted sign-in page (its script's requests),
 * then the consent form if asked. The sign-in page may be under a path base (`/idp/account/sign-in`):
 * its script's login request goes under the same base.
 */
export async function authorizeOverHttp(
  url: URL,
  email: string,
  password: string,
  redirect: string,
  options: AuthorizeOverHttpOptions = {},
): Promise<URL> {
  const jar = options.jar ?? new Map<string, string>();
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
  };
  const hidden = (html: string) => {
    const out: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      out[m[1]] = m[2].replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
    }
    return out;
  };
  let next: { url: string; init?: RequestInit } = { url: url.href };
  for (let hop = 0; hop < 12; hop++) {
    options.onHop?.(new URL(next.url));
    const res = await fetch(next.url, {
      ...next.init,
      redirect: "manual",
      headers: { ...(next.init?.headers as Record<string, string> ?? {}), Cookie: cookie() },
    });
    remember(res);
    const location = res.headers.get("Location");
    if (location !== null) {
      await res.body?.cancel();
      const target = new URL(location, next.url);
      if (target.href.startsWith(redirect)) return target;
      next = { url: target.href };
      continue;
    }
    const html = await res.text();
    assert.equal(res.status, 200, html);
    const page = new URL(next.url);
    options.onPage?.(page, html);
    if (page.pathname.endsWith("/account/sign-in")) {
      // The hosted sign-in page: what its script does, signing in with the cookie transport, then
      // back to the authorization request.
      const base = page.pathname.slice(0, -"/account/sign-in".length);
      const login = await fetch(new URL(`${base}/auth/login`, page), {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Svc-Transport": "cookie",
          "X-Svc-Csrf": jar.get("svc_csrf") ?? "",
          Cookie: cookie(),
        },
        body: JSON.stringify({ email, password }),
      });
      remember(login);
      assert.equal(login.status, 200, await login.text());
      next = { url: new URL(page.searchParams.get("returnTo")!, page).href };
      continue;
    }
    const fields = hidden(html);
    const action = /<form method="post" action="([^"]+)"/.exec(html)![1];
    const form = new URLSearchParams(fields);
    form.set("decision", "allow");
    next = {
      url: new URL(action, next.url).href,
      init: {
        method: "POST",
        body: form.toString(),
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      },
    };
  }
  throw new Error("the flow did not reach the redirect URI");
}
