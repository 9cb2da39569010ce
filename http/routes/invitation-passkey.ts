/**
 * Accepting an invitation with a passkey instead of a password (issue 14): passkey-only accounts
 * are allowed. Both routes are public (the mailed `invite+svc` token is the credential):
 *
 * - `POST /auth/invitation/passkey/options` `{ token }` → `{ ceremonyId, options }` for
 *   `navigator.credentials.create`, for the invited user of a live invitation whose account has
 *   no password (an account with one answers 409 `invitation_accepted`: it accepts signed in).
 *   Rate limited per IP like the passkey login options (429 `login_blocked` with `Retry-After`).
 * - `POST /auth/invitation/passkey` `{ token, ceremonyId, response, name?, displayName? }` → 200
 *   `{ userId, email }`: the passkey is registered, then the token consumed (once, under
 *   concurrency too; a losing attempt's passkey is removed again), the address marked verified
 *   and the organization joined. The person then signs in with the passkey.
 *
 * @module
 */
import * as v from "valibot";
import type { RequestThrottle } from "../../core/abuse/request-throttle.ts";
import type { AccountFlows } from "../../core/accounts/flows.ts";
import { LoginBlockedError } from "../../core/login/errors.ts";
import { RegistrationResponseSchema } from "../../core/passkeys/service.ts";
import type { PasskeyService } from "../../core/passkeys/service.ts";
import { clientIp } from "../client-ip.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  type OperationDoc,
} from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";
import { CeremonyStartSchema } from "./passkeys.ts";

const token = v.pipe(
  v.string("token must be a string"),
  v.minLength(1, "token must not be empty"),
  v.maxLength(8192),
);

/** The body of `POST /auth/invitation/passkey/options`. */
export const InvitationPasskeyOptionsSchema = v.strictObject({ token });

/** The body of `POST /auth/invitation/passkey`. */
export const InvitationPasskeySchema = v.strictObject({
  token,
  ceremonyId: v.pipe(v.string("ceremonyId must be a string"), v.minLength(1), v.maxLength(100)),
  response: RegistrationResponseSchema,
  name: v.optional(v.nullable(v.pipe(v.string("name must be a string"), v.trim(), v.maxLength(100)))),
  displayName: v.optional(
    v.nullable(
      v.pipe(
        v.string("displayName must be a string"),
        v.minLength(1, "displayName must not be empty"),
        v.maxLength(200),
      ),
    ),
  ),
});

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: "/auth/invitation/passkey/options",
    summary: "Start accepting an invitation with a passkey",
    description:
      "For an invited account without a password. Rate limited per IP: past it 429 `login_blocked` with `Retry-After`.",
    tags: ["Account"],
    auth: "public",
    body: InvitationPasskeyOptionsSchema,
    responses: {
      200: { description: "Options for navigator.credentials.create", body: CeremonyStartSchema },
      ...errorResponses(400, 401, 409, 429),
    },
  },
  {
    method: "POST",
    path: "/auth/invitation/passkey",
    summary: "Accept an invitation by registering a passkey (no password)",
    tags: ["Account"],
    auth: "public",
    body: InvitationPasskeySchema,
    responses: {
      200: { description: "Accepted", body: v.object({ userId: v.string(), email: v.string() }) },
      ...errorResponses(400, 401, 409),
    },
  },
];

/** What the routes need. */
export interface InvitationPasskeyDeps {
  readonly accounts: Pick<AccountFlows, "invitedForPasskey" | "acceptInvitationWithPasskey">;
  readonly passkeys: Pick<PasskeyService, "startRegistration" | "finishRegistration" | "remove">;
  /** The passkey options throttle (per IP). */
  readonly throttle: Pick<RequestThrottle, "passkeyOptions">;
}

/** The invitation's passkey routes. */
export function invitationPasskeyRoutes(deps: InvitationPasskeyDeps): DocumentedInstaller {
  return documented((app) => {
    app.post("/auth/invitation/passkey/options", async (c) => {
      const body = await parseBody(c, InvitationPasskeyOptionsSchema);
      c.header("Cache-Control", "no-store");
      const { allowed, retryAfterSeconds } = await deps.throttle.passkeyOptions({ ip: clientIp(c) });
      if (!allowed) {
        c.header("Retry-After", String(retryAfterSeconds));
        throw new LoginBlockedError(retryAfterSeconds);
      }
      const user = await deps.accounts.invitedForPasskey(body.token);
      return c.json(await deps.passkeys.startRegistration(user));
    });

    app.post("/auth/invitation/passkey", async (c) => {
      const body = await parseBody(c, InvitationPasskeySchema);
      const accepted = await deps.accounts.acceptInvitationWithPasskey(
        body.token,
        body.displayName,
        async (user) => {
          const credential = await deps.passkeys.finishRegistration(
            user,
            body.ceremonyId,
            body.response,
            body.name !== undefined ? { name: body.name } : {},
          );
          return { undo: async () => void await deps.passkeys.remove(user, credential.id) };
        },
      );
      c.header("Cache-Control", "no-store");
      return c.json({ userId: accepted.userId, email: accepted.email });
    });
  }, OPERATIONS);
}
