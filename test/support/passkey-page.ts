/**
 * A small WebAuthn page for the browser suites, installed only by tests as the route
 * `GET /passkey-test` of the svc app under test (so it runs on svc's own origin). Its script
 * exposes `window.svcPasskey`, which calls svc's passkey endpoints, hands the options to
 * `navigator.credentials.create/get` and posts the responses (as `PublicKeyCredential.toJSON()`
 * would write them):
 *
 * - `api(method, path, body?, accessToken?)` → `{ status, body }` (paths relative to svc);
 * - `create(options)` / `get(options)` → the JSON of a new credential / an assertion;
 * - `register(accessToken, name?)` → the answer of `POST /auth/passkey/register`;
 * - `assertion(optionsBody?)` → `{ ceremonyId, response }` (`GET /login/options` without a body);
 * - `login(optionsBody?, loginExtra?)` → the answer of `POST /auth/passkey/login`;
 * - `mfa(mfaToken)` → the answer of `POST /auth/passkey/mfa/verify`.
 *
 * The page also defines `svc()`, returning `svcPasskey`, so that `page.evaluate` callbacks
 * written against {@link svc} (its typed twin on the test side) run unchanged in the page.
 */
import type { RouteInstaller } from "../../http/app.ts";

/** The page's script (plain browser JavaScript). */
export const PASSKEY_PAGE_SCRIPT = String.raw`
const enc = (buf) => {
  const bytes = new Uint8Array(buf);
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};
const dec = (text) => {
  const s = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(s + "=".repeat((4 - (s.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0)).buffer;
};
const base = new URL(".", location.href);

async function api(method, path, body, accessToken) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (accessToken) headers["Authorization"] = "Bearer " + accessToken;
  const res = await fetch(new URL(path.replace(/^\//, ""), base), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = text; }
  return { status: res.status, body: parsed };
}

async function create(options) {
  const publicKey = {
    ...options,
    challenge: dec(options.challenge),
    user: { ...options.user, id: dec(options.user.id) },
    excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({ ...c, id: dec(c.id) })),
  };
  const cred = await navigator.credentials.create({ publicKey });
  return {
    id: cred.id,
    rawId: enc(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? null,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {
      clientDataJSON: enc(cred.response.clientDataJSON),
      attestationObject: enc(cred.response.attestationObject),
      transports: cred.response.getTransports ? cred.response.getTransports() : [],
    },
  };
}

async function get(options) {
  const publicKey = {
    ...options,
    challenge: dec(options.challenge),
    allowCredentials: (options.allowCredentials ?? []).map((c) => ({ ...c, id: dec(c.id) })),
  };
  const cred = await navigator.credentials.get({ publicKey });
  return {
    id: cred.id,
    rawId: enc(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? null,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {
      clientDataJSON: enc(cred.response.clientDataJSON),
      authenticatorData: enc(cred.response.authenticatorData),
      signature: enc(cred.response.signature),
      userHandle: cred.response.userHandle ? enc(cred.response.userHandle) : null,
    },
  };
}

async function register(accessToken, name) {
  const started = await api("POST", "auth/passkey/register/options", {}, accessToken);
  if (started.status !== 200) return started;
  const response = await create(started.body.options);
  return await api("POST", "auth/passkey/register", { ceremonyId: started.body.ceremonyId, response, name }, accessToken);
}

async function assertion(optionsBody) {
  const started = optionsBody === undefined
    ? await api("GET", "auth/passkey/login/options")
    : await api("POST", "auth/passkey/login/options", optionsBody);
  if (started.status !== 200) throw new Error("login/options: " + JSON.stringify(started));
  return { ceremonyId: started.body.ceremonyId, response: await get(started.body.options) };
}

async function login(optionsBody, loginExtra) {
  const { ceremonyId, response } = await assertion(optionsBody);
  return await api("POST", "auth/passkey/login", { ceremonyId, response, ...(loginExtra ?? {}) });
}

async function mfa(mfaToken) {
  const { ceremonyId, response } = await assertion({ mfaToken });
  return await api("POST", "auth/passkey/mfa/verify", { mfaToken, ceremonyId, response });
}

window.svcPasskey = { api, create, get, register, assertion, login, mfa };
// Tests write page.evaluate(() => svc().login()): their callbacks run here, where svc() is this.
window.svc = () => window.svcPasskey;
`;

/** The page's HTML. */
export const PASSKEY_PAGE_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>svc passkey test page</title></head>
<body>
<p>svc passkey test page</p>
<script type="module">${PASSKEY_PAGE_SCRIPT}</script>
</body>
</html>
`;

/** Installs `GET /passkey-test` (test servers only). */
export const passkeyTestPage: RouteInstaller = (app) => {
  app.get("/passkey-test", (c) => {
    c.header("Cache-Control", "no-store");
    return c.html(PASSKEY_PAGE_HTML);
  });
};

/**
 * The page's `svcPasskey` object, for `page.evaluate` callbacks: the callback's source runs in
 * the page, where `svc` is the page's own function of the same name.
 */
// deno-lint-ignore no-explicit-any
export const svc = (): any => (globalThis as any).svcPasskey;
