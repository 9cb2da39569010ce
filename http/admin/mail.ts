/**
 * The mail outbox over the admin API (issue 14), realm-level, fenced by `svc:global:mail-read`:
 *
 * | Method | Path | |
 * |---|---|---|
 * | GET | `/svc-admin/mail` | messages to the realm's users, newest first: subject, kind, delivery state |
 * | GET | `/svc-admin/mail/{id}` | one message with its text and HTML bodies |
 *
 * It is how an operator reads the mail of a running server, on the embedded store too (whose
 * folder the server holds locked) and with the outbox-only transport. Bodies hold the one secret
 * each message delivers, so both answers are `no-store`. Each message carries its realm (issue 24):
 * a realm administrator lists and reads only its realm's messages, by that column, never by matching
 * the address to the realm's users (another realm may have a user with the same address); other
 * messages are 404.
 *
 * @module
 */
import * as v from "valibot";
import { MAIL_READ_GLOBAL } from "../../core/definitions/permissions/mail.ts";
import type { OutboxMessage } from "../../core/storage/mail-outbox.ts";
import { fence } from "../auth/fence.ts";
import { documented, errorResponses, IsoTimeSchema, type OperationDoc } from "../openapi/operation.ts";
import { noStore } from "../security-headers.ts";
import type { AdminRouteDeps } from "./deps.ts";
import { hidden, listBody, listSchema, PAGE_QUERY_ENTRIES, pageOf, parseQuery } from "./kit.ts";

const READ = { global: [MAIL_READ_GLOBAL] };
const BASE = "/svc-admin/mail";

const STATUSES = ["pending", "retrying", "sent", "dead_letter"] as const;

/** The query of the list. */
export const MailListQuerySchema = v.strictObject({
  ...PAGE_QUERY_ENTRIES,
  to: v.optional(
    v.pipe(v.string(), v.maxLength(320), v.description("Only messages to this address (case-insensitive).")),
  ),
  kind: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z_]{1,64}$/, "kind is a message kind such as password_reset")),
  ),
  status: v.optional(v.pipe(v.picklist(STATUSES), v.description("Only messages in this delivery state."))),
});

/** A message in the list (no bodies). */
export const MailSummarySchema = v.pipe(
  v.object({
    id: v.string(),
    kind: v.pipe(v.string(), v.description("What the message is for: password_reset, invitation…")),
    to: v.string(),
    from: v.string(),
    subject: v.string(),
    createdAt: IsoTimeSchema,
    deliveryStatus: v.pipe(v.picklist(STATUSES), v.description("pending, retrying, sent or dead_letter.")),
    attempts: v.number(),
    nextAttemptAt: v.pipe(v.nullable(IsoTimeSchema), v.description("When the next delivery attempt is due.")),
    lastError: v.pipe(v.nullable(v.string()), v.description("Why the last attempt failed.")),
    sentAt: v.nullable(IsoTimeSchema),
  }),
  v.title("MailSummary"),
);

/** A message with its bodies. */
export const MailMessageSchema = v.pipe(
  v.object({
    ...MailSummarySchema.entries,
    text: v.pipe(v.string(), v.description("The plain-text body (holds the message's code or link).")),
    html: v.pipe(v.string(), v.description("The HTML body.")),
  }),
  v.title("MailMessage"),
);

function summary(m: OutboxMessage) {
  return {
    id: m.id,
    kind: m.kind,
    to: m.to,
    from: m.from,
    subject: m.subject,
    createdAt: m.createdAt.toISOString(),
    deliveryStatus: m.deliveryStatus,
    attempts: m.attempts,
    nextAttemptAt: m.deliveryStatus === "pending" || m.deliveryStatus === "retrying"
      ? m.nextAttemptAt?.toISOString() ?? null
      : null,
    lastError: m.lastError,
    sentAt: m.sentAt?.toISOString() ?? null,
  };
}

const TAGS = ["Admin: mail"];

const OPERATIONS: readonly OperationDoc[] = [
  {
    method: "GET",
    path: BASE,
    summary: "List the realm's mail",
    description: "Newest first, without bodies. Only the realm's messages: other realms' mail is not shown.",
    tags: TAGS,
    permissions: READ.global,
    query: MailListQuerySchema,
    responses: {
      200: { description: "One page", body: listSchema(MailSummarySchema) },
      ...errorResponses(400, 401, 403),
    },
  },
  {
    method: "GET",
    path: `${BASE}/:id`,
    summary: "Read one message",
    description:
      "With its text and HTML bodies, which hold the code or link it delivers (answered no-store).",
    tags: TAGS,
    permissions: READ.global,
    params: { id: "The message id." },
    responses: {
      200: { description: "The message", body: MailMessageSchema },
      ...errorResponses(401, 403, 404),
    },
  },
];

/** The mail outbox routes. */
export function mailRoutes(deps: Pick<AdminRouteDeps, "storage" | "snapshots">) {
  const { storage, snapshots } = deps;
  return documented((app) => {
    app.get(BASE, noStore, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const query = parseQuery(c, MailListQuerySchema);
      const page = pageOf(query);
      const filter = {
        realmId: scope.principal.realmId,
        to: query.to,
        kind: query.kind,
        deliveryStatus: query.status,
      };
      const [items, total] = await Promise.all([
        storage.mailOutbox.list({ ...filter, offset: page.offset, limit: page.limit, newestFirst: true }),
        storage.mailOutbox.count(filter),
      ]);
      return c.json(listBody(items.map(summary), page, total));
    });

    app.get(`${BASE}/:id`, noStore, async (c) => {
      const scope = await fence(c, snapshots, READ);
      const message = await storage.mailOutbox.get(c.req.param("id"), { realmId: scope.principal.realmId });
      if (message === null) throw hidden("message");
      return c.json({ ...summary(message), text: message.text, html: message.html });
    });
  }, OPERATIONS);
}
