/**
 * Service accounts over the admin API (spec 5.5), realm-level, fenced by
 * `svc:global:service-accounts-read` / `-manage` (no organization scope):
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/service-accounts` | list by key (`?offset=&limit=`) |
 * | POST | `/svc-admin/service-accounts` | create `{key, displayName}`: 201 with the `sas_…` secret, shown once |
 * | GET | `/svc-admin/service-accounts/{id}` | read |
 * | POST | `/svc-admin/service-accounts/{id}/rotate-secret` | `{overlapSeconds?}` (default 86400): a new secret; the previous one keeps working through the overlap |
 * | POST | `/svc-admin/service-accounts/{id}/disable`, `/enable` | refuse or allow its logins (and its API keys) at once |
 * | DELETE | `/svc-admin/service-accounts/{id}` | delete; its role assignments go, its API keys are revoked |
 *
 * Secrets are never stored in clear, never in the audit entry, and answers carrying one are
 * `Cache-Control: no-store`.
 *
 * Acting on an account (rotate, disable, enable, delete) needs authority over it
 * (`requireAuthorityOver`: 403 `subject_beyond_authority` unless the caller holds everything the
 * account holds, in every context): a rotation hands the caller the account's whole power, and a
 * holder of only `service-accounts-manage` neither switches off nor deletes (nor switches back
 * on) an account that reaches further than itself, as for users (`manageableUser`).
 *
 * @module
 */
import * as v from "valibot";
import { createServiceAccount, rotateServiceAccountSecret } from "../../core/credentials/service-accounts.ts";
import {
  SERVICE_ACCOUNTS_MANAGE_GLOBAL,
  SERVICE_ACCOUNTS_READ_GLOBAL,
} from "../../core/definitions/permissions/credentials.ts";
import { isUuid } from "../../core/ids.ts";
import type { ServiceAccountRecord } from "../../core/storage/service-accounts.ts";
import type { Storage } from "../../core/storage/storage.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { documented, errorResponses, IsoTimeSchema, type OperationDoc } from "../openapi/operation.ts";
import { noStore } from "../security-headers.ts";
import { parseBody, parseOptionalBody } from "../validate.ts";
import { requireAuthorityOver } from "./authority.ts";
import type { AdminRouteDeps } from "./deps.ts";
import {
  adminMutation,
  asConflict,
  hidden,
  listBody,
  listSchema,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseQuery,
} from "./kit.ts";

const READ = { global: [SERVICE_ACCOUNTS_READ_GLOBAL, SERVICE_ACCOUNTS_MANAGE_GLOBAL] };
const MANAGE = { global: [SERVICE_ACCOUNTS_MANAGE_GLOBAL] };
/** The default overlap of a secret rotation: one day. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400;
const BASE = "/svc-admin/service-accounts";
const ITEM = `${BASE}/:serviceAccountId`;

/** The query of `GET /svc-admin/service-accounts`: a page, optionally searched. */
export const ServiceAccountQuerySchema = v.strictObject({
  search: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, "search is longer than 200 characters"),
      v.description("Case-insensitive part of the key or display name."),
    ),
  ),
  ...PAGE_QUERY_ENTRIES,
});

/** The body of `POST /svc-admin/service-accounts`. */
export const CreateServiceAccountSchema = v.strictObject({
  key: v.pipe(
    v.string("key must be a string"),
    v.regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
      'key must be 1–100 letters, digits, ".", "_" or "-" (no ":" or "/": it is the Basic user name)',
    ),
    v.description("Unique in the realm; the user name of Basic authentication."),
  ),
  displayName: v.pipe(
    v.string("displayName must be a string"),
    v.trim(),
    v.minLength(1, "displayName must not be empty"),
    v.maxLength(200, "displayName is longer than 200 characters"),
  ),
});

/** The optional body of `POST /svc-admin/service-accounts/{id}/rotate-secret`. */
export const RotateServiceAccountSecretSchema = v.strictObject({
  overlapSeconds: v.optional(
    v.pipe(
      v.number("overlapSeconds must be a number"),
      v.integer("overlapSeconds must be a whole number"),
      v.minValue(0, "overlapSeconds must not be negative"),
      v.maxValue(30 * 86_400, "overlapSeconds is above 30 days"),
      v.description("How long the previous secret keeps working (default 86400, one day; 0: not at all)."),
    ),
  ),
});

