/**
 * The SP's encryption keys of a connection over the admin API, fenced like the connections
 * (`saml:global:connections-read|manage` realm-wide, `saml:org:connections-read|manage` for the
 * caller's own organization; another organization's connection is 404):
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/saml/connections/{id}/encryption-keys` | the active keys (certificates), current first |
 * | POST | `/svc-admin/saml/connections/{id}/encryption-keys` | a new key: it becomes current, the others stay active |
 * | DELETE | `/svc-admin/saml/connections/{id}/encryption-keys/{keyId}` | retire a key (its private half destroyed) |
 *
 * Answers carry certificates only, never a private key. Each change writes the key table and one
 * audit entry in one transaction (the realm's admin mutations run one after another, so the limit
 * of {@link MAX_ACTIVE_KEYS} active keys holds under concurrent calls, and of concurrent retirements
 * of one key one succeeds). The last key of a connection that requires encrypted assertions cannot
 * be retired.
 *
 * @module
 */
import * as v from "valibot";
import {
  bodyLimit,
  ConflictError,
  documented,
  errorResponses,
  type FenceScope,
  hidden,
  IsoTimeSchema,
  type OperationDoc,
  parseBody,
  reachable,
  type RouteInstaller,
  scopedPermissions,
  uuidParam,
} from "../../mod.ts";
import type { Context } from "hono";
import type { ConnectionStore, SamlConnection } from "./connections.ts";
import { certificateInfo, pem } from "./metadata.ts";
import { PERMISSIONS, type Saml } from "./shared.ts";
import { MAX_ACTIVE_KEYS, type SpKey } from "./sp-keys.ts";

const { read: READ, manage: MANAGE } = scopedPermissions(PERMISSIONS);
const KEYS = "/svc-admin/saml/connections/:connectionId/encryption-keys";
const KEY = `${KEYS}/:keyId`;

/** The body of `POST …/encryption-keys` (nothing to give; `{}` or no body). */
export const CreateEncryptionKeySchema = v.strictObject({});

/** An SP encryption key as the API shows it. */
export const EncryptionKeySchema = v.pipe(
  v.object({
    id: v.string(),
    connectionId: v.string(),
    current: v.boolean(),
    certificate: v.string(),
    sha256: v.string(),
    subject: v.string(),
    notBefore: IsoTimeSchema,
    notAfter: IsoTimeSchema,
    createdAt: IsoTimeSchema,
  }),
  v.title("SamlEncryptionKey"),
);

const TAGS = ["Admin: SAML"];
const PARAMS = { connectionId: "The connection's id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: KEYS,
    summary: "List a SAML connection's SP encryption keys",
    description:
      "The active keys' certificates (PEM), newest (`current`) first: every one decrypts, every one is published in the SP metadata.",
    tags: TAGS,
    permissions: [...READ.global, ...READ.org],
    params: PARAMS,
    responses: {
      200: { description: "The active keys", body: v.object({ items: v.array(EncryptionKeySchema) }) },
      ...errorResponses(401, 403, 404),
    },
  },
  {
    method: "POST",
    path: KEYS,
    summary: "Create a SAML connection's SP encryption key (rotation)",
    description:
      `A new RSA-2048 key with a self-signed certificate becomes current (first in the SP metadata); the others keep decrypting until retired. At most ${MAX_ACTIVE_KEYS} active keys (409 beyond).`,
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: PARAMS,
    body: CreateEncryptionKeySchema,
    responses: {
      201: { description: "The new key (its certificate)", body: EncryptionKeySchema },
      ...errorResponses(400, 401, 403, 404, 409, 413),
    },
  },
  {
    method: "DELETE",
    path: KEY,
    summary: "Retire a SAML connection's SP encryption key",
    description:
      "Assertions encrypted to it no longer decrypt; its private key is destroyed. The last key of a connection with `requireEncryptedAssertions` cannot be retired (409).",
    tags: TAGS,
    permissions: [...MANAGE.global, ...MANAGE.org],
    params: { ...PARAMS, keyId: "The key's id" },
    responses: { 204: { description: "Retired" }, ...errorResponses(401, 403, 404, 409) },
  },
];

/** The admin routes of the SP encryption keys. */
export function encryptionKeyRoutes(s: Saml): RouteInstaller {
  const { ctx } = s;

  const view = (key: SpKey, current: boolean) => {
    const info = certificateInfo(key.certificate);
    return {
      id: key.id,
      connectionId: key.connectionId,
      current,
      certificate: pem(key.certificate),
      sha256: info.sha256,
      subject: info.subject,
      notBefore: info.notBefore.toISOString(),
      notAfter: info.notAfter.toISOString(),
      createdAt: key.createdAt.toISOString(),
    };
  };

  const visible = async (
    scope: FenceScope,
    c: Context,
    connections: ConnectionStore = s.connections,
  ): Promise<SamlConnection> =>
    reachable(scope, await connections.get(c.req.param("connectionId") ?? ""), "connection");

  return documented((app) => {
    app.get(KEYS, async (c) => {
      const scope = await ctx.admin.scope(c, READ);
      const connection = await visible(scope, c);
      const keys = await s.spKeys.list(connection.id);
      return c.json({ items: keys.map((key, i) => view(key, i === 0)) });
    });

    app.post(KEYS, bodyLimit(1024), async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      if (c.req.header("Content-Type") !== undefined) await parseBody(c, CreateEncryptionKeySchema);
      else if ((await c.req.text()) !== "") await parseBody(c, CreateEncryptionKeySchema);
      await visible(scope, c);
      const created = await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        // Read again in the transaction, which runs after any other admin change of the realm.
        const connection = await visible(scope, c, s.connections.in(tx));
        const keys = s.spKeys.in(tx);
        if ((await keys.list(connection.id)).length >= MAX_ACTIVE_KEYS) {
          throw new ConflictError(
            `A connection has at most ${MAX_ACTIVE_KEYS} encryption keys: retire one first.`,
            { limit: MAX_ACTIVE_KEYS },
          );
        }
        const key = await keys.create(connection.id);
        return {
          value: key,
          audit: {
            action: "saml.encryption_key.create",
            target: connection.id,
            after: { ...view(key, true), certificate: undefined },
          },
        };
      });
      c.header("Cache-Control", "no-store");
      return c.json(view(created, true), 201);
    });

    app.delete(KEY, async (c) => {
      const scope = await ctx.admin.scope(c, MANAGE);
      await visible(scope, c);
      const keyId = uuidParam(c, "keyId", "encryption key");
      await ctx.admin.mutate(scope.principal, async ({ tx }) => {
        const connection = await visible(scope, c, s.connections.in(tx));
        const keys = s.spKeys.in(tx);
        const active = await keys.list(connection.id);
        const key = active.find((k) => k.id === keyId.toLowerCase());
        if (key === undefined) throw hidden("encryption key");
        if (active.length === 1 && connection.requireEncryptedAssertions) {
          throw new ConflictError(
            "The connection requires encrypted assertions: its last encryption key cannot be retired.",
          );
        }
        await keys.retire(connection.id, key.id);
        return {
          value: null,
          audit: {
            action: "saml.encryption_key.retire",
            target: connection.id,
            before: { ...view(key, active[0].id === key.id), certificate: undefined },
          },
        };
      });
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
