/**
 * How the hosted account pages talk to svc: JSON over the same origin with svc's cookie session
 * (`X-Svc-Transport: cookie` at sign-in; the double-submit `X-Svc-Csrf` header on every
 * state-changing request), one refresh-and-retry when the access cookie ran out.
 *
 * @module
 */

/** The path base of svc (the shell's `svc-path-base` meta tag). */
export const PATH_BASE: string =
  document.querySelector('meta[name="svc-path-base"]')?.getAttribute("content")?.replace(/\/+$/, "") ?? "";

/** An answer: the status and the parsed JSON body (null when none). */
export interface ApiAnswer {
  readonly status: number;
  readonly body: any;
}

function csrfToken(): string {
  const match = /(?:^|;\s*)svc_csrf=([^;]+)/.exec(document.cookie);
  return match ? decodeURIComponent(match[1]) : "";
}

async function once(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const headers: Record<string, string> = { Accept: "application/json", "X-Svc-Transport": "cookie" };
  if (method !== "GET") headers["X-Svc-Csrf"] = csrfToken();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${PATH_BASE}${path}`, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed };
}

/** Calls svc; a 401 on a signed-in call refreshes the session once and retries. */
export async function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const first = await once(method, path, body);
  if (first.status !== 401 || path.startsWith("/auth/")) return first;
  const refreshed = await once("POST", "/auth/refresh", {});
  if (refreshed.status !== 200) return first;
  return await once(method, path, body);
}

/** The error code of an answer (`error.code`), or "". */
export function errorCode(answer: ApiAnswer): string {
  return typeof answer.body?.error?.code === "string" ? answer.body.error.code : "";
}
