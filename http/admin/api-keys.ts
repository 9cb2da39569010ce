/**
 * API keys over the admin API (spec 5.5):
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/api-keys` | list, newest first (`?ownerKind=&ownerId=&offset=&limit=`); never the token |
 * | POST | `/svc-admin/api-keys` | create `{ownerKind, ownerId, name, expiresAt?}`: 201 with the `sak_…` token, shown once |
 * | POST | `/svc-admin/api-keys/{id}/revoke` | revoke (204); the first revocation time is kept |
 *
 * Fences: `svc:global:api-keys-read` / `-manage` cover every key of the realm.
 * `svc:org:api-keys-read` / `-manage` cover the keys owned by users who are members of the
 * caller's organization: such an administrator lists them and revokes them; keys of service
 * accounts and of other users are invisible (404). Creating a key is global only: a key acts as
 * its owner with everything the owner holds, so minting one for someone else is acting as them.
 *
 * Revoking an unknown id is a no-op answered 204 (spec 5.5) for a realm-wide caller; for an
 * organization administrator an unknown key and another organization's key are the same 404.
 *
 * The authority rule (`requireAuthorityOver`):
 * - creating a key for an owner needs authority over the owner (403 `subject_beyond_authority`):
 *   the token carries the owner's whole power, so a holder of only `api-keys-manage` mints none
 *   for an account that reaches further than itself (one's own keys need nothing);
 * - an organization administrator revokes only keys of users it may manage (as `manageableUser`:
 *   members of its organization and of no other, within its authority); any other key is the
 *   same 404 as another organization's;
 * - a realm-wide revocation asks nothing more: it only takes power away and hands the caller
 *   none, and whoever answers a leaked key must be able to end it at once;
 * - listing shows keys' metadata, never a token: an organization administrator lists the keys
 *   of its members (the fence of reading users), a realm-wide reader every key.
 *
 * @module
 */
import * as v from "valibot";
import { BreakGlassManagedError } from "../../core/break-glass/guard.ts";
import { createApiKey } from "../../core/credentials/api-keys.ts";
import {
  API_KEYS_MANAGE_GLOBAL,
  API_KEYS_MANAGE_ORG,
  API_KEYS_READ_GLOBAL,
  API_KEYS_READ_ORG,
} from "../../core/definitions/permissions/credentials.ts";
import { ValidationError } from "../../core/errors.ts";
import { isUuid, UUID_PATTERN } from "../../core/ids.ts";
import { type ApiKeyRecord, isApiKeyActive } from "../../core/storage/api-keys.ts";
import type { Storage } from "../../core/storage/storage.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { documented, errorResponses, IsoTimeSchema, type OperationDoc } from "../openapi/operation.ts";
import { noStore } from "../security-headers.ts";
import { parseBody } from "../validate.ts";
import { requireAuthorityOver, SubjectBeyondAuthorityError } from "./authority.ts";
import type { AdminRouteDeps } from "./deps.ts";
import {
  adminMutation,
  hidden,
  listBody,
  listSchema,
  PAGE_QUERY_ENTRIES,
  pageOf,
  parseQuery,
} from "./kit.ts";

const READ = {
  global: [API_KEYS_READ_GLOBAL, API_KEYS_MANAGE_GLOBAL],
  org: [API_KEYS_READ_ORG, API_KEYS_MANAGE_ORG],
};
const CREATE = { global: [API_KEYS_MANAGE_GLOBAL] };
const REVOKE = { global: [API_KEYS_MANAGE_GLOBAL], org: [API_KEYS_MANAGE_ORG] };
const BASE = "/svc-admin/api-keys";
const MAX_LIFETIME_MS = 10 * 366 * 86_400_000;

const ownerKind = v.picklist(["User", "ServiceAccount"], 'ownerKind must be "User" or "ServiceAccount"');
const ownerId = v.pipe(v.string("ownerId must be a string"), v.regex(UUID_PATTERN, "ownerId must be a UUID"));

/** The query of `GET /svc-admin/api-keys`. */
export const ListApiKeysQuerySchema = v.strictObject({
  ownerKind: v.optional(v.pipe(ownerKind, v.description("Only keys of this owner kind."))),
  ownerId: v.optional(v.pipe(ownerId, v.description("Only keys of this owner (give ownerKind too)."))),
  ...PAGE_QUERY_ENTRIES,
});

