/**
 * Password login (spec 5.2) and its second step (spec 4.1):
 *
 * - `POST /auth/login` `{ email, password, realm?, org?, audience?, captchaToken?, deviceFingerprint? }`:
 *   200 with the token response (or cookies with `X-Svc-Transport: cookie`), or 200
 *   `{ mfaRequired: true, mfaToken, factors, expiresIn }` when a second factor is needed.
 *   Refusals: 401 `invalid_credentials` (one answer for a wrong password, an unknown user and a
 *   right password the risk gate blocked), 429 `login_blocked` (with `Retry-After`), 401
 *   `captcha_required`.
 *
 * Both take the request's device id from the `svc_device` cookie, the `X-Svc-Device` header or
 * `deviceFingerprint` (`../auth/device-id.ts`); a sign-in answer issues one when none was presented.
 * - `POST /auth/mfa/verify` `{ mfaToken, factor: "totp" | "email_otp" | "recovery_code", code, deviceFingerprint? }`:
 *   completes the pending login like a sign-in; 401 `invalid_mfa_code` for a wrong code, 401
 *   `invalid_token` for a bad, expired or already completed hand-off token.
 *
 * @module
 */
import { mailLocaleOf } from "../../core/mail/messages.ts";
import type { Context } from "hono";
import * as v from "valibot";
import { LoginBlockedError } from "../../core/login/errors.ts";
import type { LoginPipeline, ReadyLogin } from "../../core/login/pipeline.ts";
import { MAX_PASSWORD_LENGTH } from "../../core/accounts/flows.ts";
import { EmailLookupSchema } from "../../core/accounts/email.ts";
import { MAX_ORGANIZATION_REFERENCE_LENGTH } from "../../core/login/organization-reference.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import { requestDevice } from "../auth/device-id.ts";
import { issuingProofJkt } from "../auth/dpop.ts";
import {
  respondWithSignIn,
  type SignInResponder,
  SignInResponseSchema,
  signInTransport,
} from "../auth/login-response.ts";
import { clientIp } from "../client-ip.ts";
import type { SvcEnv } from "../request-id.ts";
import { parseBody } from "../validate.ts";
import { noStore } from "../security-headers.ts";

