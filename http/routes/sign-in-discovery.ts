/**
 * Home-realm discovery for the hosted sign-in page: `POST /auth/sign-in/discover
 * {email, returnTo?, realm?}` asks the plugins' sign-in steps (`discoverSignIn`) whether the
 * email's domain signs in elsewhere (for example through an organization's own identity
 * provider). The answer is `{redirect}` (a path of svc the browser goes to) or `{}`.
 *
 * No account enumeration: the steps decide from the domain only, and this route answers the
 * same for an email whether or not an account has it. A `returnTo` is checked with the hosted
 * pages' rule (its origin is the base URL's or one of `SVC_ACCOUNT_RETURN_TO_ORIGINS`).
 *
 * @module
 */
import * as v from "valibot";
import { EmailAddressSchema } from "../../core/accounts/email.ts";
import { isUuid } from "../../core/ids.ts";
import { SvcError } from "../../core/errors.ts";
import type { Storage } from "../../core/storage/storage.ts";
import { allowedReturnTo } from "../../console/account/return-to.ts";
import { bodyLimit } from "../body-limit.ts";
import { documented, errorResponses, type OperationDoc } from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";
import type { RouteInstaller } from "../app.ts";

/** What a sign-in step is asked (see `SignInDiscoveryRequest` of the plugin contract). */
export interface SignInDiscoveryQuestion {
  readonly email: string;
  readonly domain: string;
  readonly realmId: string;
  readonly returnTo: string | null;
}

/** Asks the installed sign-in steps; null: no step takes this email. */
export type SignInDiscoverer = (
  request: SignInDiscoveryQuestion,
) => Promise<{ readonly path: string } | null>;

/** Largest body of `POST /auth/sign-in/discover`. */
export const SIGN_IN_DISCOVERY_MAX_BYTES = 4096;

/** The body of `POST /auth/sign-in/discover`. */
export const SignInDiscoverySchema = v.strictObject({
  email: EmailAddressSchema,
  returnTo: v.optional(
    v.nullable(v.pipe(v.string("returnTo must be a string"), v.maxLength(2048, "returnTo is too long"))),
  ),
  realm: v.optional(
    v.nullable(v.pipe(v.string("realm must be a string"), v.maxLength(200, "realm is too long"))),
  ),
});

/** The answer: where to send the browser, or nothing. */
export const SignInDiscoveryAnswerSchema = v.pipe(
  v.object({
    redirect: v.optional(
      v.pipe(v.string(), v.description("A path of svc (with the path base) to send the browser to.")),
    ),
  }),
  v.title("SignInDiscovery"),
);

const OPERATIONS: readonly OperationDoc[] = [{
  method: "POST",
  path: "/auth/sign-in/discover",
  summary: "Home-realm discovery for the sign-in page",
  description:
    "Asks the enabled plugins' sign-in steps whether the email's domain signs in elsewhere (an organization's identity provider). Decided from the domain only: the answer is the same whether or not an account has the email.",
  tags: ["Hosted pages"],
  auth: "public",
  body: SignInDiscoverySchema,
  responses: {
    200: { description: "`{redirect}` or `{}`", body: SignInDiscoveryAnswerSchema },
    ...errorResponses(400, 413),
  },
}];

/** `POST /auth/sign-in/discover` over the given discoverer (none: always `{}`). */
export function signInDiscoveryRoutes(
  storage: Storage,
  discover: SignInDiscoverer | undefined,
): RouteInstaller {
  return documented((app, deps) => {
    const { baseUrl, pathBase } = deps.config.server;
    const origins = deps.config.account.returnToOrigins;
    app.post("/auth/sign-in/discover", bodyLimit(SIGN_IN_DISCOVERY_MAX_BYTES), async (c) => {
      const body = await parseBody(c, SignInDiscoverySchema);
      c.header("Cache-Control", "no-store");
      let returnTo: string | null = null;
      if (body.returnTo) {
        returnTo = allowedReturnTo(body.returnTo, origins, new URL(baseUrl).origin);
        if (returnTo === null) {
          throw new SvcError("return_to_refused", "returnTo is not on an allowed origin.", 400);
        }
      }
      if (discover === undefined) return c.json({});
      const realm = body.realm
        ? (isUuid(body.realm) ? await storage.realms.get(body.realm) : null) ??
          await storage.realms.getByName(body.realm)
        : await storage.realms.getDefault();
      // An unknown realm answers like a domain no step takes.
      if (realm === null) return c.json({});
      const email = body.email; // normalized by the schema
      const answer = await discover({
        email,
        domain: email.slice(email.lastIndexOf("@") + 1),
        realmId: realm.id,
        returnTo,
      });
      return c.json(answer === null ? {} : { redirect: `${pathBase}${answer.path}` });
    });
  }, OPERATIONS);
}
