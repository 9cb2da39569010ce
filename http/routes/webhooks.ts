/**
 * The webhook admin API (spec 4.4), under `config.webhooks.mountPath` (default
 * `/svc-admin/webhooks`):
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/` | the endpoints the caller may read (`?orgId=` only those of one organization) |
 * | POST | `/` | create `{url, eventPatterns, description?, orgId?}`; the answer carries the `whsec_` secret |
 * | GET, PATCH, DELETE | `/{endpointId}` | read; change `{url?, eventPatterns?, description?, enabled?}`; delete |
 * | POST | `/{endpointId}/rotate-secret` | new secret; the old one keeps signing for `overlapSeconds` (default 86400) |
 * | POST | `/{endpointId}/test` | queues a signed `webhook.test` delivery |
 * | GET | `/{endpointId}/deliveries` | the delivery log, newest first (`?status=dead_letter&limit=50`) |
 * | POST | `/{endpointId}/deliveries/{deliveryId}/replay` | puts a dead-lettered delivery back in the queue |
 *
 * Fences: `svc:global:webhooks-read` / `svc:global:webhooks-manage` for every endpoint of
 * the caller's realm; `svc:org:webhooks-read` / `svc:org:webhooks-manage` for endpoints scoped
 * to the caller's own organization. Manage implies read. Endpoints the caller may not see
 * answer 404. Every change goes through `adminMutation` (refused while impersonating) and appends
 * one entry to the realm's admin audit chain in its own transaction; a change that changes
 * nothing (an identical update) appends none, and a delete of a deleted endpoint is 404. Receiver
 * URLs pass the SSRF guard.
 *
 * @module
 */
import * as v from "valibot";
import {
  WEBHOOKS_MANAGE_GLOBAL,
  WEBHOOKS_MANAGE_ORG,
  WEBHOOKS_READ_GLOBAL,
  WEBHOOKS_READ_ORG,
} from "../../core/definitions/svc-permissions.ts";
import { isEventPattern } from "../../core/events/catalog.ts";
import { EVENT_KINDS } from "../../core/events/catalog.ts";
import { type EventPublisher, webhookBody } from "../../core/events/publisher.ts";
import { ConflictError, NotFoundError, SvcError } from "../../core/errors.ts";
import { randomToken, randomUuid } from "../../core/random.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import { outboundPolicyFromConfig } from "../../core/net/outbound-rules.ts";
import { checkReceiverUrl, type ReceiverPolicy } from "../../core/webhooks/receivers.ts";
import { WEBHOOK_SECRET_PREFIX } from "../../core/webhooks/signature.ts";
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from "../../core/storage/webhooks.ts";
import type { Storage } from "../../core/storage/storage.ts";
import type { AppDeps } from "../app.ts";
import { covers, fence, type FenceScope } from "../auth/fence.ts";
import { parseBody, parseOptionalBody } from "../validate.ts";
import { adminMutation, parseQuery, sameView, wholeNumber } from "../admin/kit.ts";
import {
  documented,
  type DocumentedInstaller,
  errorResponses,
  IsoTimeSchema,
  type OperationDoc,
} from "../openapi/operation.ts";
import { noStore } from "../security-headers.ts";
import { isUuid, UUID_PATTERN } from "../../core/ids.ts";

const READ = {
  global: [WEBHOOKS_READ_GLOBAL, WEBHOOKS_MANAGE_GLOBAL],
  org: [WEBHOOKS_READ_ORG, WEBHOOKS_MANAGE_ORG],
};
const MANAGE = { global: [WEBHOOKS_MANAGE_GLOBAL], org: [WEBHOOKS_MANAGE_ORG] };
const DEFAULT_OVERLAP_SECONDS = 86_400;

const url = v.pipe(v.string("url must be a string"), v.maxLength(2048, "url is longer than 2048 characters"));
const patterns = v.pipe(
  v.array(
    v.pipe(
      v.string("each event pattern must be a string"),
      v.check(isEventPattern, "each event pattern must be an event kind or a pattern such as login.*"),
    ),
    "eventPatterns must be a list",
  ),
  v.minLength(1, "eventPatterns must name at least one pattern"),
  v.maxLength(50, "eventPatterns has more than 50 patterns"),
);
const description = v.nullish(v.pipe(v.string("description must be a string"), v.maxLength(500)));