/** The body of `POST /svc-admin/api-keys`. */
export const CreateApiKeySchema = v.strictObject({
  ownerKind,
  ownerId,
  name: v.pipe(
    v.string("name must be a string"),
    v.trim(),
    v.minLength(1, "name must not be empty"),
    v.maxLength(200, "name is longer than 200 characters"),
  ),
  expiresAt: v.optional(
    v.nullable(
      v.pipe(
        v.string("expiresAt must be an ISO 8601 time"),
        v.isoTimestamp("expiresAt must be an ISO 8601 time such as 2030-01-01T00:00:00Z"),
        v.description("When the key stops working; absent or null: never."),
      ),
    ),
  ),
});

/** An API key as the API shows it (never the token or its hash). */
export const ApiKeySchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    ownerKind: v.picklist(["User", "ServiceAccount"]),
    ownerId: v.string(),
    name: v.string(),
    createdAt: IsoTimeSchema,
    expiresAt: v.nullable(IsoTimeSchema),
    revokedAt: v.nullable(IsoTimeSchema),
    lastUsedAt: v.pipe(v.nullable(IsoTimeSchema), v.description("Recorded best effort.")),
    active: v.pipe(v.boolean(), v.description("Neither revoked nor expired.")),
  }),
  v.title("ApiKey"),
);

/** An API key with its token (the creation answer). */
export const ApiKeyWithTokenSchema = v.pipe(
  v.object({
    ...ApiKeySchema.entries,
    token: v.pipe(v.string(), v.description("The `sak_…` token, shown this once.")),
  }),
  v.title("ApiKeyWithToken"),
);

/** The API view of a key at `now`. */
export function apiKeyView(k: ApiKeyRecord, now: number): v.InferOutput<typeof ApiKeySchema> {
  return {
    id: k.id,
    realmId: k.realmId,
    ownerKind: k.ownerKind,
    ownerId: k.ownerId,
    name: k.name,
    createdAt: k.createdAt.toISOString(),
    expiresAt: k.expiresAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    active: isApiKeyActive(k, now),
  };
}

function auditView(k: ApiKeyRecord) {
  return {
    id: k.id,
    ownerKind: k.ownerKind,
    ownerId: k.ownerId,
    name: k.name,
    expiresAt: k.expiresAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
  };
}

const TAGS = ["Admin: API keys"];

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List API keys",
    description:
      "Newest first. An organization administrator sees the keys of users of its organization only.",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    query: ListApiKeysQuerySchema,
    responses: {
      200: { description: "One page", body: listSchema(ApiKeySchema) },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Create an API key for a user or a service account",
    description:
      "The answer carries the `sak_…` token, shown this once (`Cache-Control: no-store`). The key acts as its owner.",
    tags: TAGS,
    permissions: CREATE.global,
    body: CreateApiKeySchema,
    responses: {
      201: { description: "Created", body: ApiKeyWithTokenSchema },
      ...errorResponses(400, 401, 403, 404),
    },
  },
  {
    method: "POST",
    path: `${BASE}/:apiKeyId/revoke`,
    summary: "Revoke an API key",
    description:
      "Keeps the first revocation time. An unknown id is a no-op (204) for a realm-wide caller; an organization administrator gets 404 for a key outside its organization.",
    tags: TAGS,
    permissions: [...REVOKE.global, ...REVOKE.org],
    params: { apiKeyId: "The API key id" },
    responses: { 204: { description: "Revoked (or already revoked)" }, ...errorResponses(401, 403, 404) },
  },
];

