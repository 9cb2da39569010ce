/**
 * The passkey routes over the auth test bed (PGlite, ManualClock, events collected in memory):
 * `passkeyBed()` builds the app for HTTP tests; `startPasskeyServer()` serves it with the test
 * page on 127.0.0.1 for the browser suites, reached as `http://localhost:<port>` (a secure
 * context; RP id `localhost`). Also helpers for pages with a CDP virtual authenticator.
 */
import { checkedSink } from "./events.ts";
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";
import { fromBase64Url, fromUtf8 } from "../../core/encoding.ts";
import type { PasskeyService } from "../../core/passkeys/service.ts";
import { createApp, type RouteInstaller, type SvcApp } from "../../http/app.ts";
import { createPasskeyRoutes } from "../../http/routes/passkeys.ts";
import { type AuthBed, authBed } from "./auth.ts";
import { passkeyTestPage } from "./passkey-page.ts";

/** The auth bed with the passkey routes on an app, and the default realm. */
export interface PasskeyBed {
  readonly bed: AuthBed;
  readonly app: SvcApp;
  readonly passkeys: PasskeyService;
  /** The default realm. */
  readonly realmId: string;
}

/** Builds a {@link PasskeyBed}: `env` adds configuration, `extraRoutes` come after the passkey routes. */
export async function passkeyBed(
  env: Record<string, string> = {},
  extraRoutes: RouteInstaller[] = [],
): Promise<PasskeyBed> {
  const bed = await authBed(env);
  try {
    const { passkeys, routes } = createPasskeyRoutes({
      config: bed.config,
      storage: bed.storage,
      clock: bed.clock,
      random: bed.random,
      events: checkedSink((event) => void bed.events.push(event)),
      auth: bed.auth,
    });
    const app = createApp({
      config: bed.config,
      readinessChecks: [],
      clock: bed.clock,
      random: bed.random,
      authenticator: bed.auth.authenticator,
      routes: [...bed.auth.routes, routes, ...extraRoutes],
    });
    const realm = await bed.storage.realms.create({
      name: "default",
      displayName: "Default",
      isDefault: true,
    });
    return { bed, app, passkeys, realmId: realm.id };
  } catch (err) {
    await bed.close();
    throw err;
  }
}

/** The running server and its bed. */
export interface PasskeyServer {
  /** `http://localhost:<port>`. */
  readonly origin: string;
  readonly bed: AuthBed;
  readonly passkeys: PasskeyService;
  /** The default realm. */
  readonly realmId: string;
  close(): Promise<void>;
}

/** Starts svc with the passkey routes and `GET /passkey-test`; `env` adds configuration. */
export async function startPasskeyServer(env: Record<string, string> = {}): Promise<PasskeyServer> {
  let handler: (request: Request) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503 });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => handler(request));
  const origin = `http://localhost:${server.addr.port}`;
  const { bed, app, passkeys, realmId } = await passkeyBed({ SVC_BASE_URL: origin, ...env }, [
    passkeyTestPage,
  ]);
  handler = (request) => app.fetch(request);
  return {
    origin,
    bed,
    passkeys,
    realmId,
    async close() {
      await server.shutdown();
      await bed.close();
    },
  };
}

/** Options of a CDP virtual authenticator (ctap2, internal transport, resident keys). */
export interface VirtualAuthenticatorOptions {
  /** Whether it can verify the user (and does). */
  readonly userVerification: boolean;
}

/** A page of the test site with one virtual authenticator. */
export interface AuthenticatorPage {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly cdp: CDPSession;
  readonly authenticatorId: string;
  close(): Promise<void>;
}

/** Adds a virtual authenticator to `cdp` (WebAuthn must be enabled); returns its id. */
export async function addVirtualAuthenticator(
  cdp: CDPSession,
  options: VirtualAuthenticatorOptions,
): Promise<string> {
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: options.userVerification,
      isUserVerified: options.userVerification,
      automaticPresenceSimulation: true,
    },
  });
  return authenticatorId;
}

/** Opens `/passkey-test` in a fresh context with WebAuthn enabled and one virtual authenticator. */
export async function authenticatorPage(
  browser: Browser,
  origin: string,
  options: VirtualAuthenticatorOptions,
): Promise<AuthenticatorPage> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/passkey-test`);
  await page.waitForFunction(() => (globalThis as any).svcPasskey !== undefined);
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  const authenticatorId = await addVirtualAuthenticator(cdp, options);
  return { context, page, cdp, authenticatorId, close: () => context.close() };
}

/** An answer of the page's `api`. */
export interface PageAnswer {
  status: number;
  body: any;
}

/** The claims of a JWT (not verified). */
export function jwtClaims(token: string): Record<string, any> {
  return JSON.parse(fromUtf8(fromBase64Url(token.split(".")[1])));
}