/** The body of `POST {mount}`. */
export const CreateWebhookSchema = v.strictObject({
  url,
  eventPatterns: patterns,
  description,
  orgId: v.nullish(v.pipe(v.string("orgId must be a string"), v.regex(UUID_PATTERN, "orgId must be a UUID"))),
});

/** The body of `PATCH {mount}/{endpointId}`. */
export const UpdateWebhookSchema = v.strictObject({
  url: v.optional(url),
  eventPatterns: v.optional(patterns),
  description: v.optional(description),
  enabled: v.optional(v.boolean("enabled must be true or false")),
});

/** The body of `POST {mount}/{endpointId}/rotate-secret` (optional). */
export const RotateSecretSchema = v.strictObject({
  overlapSeconds: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(7 * 86_400, "overlapSeconds is above 7 days")),
  ),
});

const uuid = (what: string) =>
  v.pipe(v.string(`${what} must be a string`), v.regex(UUID_PATTERN, `${what} must be a UUID`));
const DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "dead_letter"] as const;

/** The query of `GET {mount}`. */
export const ListWebhooksQuerySchema = v.strictObject({
  orgId: v.optional(v.pipe(uuid("orgId"), v.description("Only the endpoints of this organization."))),
});

/** The query of `GET {mount}/{endpointId}/deliveries`. */
export const DeliveriesQuerySchema = v.strictObject({
  status: v.optional(
    v.pipe(
      v.picklist(DELIVERY_STATUSES, `status must be one of ${DELIVERY_STATUSES.join(", ")}`),
      v.description("Only deliveries in this state."),
    ),
  ),
  limit: v.optional(v.pipe(wholeNumber("limit", 1, 500), v.description("At most this many (default 50)."))),
});

/** A webhook endpoint as the API shows it (never its secret). */
export const WebhookEndpointSchema = v.pipe(
  v.object({
    id: v.string(),
    realmId: v.string(),
    orgId: v.nullable(v.string()),
    url: v.string(),
    description: v.nullable(v.string()),
    eventPatterns: v.array(v.string()),
    enabled: v.boolean(),
    consecutiveFailures: v.number(),
    disabledAt: v.nullable(IsoTimeSchema),
    previousSecretExpiresAt: v.nullable(IsoTimeSchema),
    createdAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
  }),
  v.title("WebhookEndpoint"),
);

/** An endpoint with its signing secret (creation and rotation answers). */
export const WebhookEndpointWithSecretSchema = v.pipe(
  v.object({
    ...WebhookEndpointSchema.entries,
    secret: v.pipe(v.string(), v.description("The `whsec_…` signing secret, shown this once.")),
  }),
  v.title("WebhookEndpointWithSecret"),
);

/** A delivery as the log shows it. */
export const WebhookDeliverySchema = v.pipe(
  v.object({
    id: v.string(),
    endpointId: v.string(),
    eventKind: v.string(),
    status: v.picklist(DELIVERY_STATUSES),
    attempts: v.number(),
    nextAttemptAt: v.nullable(IsoTimeSchema),
    lastError: v.nullable(v.string()),
    lastStatusCode: v.nullable(v.number()),
    createdAt: IsoTimeSchema,
    completedAt: v.nullable(IsoTimeSchema),
    payload: v.pipe(v.string(), v.description("The signed JSON body, as sent.")),
  }),
  v.title("WebhookDelivery"),
);

const TAGS = ["Webhooks"];
const ENDPOINT_PARAM = { endpointId: "The endpoint id" };

