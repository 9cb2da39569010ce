/**
 * What the directory admin routes share: path ids, targets the caller may see (404 otherwise),
 * the answers' shapes (views and their schemas) and the common body fields.
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import { SvcError } from "../../../core/errors.ts";
import { isUuid, UUID_PATTERN } from "../../../core/ids.ts";
import type { Group, GroupMember } from "../../../core/storage/groups.ts";
import type { Organization, OrgMembership } from "../../../core/storage/organizations.ts";
import type { Team, TeamMember } from "../../../core/storage/teams.ts";
import type { Storage } from "../../../core/storage/storage.ts";
import type { RouteInstaller } from "../../app.ts";
import { fence, type FenceScope } from "../../auth/fence.ts";
import { errorResponses, type OperationDoc } from "../../openapi/operation.ts";
import type { SvcEnv } from "../../request-id.ts";
import { parseBody } from "../../validate.ts";
import { handedOutBy, requireMayHandOutGroup, requireMayLiftDenies } from "../authority.ts";
import type { AdminRouteDeps } from "../deps.ts";
import {
  adminMutation,
  asConflict,
  hidden,
  listBodyOf,
  listSchema,
  pageOf,
  PageQuerySchema,
  parseQuery,
  requireVisible,
} from "../kit.ts";

/** The path parameter `name` as an id; anything but a UUID names nothing (404). */
export function pathId(c: Context<SvcEnv>, name: string, what: string): string {
  const id = c.req.param(name);
  if (!isUuid(id)) throw hidden(what);
  return id.toLowerCase();
}

/** Whether a record of `realmId` belongs to the caller's realm. */
export function inRealm(scope: FenceScope, realmId: string): boolean {
  return realmId.toLowerCase() === scope.principal.realmId.toLowerCase();
}

/** The organization of the caller's realm that the scope covers, else 404. */
export async function visibleOrg(storage: Storage, scope: FenceScope, orgId: string): Promise<Organization> {
  const org = await storage.organizations.get(orgId);
  if (org === null || !inRealm(scope, org.realmId)) throw hidden("organization");
  requireVisible(scope, org.id, "organization");
  return org;
}

/** The team the scope covers (its organization's), else 404. */
export async function visibleTeam(storage: Storage, scope: FenceScope, teamId: string): Promise<Team> {
  const team = await storage.teams.get(teamId);
  if (team === null || !inRealm(scope, team.realmId)) throw hidden("team");
  requireVisible(scope, team.orgId, "team");
  return team;
}

/** The group the scope covers (realm-level groups: global scopes only), else 404. */
export async function visibleGroup(storage: Storage, scope: FenceScope, groupId: string): Promise<Group> {
  const group = await storage.groups.get(groupId);
  if (group === null || !inRealm(scope, group.realmId)) throw hidden("group");
  requireVisible(scope, group.orgId, "group");
  return group;
}

/**
 * The user of the caller's realm named in a body, else 404 `not_found` ("No such user"): an
 * organization admin may only name members of their organization (`orgId`), so that nobody else's
 * existence leaks through these routes.
 */
export async function visibleUser(
  storage: Storage,
  scope: FenceScope,
  userId: string,
  orgId: string | null,
): Promise<string> {
  const user = await storage.users.get(userId);
  if (user === null || !inRealm(scope, user.realmId)) throw hidden("user");
  if (!scope.global && (orgId === null || !(await storage.organizations.isMember(orgId, user.id)))) {
    throw hidden("user");
  }
  return user.id;
}

/** An id in a body. */
export const IdField = (name: string) =>
  v.pipe(v.string(`${name} must be a string`), v.regex(UUID_PATTERN, `${name} must be a UUID`));

/** A display name: 1–200 characters after trimming. */
export const DisplayNameField = v.pipe(
  v.string("displayName must be a string"),
  v.trim(),
  v.minLength(1, "displayName must not be empty"),
  v.maxLength(200, "displayName is longer than 200 characters"),
);

/** A machine name or key: letters, digits, `.`, `_`, `-`, 1–100 characters. */
export const KeyField = (name: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, `${name} must be 1–100 letters, digits, '.', '_' or '-'`),
  );

/** The body naming a user (members add). */
export const UserRefSchema = v.strictObject({ userId: IdField("userId") });

const date = v.pipe(v.string(), v.description("ISO 8601 time."));

/** An organization as the API shows it. */
export function orgView(o: Organization) {
  return {
    id: o.id,
    realmId: o.realmId,
    name: o.name,
    displayName: o.displayName,
    status: o.status,
    defaultIdentityProviderId: o.defaultIdentityProviderId,
    createdAt: o.createdAt.toISOString(),
    version: o.version,
  };
}

