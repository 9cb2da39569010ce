/**
 * The first-run setup link's route (issue 27):
 *
 * - `POST /setup/admin` `{ token, email, password, displayName? }`: 201 `{ userId, email }`, the
 *   default realm's first administrator (role `svc-admin`, password per the password policy),
 *   created with the single-use token `svc start` printed in the setup link. 410
 *   `setup_link_invalid` (unknown, used or expired token), 409 `administrator_exists`, 409
 *   `conflict` (the email has an account), 400 `invalid_request` (body, password policy).
 *   Public: the token is the credential. The console then signs in with the password.
 *
 * @module
 */
import * as v from "valibot";
import { EmailAddressSchema } from "../../core/accounts/email.ts";
import { createFirstAdmin } from "../../core/accounts/first-admin.ts";
import { MAX_PASSWORD_LENGTH } from "../../core/accounts/password-policy.ts";
import { NotFoundError } from "../../core/errors.ts";
import type { PasswordService } from "../../core/passwords/service.ts";
import { createSqlSetupTokenStore } from "../../storage/sql/setup-tokens.ts";
import type { Storage } from "../../core/storage/storage.ts";
import { documented, type DocumentedInstaller, errorResponses } from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";

/** The body of `POST /setup/admin`. */
export const SetupAdminSchema = v.strictObject({
  token: v.pipe(
    v.string("token must be a string"),
    v.minLength(1, "token must not be empty"),
    v.maxLength(200),
  ),
  email: EmailAddressSchema,
  password: v.pipe(v.string("password must be a string"), v.maxLength(MAX_PASSWORD_LENGTH)),
  displayName: v.optional(
    v.nullable(v.pipe(v.string("displayName must be a string"), v.minLength(1), v.maxLength(200))),
  ),
});

/** The answer of `POST /setup/admin`. */
export const FirstAdminSchema = v.pipe(
  v.object({ userId: v.string(), email: v.string() }),
  v.title("FirstAdministrator"),
);

/** The setup route's dependencies. */
export interface SetupRouteDeps {
  readonly storage: Storage;
  readonly passwords: PasswordService;
}

/** The setup route. */
export function setupRoutes(deps: SetupRouteDeps): DocumentedInstaller {
  return documented((app, appDeps) => {
    app.post("/setup/admin", async (c) => {
      c.header("Cache-Control", "no-store");
      const body = await parseBody(c, SetupAdminSchema);
      const realm = await deps.storage.realms.getDefault();
      if (realm === null) throw new NotFoundError("No default realm.");
      const admin = await createFirstAdmin({
        storage: deps.storage,
        passwords: deps.passwords,
        setupTokens: (storage) => createSqlSetupTokenStore(storage.pluginSql),
        clock: appDeps.clock,
        random: appDeps.random,
      }, {
        realmId: realm.id,
        token: body.token,
        email: body.email,
        password: body.password,
        displayName: body.displayName ?? null,
      });
      return c.json({ userId: admin.userId, email: admin.email }, 201);
    });
  }, [
    {
      method: "POST",
      path: "/setup/admin",
      summary: "Create the first administrator with the setup link",
      description: "The token of the single-use setup link `svc start` prints on a store without an " +
        "administrator (30 minutes). Creates a user with the realm-level `svc-admin` role and the password " +
        "(password policy). 410 `setup_link_invalid` when the token is unknown, used or expired; 409 " +
        "`administrator_exists` when the default realm has one.",
      tags: ["Setup"],
      auth: "public",
      body: SetupAdminSchema,
      responses: {
        201: { description: "Created; sign in with the password", body: FirstAdminSchema },
        ...errorResponses(400, 409, 410),
      },
    },
  ]);
}