const text = (what: string, max: number) =>
  v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`), v.maxLength(max));
const fingerprint = v.optional(v.nullable(text("deviceFingerprint", 512)));

/** The body of `POST /auth/login`. */
export const LoginRequestSchema = v.strictObject({
  email: EmailLookupSchema,
  password: v.pipe(v.string("password must be a string"), v.maxLength(MAX_PASSWORD_LENGTH)),
  realm: v.optional(v.nullable(text("realm", 200))),
  org: v.optional(v.nullable(text("org", MAX_ORGANIZATION_REFERENCE_LENGTH))),
  audience: v.optional(v.nullable(text("audience", 2000))),
  captchaToken: v.optional(v.nullable(text("captchaToken", 4096))),
  deviceFingerprint: fingerprint,
});

/** The body of `POST /auth/mfa/verify`. */
export const MfaVerifyRequestSchema = v.strictObject({
  mfaToken: text("mfaToken", 8192),
  factor: v.picklist(
    ["totp", "email_otp", "recovery_code"],
    'factor must be "totp", "email_otp" or "recovery_code"',
  ),
  code: text("code", 64),
  deviceFingerprint: fingerprint,
});

/** The answer of a password login that needs a second factor. */
export const MfaRequiredSchema = v.pipe(
  v.object({
    mfaRequired: v.literal(true),
    mfaToken: v.pipe(
      v.string(),
      v.description("The hand-off token of the second step (mfa+svc), single use."),
    ),
    factors: v.pipe(
      v.array(v.string()),
      v.description("Factors the user may use: totp, email_otp, passkey, recovery_code."),
    ),
    expiresIn: v.number(),
  }),
  v.title("MfaRequired"),
);

const SIGN_IN_HEADERS = {
  "Set-Cookie": "With X-Svc-Transport: cookie, the session cookies (and svc_device)",
};

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/auth/login",
    summary: "Sign in with an email and a password",
    description:
      "Send `X-Svc-Transport: cookie` for browser cookies instead of tokens. One `invalid_credentials` answer for every refusal. A bearer sign-in with a `DPoP` proof header (RFC 9449, `htu` this URL) gets DPoP-bound tokens (`tokenType: DPoP`); a bad proof is 400 `invalid_dpop_proof`, a missing nonce (`SVC_DPOP_NONCE_REQUIRED`) 400 `use_dpop_nonce` with `DPoP-Nonce`, both before the credentials are checked.",
    tags: ["Login"],
    auth: "public",
    body: LoginRequestSchema,
    responses: {
      200: {
        description: "Signed in, or a second factor is needed",
        body: v.union([SignInResponseSchema, MfaRequiredSchema]),
        headers: SIGN_IN_HEADERS,
      },
      ...errorResponses(400, 401, 429),
    },
  },
  {
    method: "POST",
    path: "/auth/mfa/verify",
    summary: "Complete a login with a second factor",
    tags: ["Login"],
    auth: "public",
    body: MfaVerifyRequestSchema,
    responses: {
      200: { description: "Signed in", body: SignInResponseSchema, headers: SIGN_IN_HEADERS },
      ...errorResponses(400, 401, 429),
    },
  },
];

/** What the login routes need. */
export interface LoginRouteDeps {
  pipeline: LoginPipeline;
  responder: SignInResponder;
}

/** The login routes. */
export function loginRoutes(deps: LoginRouteDeps): DocumentedInstaller {
  return documented((app) => {
    app.post("/auth/login", noStore, async (c) => {
      const { deviceFingerprint, ...body } = await parseBody(c, LoginRequestSchema);
      await earlyProof(c, deps);
      const outcome = await refusing(c, () =>
        deps.pipeline.login({
          ...body,
          deviceId: requestDevice(c, deps.responder.random, deviceFingerprint).id,
          ip: clientIp(c),
          userAgent: c.req.header("User-Agent") ?? null,
          locale: mailLocaleOf(c.req.header("Accept-Language")),
        }));
      if (outcome.kind === "mfa") {
        return c.json({
          mfaRequired: true,
          mfaToken: outcome.mfaToken,
          factors: outcome.factors,
          expiresIn: outcome.expiresIn,
        });
      }
      return await signIn(c, deps, outcome);
    });

    app.post("/auth/mfa/verify", noStore, async (c) => {
      const { deviceFingerprint, ...body } = await parseBody(c, MfaVerifyRequestSchema);
      await earlyProof(c, deps);
      const ready = await refusing(c, () =>
        deps.pipeline.verifyMfa({
          ...body,
          deviceId: requestDevice(c, deps.responder.random, deviceFingerprint).id,
          ip: clientIp(c),
          userAgent: c.req.header("User-Agent") ?? null,
          locale: mailLocaleOf(c.req.header("Accept-Language")),
        }));
      return await signIn(c, deps, ready);
    });
  }, OPERATIONS);
}

async function signIn(c: Context<SvcEnv>, deps: LoginRouteDeps, ready: ReadyLogin): Promise<Response> {
  const { response, issued } = await respondWithSignIn(c, deps.responder, ready.signIn);
  await deps.pipeline.completeSignIn(ready, issued.session.id);
  return response;
}

/**
 * A bearer sign-in's DPoP proof, checked before the credentials: a bad proof (or a missing nonce)
 * costs no password attempt. The verifier remembers the request's result for the sign-in itself.
 */
async function earlyProof(c: Context<SvcEnv>, deps: LoginRouteDeps): Promise<void> {
  if (signInTransport(c) === "bearer") await issuingProofJkt(c, deps.responder.dpop);
}

/** Runs a pipeline step; a blocked attempt answers with `Retry-After`. */
async function refusing<T>(c: Context<SvcEnv>, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof LoginBlockedError && error.retryAfterSeconds !== null) {
      c.header("Retry-After", String(error.retryAfterSeconds));
    }
    throw error;
  }
}