/** A service account as the API shows it (never a secret or its hash). */
export const ServiceAccountSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    key: v.string(),
    displayName: v.string(),
    disabled: v.boolean(),
    previousSecretExpiresAt: v.pipe(
      v.nullable(IsoTimeSchema),
      v.description("Until when the secret before the last rotation still works; null: it does not."),
    ),
    createdAt: IsoTimeSchema,
  }),
  v.title("ServiceAccount"),
);

/** A service account with its new secret (creation and rotation answers). */
export const ServiceAccountWithSecretSchema = v.pipe(
  v.object({
    ...ServiceAccountSchema.entries,
    secret: v.pipe(v.string(), v.description("The `sas_…` secret, shown this once.")),
  }),
  v.title("ServiceAccountWithSecret"),
);

/** The API view of an account. */
export function serviceAccountView(a: ServiceAccountRecord): v.InferOutput<typeof ServiceAccountSchema> {
  return {
    id: a.id,
    realmId: a.realmId,
    key: a.key,
    displayName: a.displayName,
    disabled: a.disabled,
    previousSecretExpiresAt: a.previousSecretExpiresAt?.toISOString() ?? null,
    createdAt: a.createdAt.toISOString(),
  };
}

function auditView(a: ServiceAccountRecord) {
  const { previousSecretExpiresAt: _p, ...rest } = serviceAccountView(a);
  return rest;
}

