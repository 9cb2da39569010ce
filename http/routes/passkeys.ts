/**
 * Passkey endpoints (spec 4.2), mounted under `/auth/passkey`:
 *
 * - `POST /register/options` (signed in; optional `{ name }`) → `{ ceremonyId, options }`;
 *   `options` goes to `navigator.credentials.create({ publicKey })`.
 * - `POST /register` (signed in) `{ ceremonyId, response, name? }` → 201 `{ passkey }`.
 * - `GET /login/options` (passwordless, discoverable) or `POST /login/options` with
 *   `{ email?, realm? }` (username-first when `email` is given) or `{ mfaToken }` (the
 *   options of a second-factor ceremony) → `{ ceremonyId, options }`; rate limited per IP
 *   (`config.throttle.passkeyOptions`): past it 429 `login_blocked` with `Retry-After`.
 * - `POST /login` `{ ceremonyId, response, org?, audience? }` → the sign-in response (`audience`:
 *   svc itself by default, else an app of the app catalog, as for the password login).
 * - `POST /mfa/verify` `{ mfaToken, ceremonyId, response }` → the sign-in response.
 * - `GET /` → `{ passkeys: [...] }` of the caller.
 * - `PATCH /{credentialId}` `{ name }` (null clears it) → `{ passkey }`: renames one of the
 *   caller's passkeys (beside `DELETE` of the same resource; another user's is 404 like an unknown one).
 * - `DELETE /{credentialId}` (svc id or base64url credential id) → 204.
 *
 * Every completed login answers through `respondWithSignIn` with the MFA level
 * `PhishingResistant`.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { type CounterStore, MemoryCounterStore } from "../../core/abuse/counter-store.ts";
import { RequestThrottle } from "../../core/abuse/request-throttle.ts";
import type { Clock } from "../../core/clock.ts";
import type { SvcConfig } from "../../core/config/mod.ts";
import { fromBase64Url, fromUtf8, toBase64Url } from "../../core/encoding.ts";
import { ForbiddenError, NotFoundError, ValidationError } from "../../core/errors.ts";
import {
  MAX_ORGANIZATION_REFERENCE_LENGTH,
  resolveOrganizationReference,
} from "../../core/login/organization-reference.ts";
import type { EventSink } from "../../core/events/sink.ts";
import { LoginBlockedError, UnknownAudienceError } from "../../core/login/errors.ts";
import { describeDevice } from "../../core/login/pipeline.ts";
import { PASSKEY_MFA_LEVEL } from "../../core/passkeys/rules.ts";
import {
  AuthenticationResponseSchema,
  PasskeyService,
  RegistrationResponseSchema,
} from "../../core/passkeys/service.ts";
import type { RandomSource } from "../../core/random.ts";
import { InvalidTokenError } from "../../core/tokens/errors.ts";
import type { TokenService } from "../../core/tokens/service.ts";
import type { MfaTokenClaims } from "../../core/tokens/types.ts";
import type { PasskeyCredentialRecord } from "../../core/storage/passkey-credentials.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { RouteInstaller } from "../app.ts";
import { parseQuery } from "../admin/kit.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  IsoTimeSchema,
  type OperationDoc,
} from "../openapi/operation.ts";
import { cookieSettings } from "../auth/cookies.ts";
import { clientIp } from "../client-ip.ts";
import { respondWithSignIn, type SignInResponder, SignInResponseSchema } from "../auth/login-response.ts";
import type { AuthStack } from "../auth/stack.ts";
import type { SvcEnv } from "../request-id.ts";
import { parseBody, parseOptionalBody } from "../validate.ts";
import { noStore } from "../security-headers.ts";
import { requireUser } from "./auth.ts";
import { isUuid } from "../../core/ids.ts";

const ceremonyId = v.pipe(v.string("ceremonyId must be a string"), v.minLength(1), v.maxLength(100));
const name = v.nullable(v.pipe(v.string("name must be a string"), v.trim(), v.maxLength(100)));
const token = v.pipe(v.string("mfaToken must be a string"), v.minLength(1), v.maxLength(8000));

/** The body of `POST /auth/passkey/register/options`. */
export const RegisterOptionsSchema = v.strictObject({ name: v.optional(name) });

