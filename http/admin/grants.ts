/**
 * Grants in the admin API (roles and policies alike): the body schema, validation with the
 * authorization engine's own grammar and condition parser (so that what the API accepts is
 * exactly what a snapshot compiles), and the JSON view.
 *
 * A grant the engine refuses answers 400 `invalid_request` with the engine's message, the field
 * (`grants.1.pattern`, `condition`…) in `details.issues` like any validation error, and the
 * engine's details: `details.engineCode` (`permission_format`, `condition_format`),
 * `details.reason` for a pattern, `details.path` (the node inside the condition document) for a
 * condition.
 *
 * {@link grantRoutes} serves the grant routes of roles and policies (add, look up, remove).
 *
 * @module
 */
import * as v from "valibot";
import {
  ConditionFormatError,
  parseConditionDocument,
  parsePermissionPattern,
} from "../../core/authz/mod.ts";
import { PermissionFormatError } from "../../core/authz/mod.ts";
import { SvcError } from "../../core/errors.ts";
import type { SvcEvent } from "../../core/events/sink.ts";
import type { Grant, GrantInput, RoleStore } from "../../core/storage/roles.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { SvcApp } from "../app.ts";
import { fence, type FenceScope } from "../auth/fence.ts";
import { errorResponses, type OperationDoc } from "../openapi/operation.ts";
import { parseBody } from "../validate.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { escalationGuard } from "./escalation.ts";
import { evictHolders, type Holders } from "./eviction.ts";
import { adminMutation, asConflict, hidden, setVersionTag } from "./kit.ts";
import { ROLES_MANAGE, ROLES_READ } from "./role-scope.ts";

/** Grants per role or policy in one request. */
export const MAX_GRANTS_PER_REQUEST = 100;

/** One grant as the API takes it. */
export const GrantBodySchema = v.strictObject({
  pattern: v.pipe(
    v.string("pattern must be a string"),
    v.minLength(1, "pattern must not be empty"),
    v.maxLength(200, "pattern is longer than 200 characters"),
    v.description("A permission pattern `service:scope:action` (`*` allowed per the grammar)."),
  ),
  effect: v.picklist(["Allow", "Deny"], "effect must be Allow or Deny"),
  condition: v.nullish(
    v.pipe(
      v.record(v.string(), v.unknown(), "condition must be a condition document (an object)"),
      v.description("A version 1 condition document `{version: 1, condition: {...}}`."),
    ),
  ),
  teamIds: v.optional(
    v.pipe(
      v.array(v.pipe(v.string("each team id must be a string"), v.minLength(1), v.maxLength(100))),
      v.maxLength(100, "teamIds has more than 100 entries"),
      v.description("Restricts the grant to resources of these teams."),
    ),
  ),
});

/** A grant body after validation. */
export type GrantBody = v.InferOutput<typeof GrantBodySchema>;

/** A list of grants in a creation body. */
export const GrantListSchema = v.pipe(
  v.array(GrantBodySchema, "grants must be a list"),
  v.maxLength(MAX_GRANTS_PER_REQUEST, `grants has more than ${MAX_GRANTS_PER_REQUEST} entries`),
);

/** The body of a lookup by logical identity (pattern, effect, condition). */
export const GrantLookupSchema = v.strictObject({
  pattern: GrantBodySchema.entries.pattern,
  effect: GrantBodySchema.entries.effect,
  condition: GrantBodySchema.entries.condition,
});

/** A grant as the API shows it. */
export const GrantViewSchema = v.pipe(
  v.object({
    id: v.string(),
    pattern: v.string(),
    effect: v.picklist(["Allow", "Deny"]),
    condition: v.nullable(v.record(v.string(), v.unknown())),
    teamIds: v.array(v.string()),
    orgId: v.nullable(v.string()),
    createdAt: v.string(),
  }),
  v.title("AdminGrant"),
);

/** The view of a stored grant. */
export function grantView(grant: Grant): v.InferOutput<typeof GrantViewSchema> {
  return {
    id: grant.id,
    pattern: grant.pattern,
    effect: grant.effect,
    condition: (grant.condition ?? null) as Record<string, unknown> | null,
    teamIds: [...grant.teamIds],
    orgId: grant.orgId,
    createdAt: grant.createdAt.toISOString(),
  };
}

/** The audit view of a grant (what it allows, not when). */
export function grantAuditView(grant: Grant) {
  return {
    id: grant.id,
    pattern: grant.pattern,
    effect: grant.effect,
    condition: grant.condition ?? null,
    teamIds: [...grant.teamIds],
  };
}

