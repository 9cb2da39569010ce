/**
 * Realm admin routes (spec 2.10: display name, default flag):
 *
 * | Method | Path | Body → answer |
 * |---|---|---|
 * | GET | `/svc-admin/realms` | → `{items, offset, limit, total}` |
 * | POST | `/svc-admin/realms` | `{name, displayName, isDefault?}` → 201 realm |
 * | GET | `/svc-admin/realms/{realmId}` | → realm |
 * | PATCH | `/svc-admin/realms/{realmId}` | `{displayName?, isDefault?, selfSignUp?, branding?}` → realm |
 *
 * Realms sit above every realm's administration, so these routes are not fenced by the caller's
 * own realm: only callers signed in to the DEFAULT realm (the "master realm") holding
 * `svc:global:realms-read` / `svc:global:realms-manage` may use them; anyone else gets 403.
 * Changes are audited in the default realm's chain. Exactly one realm is the default at every
 * moment: `isDefault: true` moves the flag in one transaction, `false` on the default is
 * 409 `default_realm_required`. A new realm gets its primary signing key at once. `selfSignUp`
 * opens the hosted sign-up page for the realm (off by default); `branding` (`productName`, `color`
 * `#rrggbb`, `logoUrl` https; null falls back to the server's `SVC_BRAND_*`) brands its hosted
 * pages and mail.
 *
 * @module
 */
import * as v from "valibot";
import { REALMS_MANAGE_GLOBAL, REALMS_READ_GLOBAL } from "../../../core/definitions/permissions/directory.ts";
import { ForbiddenError } from "../../../core/errors.ts";
import type { Realm } from "../../../core/storage/realms.ts";
import type { RouteInstaller } from "../../app.ts";
import { fence, type FenceScope } from "../../auth/fence.ts";
import { documented, errorResponses } from "../../openapi/operation.ts";
import type { SvcEnv } from "../../request-id.ts";
import { parseBody } from "../../validate.ts";
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
} from "../kit.ts";
import { DisplayNameField, KeyField, pathId } from "./shared.ts";
import type { Context } from "hono";

const READ = { global: [REALMS_READ_GLOBAL, REALMS_MANAGE_GLOBAL] };
const MANAGE = { global: [REALMS_MANAGE_GLOBAL] };

/** The body of `POST /svc-admin/realms`. */
export const CreateRealmSchema = v.strictObject({
  name: KeyField("name"),
  displayName: DisplayNameField,
  isDefault: v.optional(v.boolean("isDefault must be true or false")),
});