/** The operations of the webhook routes under `mount`. */
export function webhookOperations(mount: string): OperationDoc[] {
  const read = [...READ.global, ...READ.org];
  const manage = [...MANAGE.global, ...MANAGE.org];
  const item = `${mount}/:endpointId`;
  return [
    {
      method: "GET",
      path: mount,
      summary: "List webhook endpoints",
      tags: TAGS,
      permissions: read,
      query: ListWebhooksQuerySchema,
      responses: {
        200: { description: "The endpoints", body: v.object({ endpoints: v.array(WebhookEndpointSchema) }) },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "POST",
      path: mount,
      summary: "Create a webhook endpoint",
      description: "The answer carries the `whsec_…` signing secret, shown this once.",
      tags: TAGS,
      permissions: manage,
      body: CreateWebhookSchema,
      responses: {
        201: { description: "Created", body: WebhookEndpointWithSecretSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "GET",
      path: item,
      summary: "Read a webhook endpoint",
      tags: TAGS,
      permissions: read,
      params: ENDPOINT_PARAM,
      responses: {
        200: { description: "The endpoint", body: WebhookEndpointSchema },
        ...errorResponses(401, 403, 404),
      },
    },
    {
      method: "PATCH",
      path: item,
      summary: "Change a webhook endpoint",
      tags: TAGS,
      permissions: manage,
      params: ENDPOINT_PARAM,
      body: UpdateWebhookSchema,
      responses: {
        200: { description: "The endpoint", body: WebhookEndpointSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "DELETE",
      path: item,
      summary: "Delete a webhook endpoint",
      tags: TAGS,
      permissions: manage,
      params: ENDPOINT_PARAM,
      responses: { 204: { description: "Deleted" }, ...errorResponses(401, 403, 404) },
    },
    {
      method: "POST",
      path: `${item}/rotate-secret`,
      summary: "Rotate an endpoint's signing secret",
      description: "The previous secret keeps signing (a second signature) for `overlapSeconds`.",
      tags: TAGS,
      permissions: manage,
      params: ENDPOINT_PARAM,
      body: RotateSecretSchema,
      bodyRequired: false,
      responses: {
        200: { description: "The endpoint and its new secret", body: WebhookEndpointWithSecretSchema },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "POST",
      path: `${item}/test`,
      summary: "Queue a signed test delivery",
      tags: TAGS,
      permissions: manage,
      params: ENDPOINT_PARAM,
      responses: {
        202: { description: "The queued delivery", body: WebhookDeliverySchema },
        ...errorResponses(401, 403, 404),
      },
    },
    {
      method: "GET",
      path: `${item}/deliveries`,
      summary: "The delivery log, newest first",
      tags: TAGS,
      permissions: read,
      params: ENDPOINT_PARAM,
      query: DeliveriesQuerySchema,
      responses: {
        200: {
          description: "The deliveries",
          body: v.object({ deliveries: v.array(WebhookDeliverySchema) }),
        },
        ...errorResponses(400, 401, 403, 404),
      },
    },
    {
      method: "POST",
      path: `${item}/deliveries/:deliveryId/replay`,
      summary: "Replay a dead-lettered delivery",
      tags: TAGS,
      permissions: manage,
      params: { ...ENDPOINT_PARAM, deliveryId: "The delivery id" },
      responses: {
        202: { description: "The delivery, queued again", body: WebhookDeliverySchema },
        ...errorResponses(401, 403, 404, 409),
      },
    },
  ];
}

/** What the webhook routes need besides the app's dependencies. */
export interface WebhookRoutesDeps {
  /** Holds the webhook endpoints and their deliveries. */
  readonly storage: Storage;
  /** The callers' subject snapshots, for the permission fences. */
  readonly snapshots: SubjectSnapshots;
  /** Records emitted events durably; optional. */
  readonly publisher?: EventPublisher;
  /** Called after a delivery was queued (the dispatcher's `wake`). */
  readonly wake?: () => void;
}

/** An endpoint as the API shows it: never the secret. */
export function endpointView(e: WebhookEndpointRecord) {
  return {
    id: e.id,
    realmId: e.realmId,
    orgId: e.orgId,
    url: e.url,
    description: e.description,
    eventPatterns: [...e.eventPatterns],
    enabled: e.enabled,
    consecutiveFailures: e.consecutiveFailures,
    disabledAt: e.disabledAt?.toISOString() ?? null,
    previousSecretExpiresAt: e.previousSecretExpiresAt?.toISOString() ?? null,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}

/** A delivery as the log shows it. */
export function deliveryView(d: WebhookDeliveryRecord) {
  return {
    id: d.id,
    endpointId: d.endpointId,
    eventKind: d.eventKind,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === "pending" || d.status === "retrying" ? d.nextAttemptAt.toISOString() : null,
    lastError: d.lastError,
    lastStatusCode: d.lastStatusCode,
    createdAt: d.createdAt.toISOString(),
    completedAt: d.completedAt?.toISOString() ?? null,
    payload: d.payload,
  };
}

/** The audit snapshot of an endpoint (no secrets). */
function auditView(e: WebhookEndpointRecord) {
  const { createdAt: _c, updatedAt: _u, consecutiveFailures: _f, ...rest } = endpointView(e);
  return rest;
}

function refuseReceiver(target: string, policy: ReceiverPolicy): void {
  const refusal = checkReceiverUrl(target, policy);
  if (refusal !== null) {
    throw new SvcError(
      "webhook_receiver_refused",
      refusal === "private_address"
        ? "The receiver is on a private or loopback address; allow it with SVC_OUTBOUND_ALLOW_PRIVATE (or SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS)."
        : `The receiver URL is not acceptable (${refusal}); use an http(s) URL without credentials.`,
      400,
      { reason: refusal },
    );
  }
}

/** The webhook admin routes. */
export function webhookRoutes(deps: WebhookRoutesDeps): DocumentedInstaller {
  return documented((app, appDeps: AppDeps) => {
    const mount = appDeps.config.webhooks.mountPath;
    const policy: ReceiverPolicy = outboundPolicyFromConfig(appDeps.config);
    const { storage, snapshots } = deps;
    const mutationDeps = { storage, publisher: deps.publisher };
    const newSecret = () => `${WEBHOOK_SECRET_PREFIX}${randomToken(appDeps.random, 32)}`;

    /** The endpoint, if the scope covers it; 404 otherwise (other realms included). */
    const visible = async (scope: FenceScope, id: string, tx: Storage = storage) => {
      const endpoint = isUuid(id) ? await tx.webhooks.getEndpoint(id) : null;
      if (
        endpoint === null || endpoint.realmId !== scope.principal.realmId.toLowerCase() ||
        !covers(scope, endpoint.orgId)
      ) throw new NotFoundError("No such webhook endpoint.");
      return endpoint;
    };

    app.get(mount, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const query = parseQuery(c, ListWebhooksQuerySchema);
      const orgId = query.orgId?.toLowerCase();
      if (orgId !== undefined && !covers(scope, orgId)) throw new NotFoundError("No such organization.");
      const endpoints = await storage.webhooks.listEndpoints(scope.principal.realmId);
      return c.json({
        endpoints: endpoints
          .filter((e) => covers(scope, e.orgId) && (orgId === undefined || e.orgId === orgId))
          .map(endpointView),
      });
    });

    app.post(mount, noStore, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseBody(c, CreateWebhookSchema);
      const orgId = body.orgId?.toLowerCase() ?? (scope.global ? null : scope.orgId);
      // Another organization is invisible to an organization administrator: the same 404 as an unknown one.
      if (!covers(scope, orgId)) throw new NotFoundError("No such organization.");
      refuseReceiver(body.url, policy);
      const secret = newSecret();
      const { value } = await adminMutation(mutationDeps, scope, async ({ tx }) => {
        if (orgId !== null) {
          const org = await tx.organizations.get(orgId);
          if (org === null || org.realmId !== scope.principal.realmId.toLowerCase()) {
            throw new NotFoundError("No such organization.");
          }
        }
        const endpoint = await tx.webhooks.createEndpoint({
          realmId: scope.principal.realmId,
          orgId,
          url: body.url,
          description: body.description ?? null,
          secret,
          eventPatterns: body.eventPatterns,
        });
        return {
          value: endpoint,
          audit: {
            action: "webhook.endpoint.create",
            target: endpoint.id,
            orgId,
            after: auditView(endpoint),
          },
        };
      });
      return c.json({ ...endpointView(value), secret }, 201);
    });

    app.get(`${mount}/:endpointId`, async (c) => {
      const scope = await fence(c, snapshots, READ);
      return c.json(endpointView(await visible(scope, c.req.param("endpointId"))));
    });

    app.patch(`${mount}/:endpointId`, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseBody(c, UpdateWebhookSchema);
      if (body.url !== undefined) refuseReceiver(body.url, policy);
      const { value } = await adminMutation(mutationDeps, scope, async ({ tx }) => {
        const before = await visible(scope, c.req.param("endpointId"), tx);
        const after = await tx.webhooks.updateEndpoint(before.id, body);
        if (after === null) throw new NotFoundError("No such webhook endpoint.");
        if (sameView(auditView(before), auditView(after))) return { value: after, audit: null };
        return {
          value: after,
          audit: {
            action: "webhook.endpoint.update",
            target: after.id,
            orgId: after.orgId,
            before: auditView(before),
            after: auditView(after),
          },
        };
      });
      return c.json(endpointView(value));
    });

    app.delete(`${mount}/:endpointId`, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      await adminMutation(mutationDeps, scope, async ({ tx }) => {
        const before = await visible(scope, c.req.param("endpointId"), tx);
        if (!await tx.webhooks.deleteEndpoint(before.id)) {
          throw new NotFoundError("No such webhook endpoint.");
        }
        return {
          value: null,
          audit: {
            action: "webhook.endpoint.delete",
            target: before.id,
            orgId: before.orgId,
            before: auditView(before),
          },
        };
      });
      return c.body(null, 204);
    });

    app.post(`${mount}/:endpointId/rotate-secret`, noStore, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const body = await parseOptionalBody(c, RotateSecretSchema);
      const overlapSeconds = body.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
      const secret = newSecret();
      const { value } = await adminMutation(mutationDeps, scope, async ({ tx }) => {
        const before = await visible(scope, c.req.param("endpointId"), tx);
        const after = await tx.webhooks.rotateSecret(before.id, secret, overlapSeconds * 1000);
        if (after === null) throw new NotFoundError("No such webhook endpoint.");
        return {
          value: after,
          audit: {
            action: "webhook.endpoint.rotate_secret",
            target: after.id,
            orgId: after.orgId,
            before: { previousSecretExpiresAt: before.previousSecretExpiresAt?.toISOString() ?? null },
            after: {
              overlapSeconds,
              previousSecretExpiresAt: after.previousSecretExpiresAt?.toISOString() ?? null,
            },
          },
        };
      });
      return c.json({ ...endpointView(value), secret });
    });

    app.post(`${mount}/:endpointId/test`, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const { value } = await adminMutation(mutationDeps, scope, async ({ tx }) => {
        const endpoint = await visible(scope, c.req.param("endpointId"), tx);
        const payload = webhookBody(randomUuid(appDeps.random), {
          kind: EVENT_KINDS.webhookTest,
          occurredAt: appDeps.clock.now(),
          realmId: endpoint.realmId,
          orgId: endpoint.orgId,
          userId: null,
          data: { endpointId: endpoint.id, message: "This is a test delivery from svc." },
        });
        const delivery = await tx.webhooks.enqueue(endpoint.id, EVENT_KINDS.webhookTest, payload);
        return {
          value: delivery,
          audit: {
            action: "webhook.endpoint.test",
            target: endpoint.id,
            orgId: endpoint.orgId,
            after: { deliveryId: delivery.id },
          },
        };
      });
      deps.wake?.();
      return c.json(deliveryView(value), 202);
    });

    app.get(`${mount}/:endpointId/deliveries`, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const endpoint = await visible(scope, c.req.param("endpointId"));
      const query = parseQuery(c, DeliveriesQuerySchema);
      const deliveries = await storage.webhooks.listDeliveries(endpoint.id, {
        status: query.status,
        limit: query.limit ?? 50,
      });
      return c.json({ deliveries: deliveries.map(deliveryView) });
    });

    app.post(`${mount}/:endpointId/deliveries/:deliveryId/replay`, async (c) => {
      const scope = await fence(c, snapshots, MANAGE);
      const { value } = await adminMutation(mutationDeps, scope, async ({ tx }) => {
        const endpoint = await visible(scope, c.req.param("endpointId"), tx);
        const deliveryId = c.req.param("deliveryId");
        const delivery = isUuid(deliveryId) ? await tx.webhooks.getDelivery(deliveryId) : null;
        if (delivery === null || delivery.endpointId !== endpoint.id) {
          throw new NotFoundError("No such delivery.");
        }
        if (!(await tx.webhooks.requeueDeadLetter(delivery.id))) {
          throw new ConflictError("Only dead-lettered deliveries can be replayed.", {
            status: delivery.status,
          });
        }
        const after = (await tx.webhooks.getDelivery(delivery.id))!;
        return {
          value: after,
          audit: {
            action: "webhook.delivery.replay",
            target: delivery.id,
            orgId: endpoint.orgId,
            before: { status: delivery.status, attempts: delivery.attempts },
            after: { status: after.status, attempts: after.attempts },
          },
        };
      });
      deps.wake?.();
      return c.json(deliveryView(value), 202);
    });
  }, (appDeps) => webhookOperations(appDeps.config.webhooks.mountPath));
}