/**
 * Checks one grant with the engine: the pattern with `parsePermissionPattern`, the condition with
 * `parseConditionDocument`. `field` is where the grant sits in the body (`grants.2`, or "" for a
 * body that is the grant). Throws 400 `invalid_request` naming the field and the engine's reason.
 */
export function checkGrant(grant: { pattern: string; condition?: unknown }, field: string): void {
  const at = (name: string) => field === "" ? name : `${field}.${name}`;
  try {
    parsePermissionPattern(grant.pattern);
  } catch (error) {
    if (!(error instanceof PermissionFormatError)) throw error;
    throw engineRefusal(at("pattern"), error.message, { engineCode: error.code, reason: error.reason });
  }
  if (grant.condition === undefined || grant.condition === null) return;
  try {
    parseConditionDocument(grant.condition);
  } catch (error) {
    if (!(error instanceof ConditionFormatError)) throw error;
    throw engineRefusal(at("condition"), error.message, { engineCode: error.code, path: error.path });
  }
}

/** Checks every grant of a list (fields `grants.<index>`). */
export function checkGrants(grants: readonly GrantBody[], field = "grants"): void {
  grants.forEach((grant, index) => checkGrant(grant, `${field}.${index}`));
}

function engineRefusal(path: string, message: string, details: Record<string, unknown>): SvcError {
  return new SvcError("invalid_request", `Invalid request: ${path}: ${message}`, 400, {
    issues: [{ path, message }],
    field: path,
    ...details,
  });
}

/** The storage input of a validated grant body. */
export function grantInput(grant: GrantBody): GrantInput {
  return {
    pattern: grant.pattern,
    effect: grant.effect,
    condition: grant.condition ?? null,
    teamIds: grant.teamIds ?? [],
  };
}

/** The grant methods roles and policies share (`grantMethods` in storage). */
export type GrantStore = Pick<
  RoleStore,
  "addGrant" | "removeGrant" | "listGrants" | "findGrantByLogicalIdentity"
>;

/** The event a change of an owner's grants emits (built by the route module, which knows its fields). */
export type GrantEvent<O> = (
  scope: FenceScope,
  kind: string,
  owner: O,
  data: Record<string, unknown>,
) => SvcEvent;

/** What {@link grantRoutes} serves the grants of: roles or policies. */
export interface GrantRoutesSpec<O extends { readonly id: string; readonly orgId: string | null }> {
  /**
   * `role` or `policy`: the path (`/svc-admin/roles/{roleId}/grants`,
   * `/svc-admin/policies/{policyId}/grants`), the audit actions (`{kind}.grant.add`,
   * `{kind}.grant.remove`) and the words of the OpenAPI document.
   */
  readonly kind: "role" | "policy";
  /** The event kinds of an added and of a removed grant. */
  readonly events: { readonly added: string; readonly removed: string };
  /** The owner the caller may see, else 404. */
  visible(tx: Storage, scope: FenceScope, id: string): Promise<O>;
  /** The grants of a storage's roles or policies. */
  grants(tx: Storage): GrantStore;
  /** The users whose snapshots a change of the owner's grants makes stale. */
  holders(tx: Storage, owner: O): Promise<Holders>;
  /** Runs after each change of the grants, before the holders are read; its version becomes the ETag. */
  changed?(tx: Storage, owner: O): Promise<{ readonly version: number }>;
  /** How the OpenAPI document describes the routes. */
  readonly docs: {
    readonly tags: string[];
    /** The response headers of an added grant. */
    readonly addHeaders?: Record<string, string>;
    readonly lookupDescription?: string;
  };
}

/**
 * The grant routes of roles or policies (`POST /svc-admin/{kind}s/{id}/grants`, `…/grants/lookup`,
 * `DELETE …/grants/{grantId}`): a grant is checked like the grants of a create and guarded
 * against escalation; every change is audited, announced and evicts the holders' snapshots.
 */