/** The API-key routes. */
export function apiKeyRoutes(deps: AdminRouteDeps) {
  const { storage, snapshots } = deps;

  /** Whether the scope covers keys of this owner. */
  const coversOwner = async (
    scope: FenceScope,
    kind: "User" | "ServiceAccount",
    id: string,
    tx: Storage = storage,
  ): Promise<boolean> => {
    const realmId = scope.principal.realmId.toLowerCase();
    if (kind === "ServiceAccount") {
      if (!scope.global) return false;
      const account = await tx.serviceAccounts.get(id);
      return account !== null && account.realmId === realmId;
    }
    const user = await tx.users.get(id);
    if (user === null || user.realmId !== realmId || user.anonymizedAt !== null) return false;
    return scope.global || (scope.orgId !== null && await tx.organizations.isMember(scope.orgId, user.id));
  };

  /**
   * For an organization administrator: whether it may revoke the keys of user `ownerId`, a
   * member of its organization and of no other, within its authority.
   */
  const mayRevokeInOrg = async (scope: FenceScope, ownerId: string): Promise<boolean> => {
    const orgs = await storage.organizations.listOrgsOfUser(ownerId);
    if (orgs.some((org) => org.id.toLowerCase() !== scope.orgId?.toLowerCase())) return false;
    try {
      await requireAuthorityOver(deps, scope, { kind: "User", id: ownerId });
      return true;
    } catch (err) {
      if (err instanceof SubjectBeyondAuthorityError) return false;
      throw err;
    }
  };

  return documented((app, appDeps) => {
    app.get(BASE, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const query = parseQuery(c, ListApiKeysQuerySchema);
      if (query.ownerId !== undefined && query.ownerKind === undefined) {
        throw new ValidationError("Give ownerKind with ownerId.", { field: "ownerKind" });
      }
      if (query.ownerId !== undefined && !await coversOwner(scope, query.ownerKind!, query.ownerId)) {
        throw hidden("owner");
      }
      if (!scope.global && query.ownerKind === "ServiceAccount") throw hidden("owner");
      const page = pageOf(query);
      const { items, total } = await storage.apiKeys.listPage(scope.principal.realmId, {
        ownerKind: query.ownerKind,
        ownerId: query.ownerId?.toLowerCase(),
        memberOfOrgId: scope.global ? undefined : scope.orgId!,
      }, page);
      const now = appDeps.clock.now();
      return c.json(listBody(items.map((k) => apiKeyView(k, now)), page, total));
    });

    app.post(BASE, noStore, async (c) => {
      const scope = await fence(c, snapshots, CREATE);
      const body = await parseBody(c, CreateApiKeySchema);
      const now = appDeps.clock.now();
      const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
      if (expiresAt !== null && (expiresAt.getTime() <= now || expiresAt.getTime() > now + MAX_LIFETIME_MS)) {
        throw new ValidationError("expiresAt must be in the future, within ten years.", {
          field: "expiresAt",
        });
      }
      // The token acts with the owner's whole power: the caller must hold all of it.
      await requireAuthorityOver(deps, scope, { kind: body.ownerKind, id: body.ownerId.toLowerCase() });
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const id = body.ownerId.toLowerCase();
        if (!await coversOwner(scope, body.ownerKind, id, tx)) throw hidden("owner");
        // A break-glass account owns nothing that outlives the rotation of its password.
        if (body.ownerKind === "User" && (await tx.users.get(id))?.isBreakGlass) {
          throw new BreakGlassManagedError("credential");
        }
        const created = await createApiKey(tx.apiKeys, appDeps.random, {
          realmId: scope.principal.realmId.toLowerCase(),
          ownerKind: body.ownerKind,
          ownerId: id,
          name: body.name,
          expiresAt,
        });
        await emit({
          kind: "api_key.created",
          occurredAt: now,
          realmId: created.key.realmId,
          userId: body.ownerKind === "User" ? id : null,
          data: { apiKeyId: created.key.id, ownerKind: body.ownerKind, ownerId: id, name: body.name },
        });
        return {
          value: created,
          audit: { action: "api_key.create", target: created.key.id, after: auditView(created.key) },
        };
      });
      return c.json({ ...apiKeyView(value.key, now), token: value.token }, 201);
    });

    app.post(`${BASE}/:apiKeyId/revoke`, async (c) => {
      const scope = await fence(c, snapshots, REVOKE);
      const id = c.req.param("apiKeyId");
      if (!scope.global && isUuid(id)) {
        const key = await storage.apiKeys.get(id);
        if (key !== null && key.ownerKind === "User" && !await mayRevokeInOrg(scope, key.ownerId)) {
          throw hidden("API key");
        }
      }
      await adminMutation(deps, scope, async ({ tx, emit }) => {
        const key = isUuid(id) ? await tx.apiKeys.get(id) : null;
        const visible = key !== null && key.realmId === scope.principal.realmId.toLowerCase() &&
          await coversOwner(scope, key.ownerKind, key.ownerId, tx);
        if (!visible) {
          // Spec 5.5: revoking an unknown key is a no-op; an organization administrator cannot
          // tell an unknown key from another organization's, both are 404.
          if (scope.global) return { value: null, audit: null };
          throw hidden("API key");
        }
        if (key.revokedAt !== null) return { value: null, audit: null };
        const after = await tx.apiKeys.revoke(key.id);
        await emit({
          kind: "api_key.revoked",
          occurredAt: appDeps.clock.now(),
          realmId: key.realmId,
          userId: key.ownerKind === "User" ? key.ownerId : null,
          data: { apiKeyId: key.id, ownerKind: key.ownerKind, ownerId: key.ownerId, name: key.name },
        });
        return {
          value: null,
          audit: {
            action: "api_key.revoke",
            target: key.id,
            before: auditView(key),
            after: after === null ? null : auditView(after),
          },
        };
      });
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
