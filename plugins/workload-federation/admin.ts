/**
 * Trust policies over the admin API, fenced by the plugin's own permissions
 * (`workload:global:policies-read` / `workload:global:policies-manage`), each change one entry in
 * the realm's admin audit chain:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/workload/policies` | list by name (`?offset=&limit=`) |
 * | POST | `/svc-admin/workload/policies` | create `{name, issuer, jwksUri \| jwks, audience, requiredClaims, serviceAccountId, enabled}` |
 * | GET | `/svc-admin/workload/policies/{policyId}` | read |
 * | PATCH | `/svc-admin/workload/policies/{policyId}` | change any field (`jwks` or `jwksUri` replace the keys) |
 * | DELETE | `/svc-admin/workload/policies/{policyId}` | delete |
 *
 * @module
 */
import type { Context } from "hono";
import * as v from "valibot";
import {
  bodyLimit,
  clientJwksProblem,
  clientJwksUriProblem,
  documented,
  errorResponses,
  globalPermissions,
  IsoTimeSchema,
  listBodyOf,
  NotFoundError,
  type OperationDoc,
  outboundPolicyFromConfig,
  pageOf,
  parseBody,
  type PermissionDefinition,
  type PluginContext,
  randomUuid,
  type RouteInstaller,
  type Storage,
  SvcError,
  unchangedView,
  ValidationError,
} from "../../mod.ts";
import {
  isUniqueViolation,
  policyStore,
  type TrustPolicy,
  type TrustPolicyFields,
} from "./policies-store.ts";

/** Read trust policies. */
export const POLICIES_READ = "workload:global:policies-read";
/** Create, change and delete trust policies. */
export const POLICIES_MANAGE = "workload:global:policies-manage";

/** The plugin's permissions. */
export const PERMISSIONS: readonly PermissionDefinition[] = [
  { id: POLICIES_READ, description: "Read workload federation trust policies" },
  { id: POLICIES_MANAGE, description: "Create, change and delete workload federation trust policies" },
];

const BASE = "/svc-admin/workload/policies";
const ITEM = `${BASE}/:policyId`;
const { read: READ, manage: MANAGE } = globalPermissions(POLICIES_READ, POLICIES_MANAGE);
const MAX_BODY_BYTES = 128 * 1024;

const text = (name: string, max: number) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.minLength(1, `${name} must not be empty`),
    v.maxLength(max, `${name} is longer than ${max} characters`),
  );

const jwksField = v.pipe(
  v.unknown(),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = clientJwksProblem(dataset.value);
    if (problem !== null) addIssue({ message: problem });
  }),
  v.transform((value) => value as { keys: Record<string, unknown>[] }),
);

const CLAIM_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;
const RESERVED = new Set(["iss", "aud", "exp", "nbf", "iat", "jti"]);
const requiredClaimsField = v.pipe(
  v.record(v.string(), v.pipe(v.string("requiredClaims values are strings"), v.maxLength(500))),
  v.check((claims) => Object.keys(claims).length <= 20, "requiredClaims: at most 20"),
  v.check(
    (claims) => Object.keys(claims).every((name) => CLAIM_NAME.test(name) && !RESERVED.has(name)),
    "requiredClaims: names are 1–100 of [A-Za-z0-9_.:-], not iss, aud, exp, nbf, iat or jti (checked on their own)",
  ),
);

const FIELDS = {
  name: v.pipe(
    v.string("name must be a string"),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'name must be 1–100 letters, digits, ".", "_" or "-"'),
  ),
  issuer: v.pipe(
    text("issuer", 500),
    v.check((value) => URL.canParse(value), "issuer must be an absolute URL (the tokens' iss)"),
  ),
  jwksUri: v.nullable(text("jwksUri", 2000)),
  jwks: v.nullable(jwksField),
  audience: text("audience", 500),
  requiredClaims: requiredClaimsField,
  serviceAccountId: v.pipe(
    v.string("serviceAccountId must be a string"),
    v.uuid("serviceAccountId is a UUID"),
  ),
  enabled: v.boolean("enabled must be true or false"),
};

/** The body of `POST /svc-admin/workload/policies`. */
export const CreatePolicySchema = v.strictObject({
  name: FIELDS.name,
  issuer: FIELDS.issuer,
  jwksUri: v.optional(FIELDS.jwksUri, null),
  jwks: v.optional(FIELDS.jwks, null),
  audience: FIELDS.audience,
  requiredClaims: v.optional(FIELDS.requiredClaims, {}),
  serviceAccountId: FIELDS.serviceAccountId,
  enabled: v.optional(FIELDS.enabled, true),
});