export function grantRoutes<O extends { readonly id: string; readonly orgId: string | null }>(
  deps: AdminRouteDeps,
  spec: GrantRoutesSpec<O>,
): { install(app: SvcApp, event: GrantEvent<O>): void; operations: OperationDoc[] } {
  const { storage, snapshots } = deps;
  const { kind } = spec;
  const idKey = `${kind}Id`;
  const path = `/svc-admin/${kind === "role" ? "roles" : "policies"}/:${idKey}/grants`;

  const install = (app: SvcApp, event: GrantEvent<O>) => {
    app.post(path, async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      const body = await parseBody(c, GrantBodySchema);
      checkGrant(body, "");
      const target = await spec.visible(storage, scope, c.req.param(idKey)!);
      const guard = await escalationGuard(deps, scope, target.orgId);
      guard.refuse([body.pattern]);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const owner = await spec.visible(tx, scope, target.id);
        const grant = await spec.grants(tx).addGrant(owner.id, grantInput(body)).catch(asConflict);
        const after = await spec.changed?.(tx, owner);
        const holders = await spec.holders(tx, owner);
        await emit(event(scope, spec.events.added, owner, { grantId: grant.id, pattern: grant.pattern }));
        return {
          value: { grant, holders, version: after?.version },
          audit: {
            action: `${kind}.grant.add`,
            target: owner.id,
            orgId: owner.orgId,
            after: grantAuditView(grant),
          },
        };
      });
      await evictHolders(snapshots, value.holders);
      if (value.version !== undefined) setVersionTag(c, value.version);
      return c.json(grantView(value.grant), 201);
    });

    app.post(`${path}/lookup`, async (c) => {
      const scope = await fence(c, snapshots, ROLES_READ);
      const body = await parseBody(c, GrantLookupSchema);
      const owner = await spec.visible(storage, scope, c.req.param(idKey)!);
      const grant = await spec.grants(storage).findGrantByLogicalIdentity(
        owner.id,
        body.pattern,
        body.effect,
        body.condition ?? null,
      );
      if (grant === null) throw hidden("grant");
      return c.json(grantView(grant));
    });

    app.delete(`${path}/:grantId`, async (c) => {
      const scope = await fence(c, snapshots, ROLES_MANAGE);
      // Removing an Allow hands out nothing; removing a Deny hands its holders what it denied:
      // only by a caller who may add that pattern as a grant there (the escalation guard).
      const target = await spec.visible(storage, scope, c.req.param(idKey)!);
      const removing = (await spec.grants(storage).listGrants(target.id))
        .find((g) => g.id === c.req.param("grantId").toLowerCase());
      if (removing?.effect === "Deny") {
        (await escalationGuard(deps, scope, removing.orgId ?? target.orgId)).refuse([removing.pattern]);
      }
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const owner = await spec.visible(tx, scope, c.req.param(idKey)!);
        const grantId = c.req.param("grantId").toLowerCase();
        const before = (await spec.grants(tx).listGrants(owner.id)).find((g) => g.id === grantId);
        if (before === undefined || !(await spec.grants(tx).removeGrant(owner.id, before.id))) {
          throw hidden("grant");
        }
        const after = await spec.changed?.(tx, owner);
        const holders = await spec.holders(tx, owner);
        await emit(event(scope, spec.events.removed, owner, { grantId: before.id, pattern: before.pattern }));
        return {
          value: { holders, version: after?.version },
          audit: {
            action: `${kind}.grant.remove`,
            target: owner.id,
            orgId: owner.orgId,
            before: grantAuditView(before),
          },
        };
      });
      await evictHolders(snapshots, value.holders);
      if (value.version !== undefined) setVersionTag(c, value.version);
      return c.body(null, 204);
    });
  };

  const params = { [idKey]: `The ${kind}'s id.` };
  const operations: OperationDoc[] = [
    {
      method: "POST",
      path,
      summary: `Add a grant to a ${kind}`,
      tags: spec.docs.tags,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      params,
      body: GrantBodySchema,
      responses: {
        201: {
          description: "The grant",
          body: GrantViewSchema,
          ...(spec.docs.addHeaders === undefined ? {} : { headers: spec.docs.addHeaders }),
        },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "POST",
      path: `${path}/lookup`,
      summary: `Find a ${kind}'s grant by its logical identity`,
      ...(spec.docs.lookupDescription === undefined ? {} : { description: spec.docs.lookupDescription }),
      tags: spec.docs.tags,
      permissions: [...ROLES_READ.global, ...ROLES_READ.org],
      params,
      body: GrantLookupSchema,
      responses: {
        200: { description: "The grant", body: GrantViewSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "DELETE",
      path: `${path}/:grantId`,
      summary: `Remove a grant from a ${kind}`,
      tags: spec.docs.tags,
      permissions: [...ROLES_MANAGE.global, ...ROLES_MANAGE.org],
      params: { ...params, grantId: "The grant's id." },
      responses: { 204: { description: "Removed" }, ...errorResponses(401, 403, 404) },
    },
  ];
  return { install, operations };
}