/** The body of `POST /auth/passkey/register`. */
export const RegisterSchema = v.strictObject({
  ceremonyId,
  response: RegistrationResponseSchema,
  name: v.optional(name),
});

/** The body of `PATCH /auth/passkey/{credentialId}`: the new name (blank or null clears it). */
export const RenameSchema = v.strictObject({ name });

/** The body of `POST /auth/passkey/login/options`. */
export const LoginOptionsSchema = v.strictObject({
  email: v.optional(v.pipe(v.string("email must be a string"), v.trim(), v.minLength(1), v.maxLength(320))),
  realm: v.optional(v.pipe(v.string("realm must be a realm name or id"), v.minLength(1), v.maxLength(200))),
  mfaToken: v.optional(token),
});

/** The query of `GET /auth/passkey/login/options` (an empty value counts as absent). */
export const LoginOptionsQuerySchema = v.object({
  email: v.optional(
    v.pipe(v.string(), v.trim(), v.maxLength(320), v.description("Username-first: the account's email.")),
  ),
  realm: v.optional(
    v.pipe(v.string(), v.maxLength(200), v.description("A realm name or id (default realm).")),
  ),
});

/** The body of `POST /auth/passkey/login`. */
export const LoginSchema = v.strictObject({
  ceremonyId,
  response: AuthenticationResponseSchema,
  org: v.optional(
    v.nullable(
      v.pipe(
        v.string("org must be a string"),
        v.minLength(1, "org must not be empty"),
        v.maxLength(MAX_ORGANIZATION_REFERENCE_LENGTH),
        v.description(
          "The organization to act in: its id, name or verified email domain (one of the user's).",
        ),
      ),
    ),
  ),
  audience: v.optional(v.pipe(v.string("audience must be a string"), v.minLength(1), v.maxLength(2000))),
});

/** The body of `POST /auth/passkey/mfa/verify`. */
export const MfaVerifySchema = v.strictObject({
  mfaToken: token,
  ceremonyId,
  response: AuthenticationResponseSchema,
});

/** A passkey as the API shows it (never the public key). */
export interface PasskeyView {
  /** The passkey's svc id. */
  readonly id: string;
  /** The authenticator's credential id, base64url. */
  readonly credentialId: string;
  /** The name the user gave it, or null. */
  readonly name: string | null;
  /** Whether the authenticator verifies the user (PIN, biometrics). */
  readonly userVerificationCapable: boolean;
  /** How the browser can reach the authenticator (`internal`, `usb`, `hybrid`…). */
  readonly transports: readonly string[];
  /** The authenticator's signature counter, as last seen. */
  readonly signCount: number;
  /** When it was registered (ISO 8601). */
  readonly createdAt: string;
  /** When it was last used (ISO 8601), or null. */
  readonly lastUsedAt: string | null;
}

/** The API view of a stored credential. */
export function passkeyView(c: PasskeyCredentialRecord): PasskeyView {
  return {
    id: c.id,
    credentialId: toBase64Url(c.credentialId),
    name: c.name,
    userVerificationCapable: c.userVerificationCapable,
    transports: c.transports,
    signCount: c.signCount,
    createdAt: c.createdAt.toISOString(),
    lastUsedAt: c.lastUsedAt?.toISOString() ?? null,
  };
}

/** A passkey as the API shows it. */
export const PasskeySchema = v.pipe(
  v.object({
    id: v.string(),
    credentialId: v.pipe(v.string(), v.description("The authenticator's credential id, base64url.")),
    name: v.nullable(v.string()),
    userVerificationCapable: v.boolean(),
    transports: v.array(v.string()),
    signCount: v.number(),
    createdAt: IsoTimeSchema,
    lastUsedAt: v.nullable(IsoTimeSchema),
  }),
  v.title("Passkey"),
);

/** The start of a WebAuthn ceremony. */
export const CeremonyStartSchema = v.pipe(
  v.object({
    ceremonyId: v.pipe(v.string(), v.description("Send it back with the authenticator's response.")),
    options: v.pipe(
      v.record(v.string(), v.unknown()),
      v.description("PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON."),
    ),
  }),
  v.title("CeremonyStart"),
);

