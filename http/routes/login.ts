/**
 * Password login (spec 5.2) and its second step (spec 4.1):
 *
 * - `POST /auth/login` `{ email, password, realm?, org?, audience?, captchaToken?, deviceFingerprint? }`:
 *   200 with the token response (or cookies with `X-Svc-Transport: cookie`), or 200
 *   `{ mfaRequired: true, mfaToken, factors, expiresIn }` when a second factor is needed.
 *   Refusals: 401 `invalid_credentials` (one body for a wrong password and an unknown user),
 *   429 `login_blocked` (with `Retry-After`), 401 `captcha_required`, 403 `login_refused`.
 * - `POST /auth/mfa/verify` `{ mfaToken, factor: "totp" | "email_otp" | "recovery_code", code, deviceFingerprint? }`:
 *   completes the pending login like a sign-in; 401 `invalid_mfa_code` for a wrong code, 401
 *   `invalid_token` for a bad, expired or already completed hand-off token.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { LoginBlockedError } from "../../core/login/errors.ts";
import type { LoginPipeline, ReadyLogin } from "../../core/login/pipeline.ts";
import { MAX_PASSWORD_LENGTH } from "../../core/accounts/flows.ts";
import type { RouteInstaller } from "../app.ts";
import { respondWithSignIn, type SignInResponder } from "../auth/login-response.ts";
import { clientIp } from "../client-ip.ts";
import type { SvcEnv } from "../request-id.ts";
import { parseBody } from "../validate.ts";
import { UUID_PATTERN } from "../../core/ids.ts";

const text = (what: string, max: number) =>
  v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`), v.maxLength(max));
const fingerprint = v.optional(v.nullable(text("deviceFingerprint", 512)));

/** The body of `POST /auth/login`. */
export const LoginRequestSchema = v.strictObject({
  email: text("email", 320),
  password: v.pipe(v.string("password must be a string"), v.maxLength(MAX_PASSWORD_LENGTH)),
  realm: v.optional(v.nullable(text("realm", 200))),
  org: v.optional(
    v.nullable(
      v.pipe(v.string("org must be an organization id"), v.regex(UUID_PATTERN, "org must be a UUID")),
    ),
  ),
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

/** What the login routes need. */
export interface LoginRouteDeps {
  pipeline: LoginPipeline;
  responder: SignInResponder;
}

/** The login routes. */
export function loginRoutes(deps: LoginRouteDeps): RouteInstaller {
  return (app) => {
    app.post("/auth/login", async (c) => {
      const body = await parseBody(c, LoginRequestSchema);
      const outcome = await refusing(c, () =>
        deps.pipeline.login({
          ...body,
          ip: clientIp(c),
          userAgent: c.req.header("User-Agent") ?? null,
        }));
      if (outcome.kind === "mfa") {
        c.header("Cache-Control", "no-store");
        return c.json({
          mfaRequired: true,
          mfaToken: outcome.mfaToken,
          factors: outcome.factors,
          expiresIn: outcome.expiresIn,
        });
      }
      return await signIn(c, deps, outcome);
    });

    app.post("/auth/mfa/verify", async (c) => {
      const body = await parseBody(c, MfaVerifyRequestSchema);
      const ready = await refusing(c, () =>
        deps.pipeline.verifyMfa({
          ...body,
          ip: clientIp(c),
          userAgent: c.req.header("User-Agent") ?? null,
        }));
      return await signIn(c, deps, ready);
    });
  };
}

async function signIn(c: Context<SvcEnv>, deps: LoginRouteDeps, ready: ReadyLogin): Promise<Response> {
  const { response, issued } = await respondWithSignIn(c, deps.responder, ready.signIn);
  await deps.pipeline.completeSignIn(ready, issued.session.id);
  return response;
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
