/**
 * The console's client of the svc API: same-origin JSON requests with the cookie transport
 * (httpOnly session cookies, the double-submit CSRF header on every state-changing request),
 * one refresh on an expired session, and errors as {@link ApiError} with svc's stable codes.
 *
 * @module
 */

/** The server's path base (where the API lives), from the shell's meta tag. */
export const API_BASE: string =
  document.querySelector('meta[name="svc-path-base"]')?.getAttribute("content") ?? "";

/** An error answer of the API (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(
    /** The HTTP status (0: no answer). */
    readonly status: number,
    /** svc's stable error code. */
    readonly code: string,
    message: string,
    /** Details (validation issues: field and reason). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The session ended and could not be refreshed: the console shows sign-in again. */
export class SessionExpiredError extends ApiError {
  constructor() {
    super(401, "session_expired", "Your session has ended. Sign in again.");
    this.name = "SessionExpiredError";
  }
}

function csrfToken(): string | null {
  for (const part of document.cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === "svc_csrf") return decodeURIComponent(rest.join("="));
  }
  return null;
}

/**
 * Whether this browser may have a session: the readable CSRF cookie lives as long as the
 * refresh token, so without it there is nothing to load or refresh (the first visit asks nothing
 * and logs no 401).
 */
export function mayHaveSession(): boolean {
  return csrfToken() !== null;
}

let expiredListener: (() => void) | null = null;

/** Called when a request finds the session gone for good (after one refresh attempt). */
export function onSessionExpired(listener: () => void): void {
  expiredListener = listener;
}

async function send(method: string, path: string, body: unknown): Promise<Response> {
  const headers: Record<string, string> = { "Accept": "application/json", "X-Svc-Transport": "cookie" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && method !== "HEAD") {
    const csrf = csrfToken();
    if (csrf !== null) headers["X-Svc-Csrf"] = csrf;
  }
  try {
    return await fetch(API_BASE + path, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network_error", "The server could not be reached.");
  }
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = await res.json();
    const e = body?.error;
    if (e && typeof e.code === "string") {
      return new ApiError(res.status, e.code, e.message ?? e.code, e.details);
    }
  } catch {
    // not JSON
  }
  return new ApiError(res.status, `http_${res.status}`, `The server answered ${res.status}.`);
}

let refreshing: Promise<boolean> | null = null;

/** Refreshes the cookie session once (concurrent callers share the attempt). */
export function refreshSession(): Promise<boolean> {
  refreshing ??= send("POST", "/auth/refresh", {}).then((res) => res.ok).catch(() => false).finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/**
 * Calls the API. A 401 on a session request refreshes the session once and retries; when that
 * fails, {@link SessionExpiredError} (and the listener of {@link onSessionExpired}).
 */
export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
  options: { refresh?: boolean } = {},
): Promise<T> {
  let res = await send(method, path, body);
  if (res.status === 401 && options.refresh !== false) {
    if (await refreshSession()) res = await send(method, path, body);
    if (res.status === 401) {
      // The caller gets its error first, while its page is still mounted; the switch to sign-in
      // (which unmounts that page) comes after. Switching first let a page that was being
      // unmounted set its state afterwards, and the renderer could bring it back later: the
      // next visit to that page then showed it twice.
      const listener = expiredListener;
      if (listener) setTimeout(listener, 0);
      throw new SessionExpiredError();
    }
  }
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

/** A query string of the defined, non-empty values (with the leading `?`, or ""). */
export function query(params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}