const TAGS = ["Admin: service accounts"];
const PARAMS = { serviceAccountId: "The service account id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List the realm's service accounts",
    tags: TAGS,
    permissions: READ.global,
    query: ServiceAccountQuerySchema,
    responses: {
      200: { description: "One page, by key", body: listSchema(ServiceAccountSchema) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Create a service account",
    description: "The answer carries the `sas_…` secret, shown this once (`Cache-Control: no-store`).",
    tags: TAGS,
    permissions: MANAGE.global,
    body: CreateServiceAccountSchema,
    responses: {
      201: { description: "Created", body: ServiceAccountWithSecretSchema },
      ...errorResponses(400, 401, 403),
      409: {
        description: "`service_account_key_taken`: the realm has an account with this key",
        body: errorResponses(409)[409].body,
      },
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read a service account",
    tags: TAGS,
    permissions: READ.global,
    params: PARAMS,
    responses: {
      200: { description: "The account", body: ServiceAccountSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "POST",
    path: `${ITEM}/rotate-secret`,
    summary: "Rotate a service account's secret",
    description:
      "A new `sas_…` secret (shown this once); the previous one keeps working for `overlapSeconds`.",
    tags: TAGS,
    permissions: MANAGE.global,
    params: PARAMS,
    body: RotateServiceAccountSecretSchema,
    bodyRequired: false,
    responses: {
      200: { description: "The account and its new secret", body: ServiceAccountWithSecretSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: `${ITEM}/disable`,
    summary: "Disable a service account",
    description: "Its secret and its API keys stop working at once.",
    tags: TAGS,
    permissions: MANAGE.global,
    params: PARAMS,
    responses: {
      200: { description: "The account", body: ServiceAccountSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "POST",
    path: `${ITEM}/enable`,
    summary: "Enable a service account",
    tags: TAGS,
    permissions: MANAGE.global,
    params: PARAMS,
    responses: {
      200: { description: "The account", body: ServiceAccountSchema },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Delete a service account",
    description: "Its role assignments are deleted and its API keys revoked in the same transaction.",
    tags: TAGS,
    permissions: MANAGE.global,
    params: PARAMS,
    responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
  },
];

/** The service-account routes. */
export function serviceAccountRoutes(deps: AdminRouteDeps) {
  const { storage, snapshots } = deps;

  /** The account of the caller's realm, or 404. */
  const visible = async (scope: FenceScope, id: string, tx: Storage = storage) => {
    const account = isUuid(id) ? await tx.serviceAccounts.get(id) : null;
    if (account === null || account.realmId !== scope.principal.realmId.toLowerCase()) {
      throw hidden("service account");
    }
    return account;
  };

  /**
   * The account of the caller's realm if the caller's authority covers it: 404 when there is no
   * such account, 403 `subject_beyond_authority` when it holds what the caller does not. Asked
   * before the mutation's transaction (the grants are read through the snapshots); the mutation
   * checks again inside that the account still is there.
   */
  const manageable = async (scope: FenceScope, id: string) => {
    const account = await visible(scope, id);
    await requireAuthorityOver(deps, scope, { kind: "ServiceAccount", id: account.id });
    return account;
  };

  return documented((app, appDeps) => {
    app.get(BASE, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const query = parseQuery(c, ServiceAccountQuerySchema);
      const page = pageOf(query);
      const { items, total } = await storage.serviceAccounts.listPage(scope.principal.realmId, {
        ...page,
        search: query.search,
      });
      return c.json(listBody(items.map(serviceAccountView), page, total));
    });

    app.post(BASE, noStore, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseBody(c, CreateServiceAccountSchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const created = await createServiceAccount(tx.serviceAccounts, appDeps.random, {
          realmId: scope.principal.realmId,
          key: body.key,
          displayName: body.displayName,
        }).catch(asConflict);
        await emit({
          kind: "service_account.created",
          occurredAt: appDeps.clock.now(),
          realmId: created.account.realmId,
          data: { serviceAccountId: created.account.id, key: created.account.key },
        });
        return {
          value: created,
          audit: {
            action: "service_account.create",
            target: created.account.id,
            after: auditView(created.account),
          },
        };
      });
      return c.json({ ...serviceAccountView(value.account), secret: value.secret }, 201);
    });

    app.get(ITEM, async (c) => {
      const scope = await fence(c, snapshots, READ);
      return c.json(serviceAccountView(await visible(scope, c.req.param("serviceAccountId"))));
    });

    app.post(`${ITEM}/rotate-secret`, noStore, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseOptionalBody(c, RotateServiceAccountSecretSchema);
      const overlapSeconds = body.overlapSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS;
      const target = await manageable(scope, c.req.param("serviceAccountId"));
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visible(scope, target.id, tx);
        const rotated = await rotateServiceAccountSecret(
          tx.serviceAccounts,
          appDeps.random,
          before.id,
          overlapSeconds * 1000,
        );
        if (rotated === null) throw hidden("service account");
        const previousSecretExpiresAt = rotated.account.previousSecretExpiresAt?.toISOString() ?? null;
        await emit({
          kind: "service_account.secret_rotated",
          occurredAt: appDeps.clock.now(),
          realmId: before.realmId,
          data: { serviceAccountId: before.id, key: before.key, previousSecretExpiresAt },
        });
        return {
          value: rotated,
          audit: {
            action: "service_account.rotate_secret",
            target: before.id,
            before: { previousSecretExpiresAt: before.previousSecretExpiresAt?.toISOString() ?? null },
            after: { overlapSeconds, previousSecretExpiresAt },
          },
        };
      });
      return c.json({ ...serviceAccountView(value.account), secret: value.secret });
    });

    for (const [action, disabled] of [["disable", true], ["enable", false]] as const) {
      app.post(`${ITEM}/${action}`, async (c) => {
        const scope = await fence(c, snapshots, MANAGE);
        const target = await manageable(scope, c.req.param("serviceAccountId"));
        const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
          const before = await visible(scope, target.id, tx);
          if (before.disabled === disabled) return { value: before, audit: null };
          await tx.serviceAccounts.setDisabled(before.id, disabled);
          const after = { ...before, disabled };
          await emit({
            kind: `service_account.${disabled ? "disabled" : "enabled"}`,
            occurredAt: appDeps.clock.now(),
            realmId: before.realmId,
            data: { serviceAccountId: before.id, key: before.key },
          });
          return {
            value: after,
            audit: {
              action: `service_account.${action}`,
              target: before.id,
              before: auditView(before),
              after: auditView(after),
            },
          };
        });
        return c.json(serviceAccountView(value));
      });
    }

    app.delete(ITEM, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const target = await manageable(scope, c.req.param("serviceAccountId"));
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await visible(scope, target.id, tx);
        const assignments = await tx.roles.listAssignmentsForPrincipal("ServiceAccount", before.id);
        for (const assignment of assignments) await tx.roles.unassign(assignment.id);
        const keysRevoked = await tx.apiKeys.revokeAllForOwner("ServiceAccount", before.id);
        if (!await tx.serviceAccounts.delete(before.id)) throw hidden("service account");
        await emit({
          kind: "service_account.deleted",
          occurredAt: appDeps.clock.now(),
          realmId: before.realmId,
          data: { serviceAccountId: before.id, key: before.key },
        });
        return {
          value: before.id,
          audit: {
            action: "service_account.delete",
            target: before.id,
            before: { ...auditView(before), roleAssignments: assignments.length },
            after: { apiKeysRevoked: keysRevoked },
          },
        };
      });
      await snapshots.invalidateUser(value);
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