const TAGS = ["Passkeys"];
const OPTIONS_DESCRIPTION = "Rate limited per IP: past it 429 `login_blocked` with `Retry-After`.";

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/auth/passkey/register/options",
    summary: "Start registering a passkey",
    tags: TAGS,
    body: RegisterOptionsSchema,
    bodyRequired: false,
    responses: {
      200: { description: "Options for navigator.credentials.create", body: CeremonyStartSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: "/auth/passkey/register",
    summary: "Finish registering a passkey",
    tags: TAGS,
    body: RegisterSchema,
    responses: {
      201: { description: "Registered", body: v.object({ passkey: PasskeySchema }) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "GET",
    path: "/auth/passkey/login/options",
    summary: "Start a passkey login (passwordless or username-first)",
    description: OPTIONS_DESCRIPTION,
    tags: TAGS,
    auth: "public",
    query: LoginOptionsQuerySchema,
    responses: {
      200: { description: "Options for navigator.credentials.get", body: CeremonyStartSchema },
      ...errorResponses(400, 429),
    },
  },
  {
    method: "POST",
    path: "/auth/passkey/login/options",
    summary: "Start a passkey login, or a passkey second factor (`mfaToken`)",
    description: OPTIONS_DESCRIPTION,
    tags: TAGS,
    auth: "public",
    body: LoginOptionsSchema,
    bodyRequired: false,
    responses: {
      200: { description: "Options for navigator.credentials.get", body: CeremonyStartSchema },
      ...errorResponses(400, 401, 429),
    },
  },
  {
    method: "POST",
    path: "/auth/passkey/login",
    summary: "Sign in with a passkey",
    tags: TAGS,
    auth: "public",
    body: LoginSchema,
    responses: { 200: { description: "Signed in", body: SignInResponseSchema }, ...errorResponses(400, 401) },
  },
  {
    method: "POST",
    path: "/auth/passkey/mfa/verify",
    summary: "Complete a login with a passkey as the second factor",
    tags: TAGS,
    auth: "public",
    body: MfaVerifySchema,
    responses: { 200: { description: "Signed in", body: SignInResponseSchema }, ...errorResponses(400, 401) },
  },
  {
    method: "GET",
    path: "/auth/passkey",
    summary: "The caller's passkeys (also at `/auth/passkey/`)",
    tags: TAGS,
    responses: {
      200: { description: "The passkeys", body: v.object({ passkeys: v.array(PasskeySchema) }) },
      ...errorResponses(401, 403),
    },
  },
  {
    method: "PATCH",
    path: "/auth/passkey/:credentialId",
    summary: "Rename one of the caller's passkeys",
    tags: TAGS,
    params: { credentialId: "The passkey's svc id or its base64url credential id" },
    body: RenameSchema,
    responses: {
      200: { description: "Renamed", body: v.object({ passkey: PasskeySchema }) },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "DELETE",
    path: "/auth/passkey/:credentialId",
    summary: "Remove one of the caller's passkeys",
    tags: TAGS,
    params: { credentialId: "The passkey's svc id or its base64url credential id" },
    responses: { 204: { description: "Removed" }, ...errorResponses(401, 403, 404) },
  },
];

/** What the passkey routes need. */
export interface PasskeyRouteDeps {
  /** The passkey ceremonies. */
  passkeys: PasskeyService;
  /** Mints and checks svc tokens. */
  tokens: TokenService;
  /** The stores the routes read. */
  storage: Pick<Storage, "users" | "realms" | "consumedTokens" | "appCatalog" | "organizations">;
  /** Answers a successful sign-in (bearer or cookie transport). */
  responder: SignInResponder;
  /** Counts login options requests per IP. */
  throttle: RequestThrottle;
}

/** The passkey routes under `/auth/passkey`. */
export function passkeyRoutes(deps: PasskeyRouteDeps): DocumentedInstaller {
  const { passkeys, storage, responder } = deps;
  return documented((app) => {
    app.post("/auth/passkey/register/options", async (c) => {
      const principal = await requireUser(c);
      const body = await parseOptionalBody(c, RegisterOptionsSchema);
      const user = await storage.users.get(principal.userId);
      if (user === null) throw new NotFoundError("The user was not found.");
      c.header("Cache-Control", "no-store");
      return c.json(await passkeys.startRegistration(user, { name: body.name }));
    });

    app.post("/auth/passkey/register", async (c) => {
      const principal = await requireUser(c);
      const body = await parseBody(c, RegisterSchema);
      const credential = await passkeys.finishRegistration(
        { id: principal.userId, realmId: principal.realmId },
        body.ceremonyId,
        body.response,
        body.name !== undefined ? { name: body.name } : {},
      );
      return c.json({ passkey: passkeyView(credential) }, 201);
    });

    const loginOptions = async (c: Context<SvcEnv>, body: v.InferOutput<typeof LoginOptionsSchema>) => {
      c.header("Cache-Control", "no-store");
      const { allowed, retryAfterSeconds } = await deps.throttle.passkeyOptions({ ip: clientIp(c) });
      if (!allowed) {
        c.header("Retry-After", String(retryAfterSeconds));
        throw new LoginBlockedError(retryAfterSeconds);
      }
      if (body.mfaToken !== undefined) {
        if (body.email !== undefined || body.realm !== undefined) {
          throw new ValidationError("mfaToken cannot be combined with email or realm.");
        }
        const claims = await verifyPending(deps, body.mfaToken);
        return c.json(
          await passkeys.startSecondFactor({
            realmId: claims.realm,
            userId: claims.sub,
            pendingId: claims.jti,
          }),
        );
      }
      const realmId = await resolveRealm(storage, body.realm);
      return c.json(await passkeys.startLogin({ realmId, email: body.email ?? null }));
    };
    app.get("/auth/passkey/login/options", (c) => {
      const query = parseQuery(c, LoginOptionsQuerySchema);
      return loginOptions(c, { email: query.email || undefined, realm: query.realm || undefined });
    });
    app.post(
      "/auth/passkey/login/options",
      async (c) => loginOptions(c, await parseOptionalBody(c, LoginOptionsSchema)),
    );

    app.post("/auth/passkey/login", noStore, async (c) => {
      const body = await parseBody(c, LoginSchema);
      const audience = await checkAudience(deps, body.audience);
      const { user } = await passkeys.finishLogin(body.ceremonyId, body.response);
      // A name or domain is resolved among the user's own organizations only; one that names none
      // is refused as a foreign organization is (the session's membership check, 403).
      const orgId = body.org == null
        ? null
        : await resolveOrganizationReference(storage.organizations, user, body.org);
      if (body.org != null && orgId === null) {
        throw new ForbiddenError("You are not a member of this organization.");
      }
      const { response } = await respondWithSignIn(c, responder, {
        realmId: user.realmId,
        userId: user.id,
        mfa: PASSKEY_MFA_LEVEL,
        orgId,
        audience,
        ipAddress: clientIp(c),
        deviceDescription: describeDevice(c.req.header("User-Agent")),
      });
      return response;
    });

    app.post("/auth/passkey/mfa/verify", noStore, async (c) => {
      const body = await parseBody(c, MfaVerifySchema);
      const claims = await verifyPending(deps, body.mfaToken);
      await passkeys.finishSecondFactor(
        { userId: claims.sub, pendingId: claims.jti },
        body.ceremonyId,
        body.response,
      );
      // The hand-off is single use: the first completion wins, concurrent or not.
      if (!await storage.consumedTokens.consume(claims.jti, new Date(claims.exp * 1000))) {
        throw new InvalidTokenError("consumed");
      }
      const { response } = await respondWithSignIn(c, responder, {
        realmId: claims.realm,
        userId: claims.sub,
        mfa: PASSKEY_MFA_LEVEL,
        orgId: claims.org,
        audience: claims.aud,
        ipAddress: clientIp(c) ?? claims.ip,
        deviceDescription: describeDevice(c.req.header("User-Agent")),
      });
      return response;
    });

    const list = async (c: Context<SvcEnv>) => {
      const principal = await requireUser(c);
      c.header("Cache-Control", "no-store");
      return c.json({ passkeys: (await passkeys.list(principal.userId)).map(passkeyView) });
    };
    app.get("/auth/passkey", list);
    app.get("/auth/passkey/", list);

    app.patch("/auth/passkey/:credentialId", async (c) => {
      const principal = await requireUser(c);
      const body = await parseBody(c, RenameSchema);
      const renamed = await passkeys.rename(
        { id: principal.userId, realmId: principal.realmId },
        c.req.param("credentialId"),
        body.name === null || body.name === "" ? null : body.name,
      );
      return c.json({ passkey: passkeyView(renamed) });
    });

    app.delete("/auth/passkey/:credentialId", async (c) => {
      const principal = await requireUser(c);
      await passkeys.remove(
        { id: principal.userId, realmId: principal.realmId },
        c.req.param("credentialId"),
      );
      return c.body(null, 204);
    });
  }, OPERATIONS);
}

/** The name of the server secret passkey decoys derive from. */
export const PASSKEY_DECOY_SECRET = "passkey-decoy";

/** What {@link createPasskeyRoutes} builds from. */
export interface PasskeyStackOptions {
  /** The validated configuration. */
  config: SvcConfig;
  /** The stores. */
  storage: Storage;
  /** The source of the current time. */
  clock: Clock;
  /** The source of random bytes. */
  random: RandomSource;
  /** Where passkey events go. */
  events: EventSink;
  /** The token service and sessions. */
  auth: Pick<AuthStack, "tokens" | "sessions"> & Partial<Pick<AuthStack, "dpop">>;
  /** The counter store of the options throttle (default: in memory; svc start passes the SQL store). */
  counters?: CounterStore;
}

/**
 * The passkey service and routes from the configuration (relying party, ceremony lifetime), and
 * the options throttle (shared with the invitation's passkey options).
 */
export function createPasskeyRoutes(
  options: PasskeyStackOptions,
): { passkeys: PasskeyService; routes: RouteInstaller; throttle: RequestThrottle } {
  const { config, storage, clock, random, events, auth } = options;
  const throttle = new RequestThrottle({
    store: options.counters ?? new MemoryCounterStore({ clock }),
    clock,
    sink: events,
    limits: config.throttle,
  });
  const passkeys = new PasskeyService({
    credentials: storage.passkeyCredentials,
    ceremonies: storage.passkeyCeremonies,
    users: storage.users,
    events,
    clock,
    random,
    relyingParty: config.relyingParty,
    ceremonyTtlMs: config.passkey.ceremonyTtlSeconds * 1000,
    decoySecret: () => storage.serverSecrets.getOrCreate(PASSKEY_DECOY_SECRET, () => random.bytes(32)),
  });
  const routes = passkeyRoutes({
    passkeys,
    tokens: auth.tokens,
    storage,
    responder: {
      sessions: auth.sessions,
      cookies: cookieSettings(config),
      random,
      refreshTokenTtlSeconds: config.tokens.refreshTokenTtlSeconds,
      dpop: auth.dpop && { verifier: auth.dpop, baseUrl: config.server.baseUrl },
    },
    throttle,
  });
  return { passkeys, routes, throttle };
}

/**
 * The claims of a pending login's `mfa+svc` token, not yet consumed. Its audience is the app
 * the login is for (any), carried into the issued tokens.
 */
async function verifyPending(deps: PasskeyRouteDeps, mfaToken: string): Promise<MfaTokenClaims> {
  const audience = unverifiedAudience(mfaToken);
  if (audience === null) throw new InvalidTokenError("malformed");
  const claims = await deps.tokens.verify("mfa+svc", mfaToken, { audience });
  if (await deps.storage.consumedTokens.isConsumed(claims.jti)) throw new InvalidTokenError("consumed");
  return claims;
}

function unverifiedAudience(jwt: string): string | null {
  const parts = jwt.split(".");
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(fromUtf8(fromBase64Url(parts[1])));
    return typeof payload?.aud === "string" && payload.aud.length > 0 ? payload.aud : null;
  } catch {
    return null;
  }
}

/** The audience of a login: svc itself (the issuer) when absent, else an app of the app catalog. */
async function checkAudience(deps: PasskeyRouteDeps, audience: string | undefined): Promise<string> {
  const issuer = deps.tokens.issuer;
  if (audience === undefined || audience === issuer) return issuer;
  if (await deps.storage.appCatalog.get(audience) === null) throw new UnknownAudienceError();
  return audience;
}

/** The realm a login is in: the named one (name or id), else the default realm (or any, when none). */
async function resolveRealm(
  storage: Pick<Storage, "realms">,
  realm: string | undefined,
): Promise<string | null> {
  if (realm === undefined) return (await storage.realms.getDefault())?.id ?? null;
  const found = isUuid(realm) ? await storage.realms.get(realm) : await storage.realms.getByName(realm);
  if (found === null) throw new ValidationError("The realm does not exist.", { field: "realm" });
  return found.id;
}
