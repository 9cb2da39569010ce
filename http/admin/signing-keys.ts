/**
 * The realm's token signing keys over the admin API (spec 2.9), realm-level, fenced by
 * `svc:global:signing-keys-read` / `-manage`:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/signing-keys` | `{kid, algorithm, createdAt, retiredAt, primary, published}` (never key material) |
 * | POST | `/svc-admin/signing-keys/rotate` | a new primary now; the old key stays published and accepted through the overlap |
 *
 * The rotation, its audit entry and its `signing_key.rotated` event are one transaction; this
 * instance's key ring forgets the realm's cached set after the commit, other instances reload it
 * within their cache time (tokens the old key signed meanwhile stay valid through the overlap).
 *
 * @module
 */
import * as v from "valibot";
import {
  SIGNING_KEYS_MANAGE_GLOBAL,
  SIGNING_KEYS_READ_GLOBAL,
} from "../../core/definitions/permissions/credentials.ts";
import type { SigningKeyRecord } from "../../core/storage/signing-keys.ts";
import { fence } from "../auth/fence.ts";
import { documented, errorResponses, IsoTimeSchema, type OperationDoc } from "../openapi/operation.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { adminMutation, listBodyOf, listSchema, pageOf, PageQuerySchema, parseQuery } from "./kit.ts";

const READ = { global: [SIGNING_KEYS_READ_GLOBAL, SIGNING_KEYS_MANAGE_GLOBAL] };
const MANAGE = { global: [SIGNING_KEYS_MANAGE_GLOBAL] };
const BASE = "/svc-admin/signing-keys";

/** A signing key as the API shows it. */
export const SigningKeySchema = v.pipe(
  v.object({
    kid: v.pipe(v.string(), v.description("The JWT `kid`.")),
    algorithm: v.string(),
    createdAt: IsoTimeSchema,
    retiredAt: v.pipe(
      v.nullable(IsoTimeSchema),
      v.description("When it stopped signing; null: primary or staged."),
    ),
    primary: v.pipe(v.boolean(), v.description("Signs new tokens.")),
    published: v.pipe(
      v.boolean(),
      v.description("In the JWKS and accepted (primary, staged, or within the overlap)."),
    ),
  }),
  v.title("SigningKey"),
);

/** The answer of a rotation. */
export const SigningKeyRotationSchema = v.pipe(
  v.object({
    primaryKid: v.string(),
    retiredKid: v.nullable(v.string()),
    retiredKeyPublishedUntil: v.pipe(
      v.nullable(IsoTimeSchema),
      v.description("Until when tokens the retired key signed still verify."),
    ),
  }),
  v.title("SigningKeyRotation"),
);

function signingKeyView(k: SigningKeyRecord, now: number, overlapMs: number) {
  return {
    kid: k.kid,
    algorithm: k.algorithm,
    createdAt: k.createdAt.toISOString(),
    retiredAt: k.retiredAt?.toISOString() ?? null,
    primary: k.isPrimary,
    published: k.retiredAt === null || k.retiredAt.getTime() + overlapMs > now,
  };
}

const TAGS = ["Admin: signing keys"];

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List the realm's signing keys",
    description: "Primary first, then newest. Never the key material.",
    tags: TAGS,
    permissions: READ.global,
    query: PageQuerySchema,
    responses: {
      200: { description: "One page", body: listSchema(SigningKeySchema) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: `${BASE}/rotate`,
    summary: "Rotate the realm's signing key now",
    description:
      "A new primary key signs from now on; the previous one stays published (JWKS) and accepted through the overlap window.",
    tags: TAGS,
    permissions: MANAGE.global,
    responses: {
      200: { description: "The new primary and the retired key", body: SigningKeyRotationSchema },
      ...errorResponses(401, 403, 409),
    },
  },
];

/** The signing-key routes. */
export function signingKeyRoutes(deps: AdminRouteDeps) {
  const { storage, snapshots, keys } = deps;
  return documented((app, appDeps) => {
    app.get(BASE, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const page = pageOf(parseQuery(c, PageQuerySchema));
      const all = await storage.signingKeys.list(scope.principal.realmId);
      const now = appDeps.clock.now();
      return c.json(listBodyOf(all, page, (k) => signingKeyView(k, now, keys.overlapMs)));
    });

    app.post(`${BASE}/rotate`, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const realmId = scope.principal.realmId.toLowerCase();
      const { value } = await adminMutation(deps, scope, async ({ tx, emit }) => {
        const rotation = await keys.rotate(realmId, tx.signingKeys);
        const at = appDeps.clock.now();
        const retiredKeyPublishedUntil = rotation.retiredKid === null
          ? null
          : new Date(at + keys.overlapMs).toISOString();
        await emit({
          kind: "signing_key.rotated",
          occurredAt: at,
          realmId,
          data: { ...rotation, retiredKeyPublishedUntil },
        });
        return {
          value: { ...rotation, retiredKeyPublishedUntil },
          audit: {
            action: "signing_key.rotate",
            target: rotation.primaryKid,
            before: { primaryKid: rotation.retiredKid },
            after: { primaryKid: rotation.primaryKid, retiredKid: rotation.retiredKid },
          },
        };
      });
      keys.invalidate(realmId);
      return c.json(value);
    });
  }, OPERATIONS);
}