/** The body of `PATCH /svc-admin/workload/policies/{policyId}`. */
export const UpdatePolicySchema = v.strictObject({
  name: v.optional(FIELDS.name),
  issuer: v.optional(FIELDS.issuer),
  jwksUri: v.optional(FIELDS.jwksUri),
  jwks: v.optional(FIELDS.jwks),
  audience: v.optional(FIELDS.audience),
  requiredClaims: v.optional(FIELDS.requiredClaims),
  serviceAccountId: v.optional(FIELDS.serviceAccountId),
  enabled: v.optional(FIELDS.enabled),
});

/** A policy as the API shows it. */
export const PolicySchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    name: v.string(),
    issuer: v.string(),
    jwksUri: v.nullable(v.string()),
    jwks: v.nullable(v.object({ keys: v.array(v.record(v.string(), v.unknown())) })),
    audience: v.string(),
    requiredClaims: v.record(v.string(), v.string()),
    serviceAccountId: v.string(),
    enabled: v.boolean(),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
  }),
  v.title("WorkloadTrustPolicy"),
);

const PageQuerySchema = v.strictObject({
  offset: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,9}$/, "offset is a whole number"), v.transform(Number)),
  ),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, "limit is a whole number from 1 to 200"),
      v.transform(Number),
      v.minValue(1, "limit is a whole number from 1 to 200"),
      v.maxValue(200, "limit is a whole number from 1 to 200"),
    ),
  ),
});

const ListSchema = v.pipe(
  v.object({ items: v.array(PolicySchema), offset: v.number(), limit: v.number(), total: v.number() }),
  v.title("WorkloadTrustPolicyList"),
);

/** The API view of a policy. */
export function policyView(policy: TrustPolicy): v.InferOutput<typeof PolicySchema> {
  return {
    id: policy.id,
    realmId: policy.realmId,
    name: policy.name,
    issuer: policy.issuer,
    jwksUri: policy.jwksUri,
    jwks: policy.jwks === null ? null : { keys: policy.jwks.keys.map((key) => ({ ...key })) },
    audience: policy.audience,
    requiredClaims: { ...policy.requiredClaims },
    serviceAccountId: policy.serviceAccountId,
    enabled: policy.enabled,
    createdAt: policy.createdAt.toISOString(),
    updatedAt: policy.updatedAt.toISOString(),
  };
}

const TAGS = ["Admin: workload federation"];
const PARAMS = { policyId: "The trust policy's id" };

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List workload federation trust policies",
    tags: TAGS,
    permissions: READ,
    query: PageQuerySchema,
    responses: {
      200: { description: "One page, by name", body: ListSchema },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "POST",
    path: BASE,
    summary: "Create a trust policy",
    description:
      "External JWTs of `issuer` (verified against `jwksUri` or the static public `jwks`, with `audience` and the exact `requiredClaims` values) are exchanged at `/workload/token` for an access token of `serviceAccountId`.",
    tags: TAGS,
    permissions: MANAGE,
    body: CreatePolicySchema,
    responses: {
      201: { description: "Created", body: PolicySchema },
      ...errorResponses(400, 401, 403, 409, 413),
    },
  },
  {
    method: "GET",
    path: ITEM,
    summary: "Read a trust policy",
    tags: TAGS,
    permissions: READ,
    params: PARAMS,
    responses: { 200: { description: "The policy", body: PolicySchema }, ...errorResponses(401, 403, 404) },
  },
  {
    method: "PATCH",
    path: ITEM,
    summary: "Change a trust policy",
    description: "Any field; `jwks` or `jwksUri` replace the keys (a policy has exactly one of them).",
    tags: TAGS,
    permissions: MANAGE,
    params: PARAMS,
    body: UpdatePolicySchema,
    responses: {
      200: { description: "The policy", body: PolicySchema },
      ...errorResponses(400, 401, 403, 404, 409, 413),
    },
  },
  {
    method: "DELETE",
    path: ITEM,
    summary: "Delete a trust policy",
    tags: TAGS,
    permissions: MANAGE,
    params: PARAMS,
    responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
  },
];

