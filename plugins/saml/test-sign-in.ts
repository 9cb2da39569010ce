/**
 * Test sign-in: an administrator who may manage a connection runs a real SAML round trip
 * through its IdP and sees what came back — the NameID, the attributes (at most 50, 10 values
 * each, 256 characters a value) and which svc user they map to (an existing one, one that would
 * be provisioned just in time, or a refusal with its reason) — without a session being opened
 * for anyone, without provisioning or linking anyone, and before anyone depends on the
 * connection (a disabled connection can be tested).
 *
 * | Method | Path | |
 * |---|---|---|
 * | POST | `/svc-admin/saml/connections/{id}/test-sign-in` | `{returnTo}` → `201 {id, url, expiresAt}` |
 * | GET | `/svc-admin/saml/connections/{id}/test-sign-in` | `{latest}`: the caller's newest test of the connection |
 *
 * The POST answers a start URL (`/saml/{id}/start?test=<ticket>`, no-store): the ticket is
 * single-use, stored hashed and lives as long as a sign-in request. The start binds the test to
 * the sign-in's RelayState; the ACS, finding a test for the RelayState, validates the response
 * exactly as for a sign-in (same checks, the assertion id consumed once), asks the same
 * decision as a sign-in (`decideUser` in `flow.ts`) without applying it, stores the result and
 * sends the browser back to `returnTo`. A test is only ever shown to the administrator who
 * started it, for an hour. Tests change no configuration: no audit entry, no event.
 *
 * @module
 */
import * as v from "valibot";
import {
  allowedReturnTo,
  bodyLimit,
  documented,
  errorResponses,
  IsoTimeSchema,
  type OperationDoc,
  parseBody,
  type RouteInstaller,
  SvcError,
  ValidationError,
} from "../../mod.ts";
import { visibleConnection } from "./admin.ts";
import { PERMISSIONS, type Saml } from "./shared.ts";
import type { TestSignInStore } from "./test-store.ts";

const BASE = "/svc-admin/saml/connections/:connectionId/test-sign-in";
const MANAGE = { global: [PERMISSIONS.manageGlobal], org: [PERMISSIONS.manageOrg] };

/** The body of `POST …/test-sign-in`. */
export const StartTestSchema = v.strictObject({
  returnTo: v.pipe(
    v.string("returnTo must be a string"),
    v.minLength(1, "returnTo must not be empty"),
    v.maxLength(2048, "returnTo is longer than 2048 characters"),
    v.check((text) => !text.includes("\u0000"), "returnTo must not contain U+0000"),
  ),
});

const UserSchema = v.object({
  id: v.string(),
  email: v.nullable(v.string()),
  displayName: v.nullable(v.string()),
});
const ResultSchema = v.object({
  nameId: v.nullable(v.string()),
  nameIdFormat: v.nullable(v.string()),
  attributes: v.array(v.object({ name: v.string(), values: v.array(v.string()) })),
  attributesTruncated: v.boolean(),
  mapping: v.variant("outcome", [
    v.object({ outcome: v.literal("existing_user"), user: UserSchema }),
    v.object({
      outcome: v.literal("would_provision"),
      wouldProvision: v.object({
        email: v.string(),
        displayName: v.nullable(v.string()),
        attributes: v.record(v.string(), v.unknown()),
      }),
    }),
    v.object({ outcome: v.literal("refused"), reason: v.string() }),
  ]),
});
const TestSchema = v.pipe(
  v.object({
    id: v.string(),
    connectionId: v.string(),
    status: v.picklist(["pending", "started", "done"]),
    createdAt: IsoTimeSchema,
    completedAt: v.nullable(IsoTimeSchema),
    result: v.nullable(ResultSchema),
  }),
  v.title("SamlTestSignIn"),
);

const TAGS = ["Admin: SAML"];
const PARAMS = { connectionId: "The connection's id" };
const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "POST",
    path: BASE,
    summary: "Start a test sign-in through a SAML connection",
    description:
      "Answers a single-use start URL (open it in the administrator's browser): a real round trip through the IdP that opens no session and provisions nobody, then back to `returnTo` (the hosted pages' origin rule). Read the result with GET.",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    body: StartTestSchema,
    responses: {
      201: {
        description: "The start URL (no-store)",
        body: v.object({ id: v.string(), url: v.string(), expiresAt: IsoTimeSchema }),
      },
      ...errorResponses(400, 401, 403, 404, 413),
    },
  },
  {
    method: "GET",
    path: BASE,
    summary: "The caller's latest test sign-in through a SAML connection",
    description:
      "The NameID and attributes received (bounded: 50 attributes, 10 values, 256 characters) and the svc user they map to: `existing_user`, `would_provision` (just in time) or `refused` with the reason. Only the administrator who ran the test sees it, for an hour.",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    responses: {
      200: { description: "The latest test, or null", body: v.object({ latest: v.nullable(TestSchema) }) },
      ...errorResponses(401, 403, 404),
    },
  },
];

/** The test sign-in routes of the admin API. */
export function testSignInRoutes(s: Saml, tests: TestSignInStore): RouteInstaller {
  const { ctx } = s;
  return documented((app) => {
    app.post(BASE, bodyLimit(8 * 1024), async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      if (scope.principal.act) {
        throw new SvcError("impersonation_forbidden", "This is not allowed while impersonating a user.", 403);
      }
      const body = await parseBody(c, StartTestSchema);
      const connection = await visibleConnection(scope, c.req.param("connectionId"), s.connections);
      const { baseUrl } = ctx.svcConfig.server;
      const returnTo = allowedReturnTo(
        body.returnTo,
        ctx.svcConfig.account.returnToOrigins,
        new URL(baseUrl).origin,
      );
      if (returnTo === null) {
        throw new ValidationError("Invalid request: returnTo is not an allowed URL.");
      }
      if (connection.idpSsoUrl === null) {
        throw new SvcError(
          "saml_no_sso_url",
          "Invalid request: the IdP's metadata names no HTTP-Redirect sign-on URL to test.",
          400,
        );
      }
      const created = await tests.create(connection.id, scope.principal.userId, returnTo);
      c.header("Cache-Control", "no-store");
      return c.json({
        id: created.id,
        url: `${s.urls(connection.id).startUrl}?test=${created.ticket}`,
        expiresAt: created.expiresAt.toISOString(),
      }, 201);
    });

    app.get(BASE, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      const connection = await visibleConnection(scope, c.req.param("connectionId"), s.connections);
      c.header("Cache-Control", "no-store");
      return c.json({ latest: await tests.latest(connection.id, scope.principal.userId) });
    });
  }, OPERATIONS);
}