/** The schema of {@link orgView}. */
export const OrganizationSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    name: v.string(),
    displayName: v.string(),
    status: v.string(),
    defaultIdentityProviderId: v.nullable(v.string()),
    createdAt: date,
    version: v.pipe(v.number(), v.description("Bumped by every change; the ETag is its quoted value.")),
  }),
  v.title("Organization"),
);

/** A membership as the API shows it. */
export function membershipView(m: OrgMembership) {
  return { orgId: m.orgId, userId: m.userId, joinedAt: m.createdAt.toISOString() };
}

/** The schema of {@link membershipView}. */
export const OrganizationMemberSchema = v.pipe(
  v.object({ orgId: v.string(), userId: v.string(), joinedAt: date }),
  v.title("OrganizationMember"),
);

/** A team as the API shows it. */
export function teamView(t: Team) {
  return { id: t.id, realmId: t.realmId, orgId: t.orgId, name: t.name, createdAt: t.createdAt.toISOString() };
}

/** The schema of {@link teamView}. */
export const TeamSchema = v.pipe(
  v.object({ id: v.string(), realmId: v.string(), orgId: v.string(), name: v.string(), createdAt: date }),
  v.title("Team"),
);

/** A group as the API shows it. */
export function groupView(g: Group) {
  return {
    id: g.id,
    realmId: g.realmId,
    orgId: g.orgId,
    key: g.key,
    displayName: g.displayName,
    createdAt: g.createdAt.toISOString(),
  };
}

/** The schema of {@link groupView}. */
export const GroupSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    orgId: v.pipe(v.nullable(v.string()), v.description("Null: a realm-level group.")),
    key: v.string(),
    displayName: v.string(),
    createdAt: date,
  }),
  v.title("Group"),
);

/** A team or group member as the API shows it. */
export function memberView(m: TeamMember | GroupMember) {
  return { userId: m.userId, addedAt: m.createdAt.toISOString() };
}

/** The schema of {@link memberView}. */
export const MemberSchema = v.pipe(
  v.object({ userId: v.string(), addedAt: date }),
  v.title("DirectoryMember"),
);

/** The permissions of a directory capability: realm-wide ids and organization-level ids. */
export interface DirectoryFence {
  readonly global: string[];
  readonly org: string[];
}

/** Every permission id of a fence, for the OpenAPI document. */
export const permissionsOf = (fence: DirectoryFence): string[] => [...fence.global, ...fence.org];

/** The user is not a member of the team's (or group's) organization. */
export class NotOrganizationMemberError extends SvcError {
  constructor() {
    super("not_organization_member", "Only members of the organization can join its teams and groups.", 409);
  }
}

/** What {@link teamOrGroupMemberRoutes} serves the members of: teams or groups. */
export interface TeamOrGroupMemberRoutesSpec {
  /**
   * `team` or `group`: the path (`/svc-admin/{kind}s/{kind}Id/members`), the event kinds
   * (`{kind}.member_added`…), the audit actions (`{kind}.member.add`…) and the id key of their data.
   */
  readonly kind: "team" | "group";
  readonly read: DirectoryFence;
  readonly manage: DirectoryFence;
  /** The team or group the scope covers, else 404. */
  visible(
    storage: Storage,
    scope: FenceScope,
    id: string,
  ): Promise<{ id: string; realmId: string; orgId: string | null }>;
  /** The members of a storage's teams or groups. */
  members(storage: Storage): {
    listMembers(id: string): Promise<Array<TeamMember | GroupMember>>;
    addMember(id: string, userId: string): Promise<TeamMember | GroupMember>;
    removeMember(id: string, userId: string): Promise<boolean>;
  };
  /** How the OpenAPI document describes the routes. */
  readonly docs: {
    readonly tags: string[];
    readonly listTitle: string;
    readonly addSummary: string;
    readonly addDescription: string;
  };
}

/**
 * The member routes of teams or groups (`GET`, `POST /svc-admin/{kind}s/{id}/members`,
 * `DELETE /svc-admin/{kind}s/{id}/members/{userId}`): a new member must be a user the caller may
 * name and, when the team or group belongs to an organization, a member of it (409
 * `not_organization_member`); joining a group hands out its roles' grants, so the caller must be
 * able to hand them out (403 `escalation_refused`, the authority rule); every change is audited, announced and evicts the member's
 * subject snapshot.
 */