/** A realm's branding: each field null falls back to the server's `SVC_BRAND_*` setting. */
export const RealmBrandingSchema = v.pipe(
  v.strictObject({
    productName: v.nullable(
      v.pipe(
        v.string("branding.productName must be a string"),
        v.trim(),
        v.minLength(1, "branding.productName must not be empty"),
        v.maxLength(100, "branding.productName is at most 100 characters"),
      ),
    ),
    color: v.nullable(
      v.pipe(
        v.string("branding.color must be a string"),
        v.regex(/^#[0-9a-fA-F]{6}$/, "branding.color must be a colour such as #1f5fbf"),
        v.toLowerCase(),
      ),
    ),
    logoUrl: v.nullable(
      v.pipe(
        v.string("branding.logoUrl must be a string"),
        v.maxLength(2000, "branding.logoUrl is at most 2000 characters"),
        v.check((text) => {
          try {
            const url = new URL(text);
            return url.protocol === "https:" && url.username === "" && url.password === "";
          } catch {
            return false;
          }
        }, "branding.logoUrl must be an https URL"),
      ),
    ),
  }),
  v.title("RealmBranding"),
);

/** The body of `PATCH /svc-admin/realms/{realmId}`. */
export const UpdateRealmSchema = v.strictObject({
  displayName: v.optional(DisplayNameField),
  isDefault: v.optional(v.boolean("isDefault must be true or false")),
  selfSignUp: v.optional(v.boolean("selfSignUp must be true or false")),
  branding: v.optional(RealmBrandingSchema),
});

/** A realm as the API shows it. */
export function realmView(r: Realm) {
  return {
    id: r.id,
    name: r.name,
    displayName: r.displayName,
    isDefault: r.isDefault,
    selfSignUp: r.selfSignUp,
    branding: { ...r.branding },
    createdAt: r.createdAt.toISOString(),
  };
}

/** The schema of {@link realmView}. */
export const RealmSchema = v.pipe(
  v.object({
    id: v.string(),
    name: v.string(),
    displayName: v.string(),
    isDefault: v.boolean(),
    selfSignUp: v.pipe(v.boolean(), v.description("Whether the hosted sign-up page is open for the realm.")),
    branding: RealmBrandingSchema,
    createdAt: v.string(),
  }),
  v.title("Realm"),
);

const TAGS = ["Admin: realms"];
const RealmListSchema = v.pipe(listSchema(RealmSchema), v.title("RealmList"));
const realmParam = { realmId: "The realm id." };

/** The realm routes. */
export function realmRoutes(deps: AdminRouteDeps): RouteInstaller {
  const { storage, snapshots } = deps;

  /** The fence, then: the caller must be of the default realm. */
  const realmFence = async (c: Context<SvcEnv>, permissions: { global: string[] }): Promise<FenceScope> => {
    const scope = await fence(c, snapshots, permissions);
    const master = await storage.realms.getDefault();
    if (master === null || master.id !== scope.principal.realmId.toLowerCase()) {
      throw new ForbiddenError("Realms are managed from the default realm.");
    }
    return scope;
  };

  const install: RouteInstaller = (app, appDeps) => {
    const now = () => appDeps.clock.now();
    app.get("/svc-admin/realms", async (c) => {
      await realmFence(c, READ);
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const all = await storage.realms.list();
      return c.json(listBodyOf(all, page, realmView));
    });

    app.post("/svc-admin/realms", async (c) => {
      const scope = await realmFence(c, MANAGE);
      const body = await parseBody(c, CreateRealmSchema);
      const { value: realm } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        let created = await tx.realms.create({ name: body.name, displayName: body.displayName }).catch(
          asConflict,
        );
        if (body.isDefault === true) created = await tx.realms.update(created.id, { isDefault: true });
        await emit({
          kind: "realm.created",
          occurredAt: now(),
          realmId: created.id,
          data: { name: created.name, isDefault: created.isDefault },
        });
        return {
          value: created,
          audit: { action: "realm.create", target: created.id, after: realmView(created) },
        };
      });
      await deps.keys.ensurePrimary(realm.id);
      return c.json(realmView(realm), 201);
    });

    app.get("/svc-admin/realms/:realmId", async (c) => {
      await realmFence(c, READ);
      const realm = await storage.realms.get(pathId(c, "realmId", "realm"));
      if (realm === null) throw hidden("realm");
      return c.json(realmView(realm));
    });

    app.patch("/svc-admin/realms/:realmId", async (c) => {
      const scope = await realmFence(c, MANAGE);
      const realmId = pathId(c, "realmId", "realm");
      const body = await parseBody(c, UpdateRealmSchema);
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const before = await tx.realms.get(realmId);
        if (before === null) throw hidden("realm");
        const after = await tx.realms.update(realmId, body).catch(asConflict);
        const changed = JSON.stringify(realmView(after)) !== JSON.stringify(realmView(before));
        if (!changed) return { value: after, audit: null };
        await emit({
          kind: "realm.updated",
          occurredAt: now(),
          realmId,
          data: {
            displayName: after.displayName,
            isDefault: after.isDefault,
            selfSignUp: after.selfSignUp,
            branding: after.branding,
          },
        });
        return {
          value: after,
          audit: {
            action: "realm.update",
            target: realmId,
            before: realmView(before),
            after: realmView(after),
          },
        };
      });
      return c.json(realmView(value));
    });
  };

  return documented(install, [
    {
      method: "GET",
      path: "/svc-admin/realms",
      summary: "List realms",
      description: "Callers of the default realm only.",
      tags: TAGS,
      permissions: READ.global,
      query: PageQuerySchema,
      responses: {
        200: { description: "A page of realms", body: RealmListSchema },
        ...errorResponses(400, 401, 403),
      },
    },
    {
      method: "POST",
      path: "/svc-admin/realms",
      summary: "Create a realm",
      description:
        "Creates a realm and its primary signing key. `isDefault: true` makes it the default in the same change.",
      tags: TAGS,
      permissions: MANAGE.global,
      body: CreateRealmSchema,
      responses: {
        201: { description: "The realm", body: RealmSchema },
        ...errorResponses(400, 401, 403, 409),
      },
    },
    {
      method: "GET",
      path: "/svc-admin/realms/:realmId",
      summary: "Read a realm",
      tags: TAGS,
      permissions: READ.global,
      params: realmParam,
      responses: { 200: { description: "The realm", body: RealmSchema }, ...errorResponses(401, 403, 404) },
    },
    {
      method: "PATCH",
      path: "/svc-admin/realms/:realmId",
      summary: "Change a realm",
      description: "Display name; `isDefault: true` switches the default realm atomically " +
        "(`false` on the default is 409 `default_realm_required`).",
      tags: TAGS,
      permissions: MANAGE.global,
      params: realmParam,
      body: UpdateRealmSchema,
      responses: {
        200: { description: "The realm", body: RealmSchema },
        ...errorResponses(400, 401, 403, 404, 409),
      },
    },
  ]);
}