/** The admin routes of trust policies. */
export function adminRoutes(ctx: PluginContext): RouteInstaller {
  const hidden = () => new NotFoundError("No such trust policy.");
  const taken = (error: unknown): never => {
    if (isUniqueViolation(error)) {
      throw new SvcError("workload_policy_name_taken", "A trust policy of this realm has this name.", 409, {
        reason: "workload_policy_name_taken",
      });
    }
    throw error;
  };
  /** Checks a policy as a whole: one key source, a safe jwksUri, a service account of the realm. */
  const check = async (realmId: string, fields: TrustPolicyFields, storage: Storage = ctx.storage) => {
    if ((fields.jwks === null) === (fields.jwksUri === null)) {
      throw new ValidationError("a trust policy has either jwks or jwksUri");
    }
    if (fields.jwksUri !== null) {
      const problem = clientJwksUriProblem(fields.jwksUri, outboundPolicyFromConfig(ctx.svcConfig));
      if (problem !== null) throw new ValidationError(problem);
    }
    const account = await storage.serviceAccounts.get(fields.serviceAccountId);
    if (account === null || account.realmId !== realmId.toLowerCase()) {
      throw new ValidationError("serviceAccountId names no service account of this realm");
    }
  };
  const realmOf = (realmId: string) => realmId.toLowerCase();

  return documented((app) => {
    app.get(BASE, async (c: Context) => {
      const caller = await ctx.admin.fence(c, READ);
      const parsed = v.safeParse(PageQuerySchema, c.req.query());
      if (!parsed.success) throw new ValidationError(parsed.issues[0].message);
      const all = await policyStore(ctx.sql).list(realmOf(caller.realmId));
      return c.json(listBodyOf(all, pageOf(parsed.output), policyView));
    });

    app.post(BASE, bodyLimit(MAX_BODY_BYTES), async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const body = await parseBody(c, CreatePolicySchema);
      const realmId = realmOf(caller.realmId);
      await check(realmId, body);
      // The policy lets whoever holds its key act as the service account: only a caller whose
      // authority covers the account's may map to it.
      await ctx.admin.requireAuthorityOver(caller, { kind: "ServiceAccount", id: body.serviceAccountId });
      const created = await ctx.admin.mutate(caller, async ({ tx }) => {
        const policy = await policyStore(tx.pluginSql)
          .create(randomUuid(ctx.random), realmId, body, new Date(ctx.clock.now()))
          .catch(taken);
        return {
          value: policy,
          audit: { action: "workload.policy.create", target: policy.id, after: policyView(policy) },
        };
      });
      return c.json(policyView(created), 201);
    });

    app.get(ITEM, async (c: Context) => {
      const caller = await ctx.admin.fence(c, READ);
      const policy = await policyStore(ctx.sql).get(realmOf(caller.realmId), c.req.param("policyId")!);
      if (policy === null) throw hidden();
      return c.json(policyView(policy));
    });

    app.patch(ITEM, bodyLimit(MAX_BODY_BYTES), async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const body = await parseBody(c, UpdatePolicySchema);
      const realmId = realmOf(caller.realmId);
      const id = c.req.param("policyId")!;
      // Any change of a policy (its key, its claims, its account) decides who acts as the
      // account: the caller's authority must cover it (judged before the transaction, which
      // then refuses a policy whose account changed meanwhile).
      const current = await policyStore(ctx.sql).get(realmId, id);
      if (current === null) throw hidden();
      const accountId = body.serviceAccountId ?? current.serviceAccountId;
      await ctx.admin.requireAuthorityOver(caller, { kind: "ServiceAccount", id: accountId });
      const updated = await ctx.admin.mutate(caller, async ({ tx }) => {
        const store = policyStore(tx.pluginSql);
        const before = await store.get(realmId, id);
        if (before === null) throw hidden();
        if ((body.serviceAccountId ?? before.serviceAccountId) !== accountId) {
          throw new SvcError("conflict", "The trust policy changed meanwhile; try again.", 409);
        }
        const keys = body.jwks !== undefined || body.jwksUri !== undefined
          ? { jwks: body.jwks ?? null, jwksUri: body.jwksUri ?? null }
          : {};
        const fields: TrustPolicyFields = {
          name: body.name ?? before.name,
          issuer: body.issuer ?? before.issuer,
          jwks: before.jwks,
          jwksUri: before.jwksUri,
          ...keys,
          audience: body.audience ?? before.audience,
          requiredClaims: body.requiredClaims ?? before.requiredClaims,
          serviceAccountId: body.serviceAccountId ?? before.serviceAccountId,
          enabled: body.enabled ?? before.enabled,
        };
        // Inside the transaction (an embedded database has one connection).
        await check(realmId, fields, tx);
        const after = await store.update(realmId, id, fields, new Date(ctx.clock.now())).catch(taken);
        if (after === null) throw hidden();
        // An identical update changes nothing: no entry.
        if (unchangedView(policyView, before, after)) return { value: after, audit: null };
        return {
          value: after,
          audit: {
            action: "workload.policy.update",
            target: id,
            before: policyView(before),
            after: policyView(after),
          },
        };
      });
      return c.json(policyView(updated));
    });

    app.delete(ITEM, async (c: Context) => {
      const caller = await ctx.admin.fence(c, MANAGE);
      const realmId = realmOf(caller.realmId);
      const id = c.req.param("policyId")!;
      await ctx.admin.mutate(caller, async ({ tx }) => {
        const store = policyStore(tx.pluginSql);
        const before = await store.get(realmId, id);
        if (before === null || !await store.delete(realmId, id)) throw hidden();
        return {
          value: null,
          audit: { action: "workload.policy.delete", target: id, before: policyView(before) },
        };
      });
      return c.body(null, 204);
    });
  }, OPERATIONS);
}