export function teamOrGroupMemberRoutes(
  deps: AdminRouteDeps,
  spec: TeamOrGroupMemberRoutesSpec,
): { install: RouteInstaller; operations: OperationDoc[] } {
  const { storage, snapshots } = deps;
  const { kind, read, manage } = spec;
  const idKey = `${kind}Id`;
  const path = `/svc-admin/${kind}s/:${idKey}/members`;

  const install: RouteInstaller = (app, appDeps) => {
    const now = () => appDeps.clock.now();

    app.get(path, async (c) => {
      const scope = await fence(c, snapshots, read);
      const parent = await spec.visible(storage, scope, pathId(c, idKey, kind));
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const all = await spec.members(storage).listMembers(parent.id);
      return c.json(listBodyOf(all, page, memberView));
    });

    app.post(path, async (c) => {
      const scope = await fence(c, snapshots, manage);
      const id = pathId(c, idKey, kind);
      const body = await parseBody(c, UserRefSchema);
      // Joining a group hands out its roles' grants: only what the caller may hand out (judged
      // before the transaction, which re-checks visibility).
      if (kind === "group") {
        await spec.visible(storage, scope, id);
        await requireMayHandOutGroup(deps, scope, id);
      }
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const parent = await spec.visible(tx, scope, id);
        const userId = await visibleUser(tx, scope, body.userId.toLowerCase(), parent.orgId);
        if (parent.orgId !== null && !(await tx.organizations.isMember(parent.orgId, userId))) {
          throw new NotOrganizationMemberError();
        }
        const member = await spec.members(tx).addMember(id, userId).catch(asConflict);
        await emit({
          kind: `${kind}.member_added`,
          occurredAt: now(),
          realmId: parent.realmId,
          orgId: parent.orgId,
          userId,
          data: { [idKey]: id },
        });
        return {
          value: member,
          audit: {
            action: `${kind}.member.add`,
            target: id,
            orgId: parent.orgId,
            after: { [idKey]: id, userId },
          },
        };
      });
      await snapshots.invalidateUser(value.userId);
      return c.json(memberView(value), 201);
    });

    app.delete(`${path}/:userId`, async (c) => {
      const scope = await fence(c, snapshots, manage);
      const id = pathId(c, idKey, kind);
      const userId = pathId(c, "userId", "member");
      // Leaving takes power away and needs no authority over the member, except where it lifts
      // a Deny: leaving a group whose roles deny something hands the member what they denied.
      // (A team carries no grants. A group's policies are not judged here.)
      if (kind === "group") {
        await spec.visible(storage, scope, id);
        await requireMayLiftDenies(deps, scope, await handedOutBy(storage, { kind: "Group", id }) ?? []);
      }
      await adminMutation(deps, scope, async ({ tx, emit }) => {
        const parent = await spec.visible(tx, scope, id);
        if (!(await spec.members(tx).removeMember(id, userId))) throw hidden("member");
        await emit({
          kind: `${kind}.member_removed`,
          occurredAt: now(),
          realmId: parent.realmId,
          orgId: parent.orgId,
          userId,
          data: { [idKey]: id },
        });
        return {
          value: null,
          audit: {
            action: `${kind}.member.remove`,
            target: id,
            orgId: parent.orgId,
            before: { [idKey]: id, userId },
          },
        };
      });
      await snapshots.invalidateUser(userId);
      return c.body(null, 204);
    });
  };

  const params = { [idKey]: `The ${kind} id.` };
  const operations: OperationDoc[] = [
    {
      method: "GET",
      path,
      summary: `List a ${kind}'s members`,
      description: "By membership creation time, then user id.",
      tags: spec.docs.tags,
      permissions: permissionsOf(read),
      params,
      query: PageQuerySchema,
      responses: {
        200: {
          description: "A page of members",
          body: v.pipe(listSchema(MemberSchema), v.title(spec.docs.listTitle)),
        },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "POST",
      path,
      summary: spec.docs.addSummary,
      description: spec.docs.addDescription,
      tags: spec.docs.tags,
      permissions: permissionsOf(manage),
      params,
      body: UserRefSchema,
      responses: {
        201: { description: "The membership", body: MemberSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
    {
      method: "DELETE",
      path: `${path}/:userId`,
      summary: `Remove a member from a ${kind}`,
      tags: spec.docs.tags,
      permissions: permissionsOf(manage),
      params: { ...params, userId: "The member's user id." },
      responses: { 204: { description: "Removed" }, ...errorResponses(401, 403, 404) },
    },
  ];
  return { install, operations };
}
