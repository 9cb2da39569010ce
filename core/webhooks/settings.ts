/**
 * The settings of webhook delivery (`SvcConfig.webhooks`): its valibot section, its written-out
 * types and its `SVC_WEBHOOK*` variables. `core/config/schema.ts` composes it into the whole
 * configuration.
 *
 * @module
 */
import * as v from "valibot";
import { type Exactly, int, mountPath, receiverAllowList, retrySchedule } from "../settings/fields.ts";
import type { EnvSetting } from "../settings/env.ts";

/** `SvcConfig.webhooks`: webhook delivery. */
export type WebhooksConfig = {
  mountPath: string;
  retryScheduleSeconds: number[];
  disableAfterConsecutiveFailures: number;
  allowPrivateReceivers: string[];
};

/** `SvcConfigInput.webhooks`: webhook delivery, as a config file gives it. */
export type WebhooksConfigInput = {
  mountPath?: string;
  retryScheduleSeconds?: number[];
  disableAfterConsecutiveFailures?: number;
  allowPrivateReceivers?: string[];
};

/** The `webhooks` section of the configuration. */
export const webhooksSettingsSchema = v.optional(
  v.strictObject({
    mountPath: v.optional(mountPath(false), "/svc-admin/webhooks"),
    retryScheduleSeconds: v.optional(retrySchedule(), [60, 300, 1800, 7200, 43200]),
    disableAfterConsecutiveFailures: v.optional(int(1, 1000), 10),
    /** Private or loopback receivers allowed despite the SSRF guard (empty: public only). */
    allowPrivateReceivers: v.optional(receiverAllowList(), []),
  }),
  {},
);

/** The `SVC_*` variables of `webhooks`. */
export const WEBHOOKS_ENV_SETTINGS: readonly EnvSetting[] = [
  {
    name: "SVC_WEBHOOK_MOUNT",
    path: "webhooks.mountPath",
    kind: "string",
    doc: "path of the webhook admin API",
  },
  {
    name: "SVC_WEBHOOK_RETRY_SCHEDULE_SECONDS",
    path: "webhooks.retryScheduleSeconds",
    kind: "int-list",
    doc: "comma-separated delays between webhook retries, then dead-letter",
  },
  {
    name: "SVC_WEBHOOK_DISABLE_AFTER_FAILURES",
    path: "webhooks.disableAfterConsecutiveFailures",
    kind: "int",
    doc: "consecutive failed deliveries (retries exhausted) that disable a webhook endpoint",
  },
  {
    name: "SVC_WEBHOOK_ALLOW_PRIVATE_RECEIVERS",
    path: "webhooks.allowPrivateReceivers",
    kind: "string-list",
    doc: "comma-separated hosts, IPs or CIDR ranges of private/loopback receivers allowed (SSRF guard)",
    defaultText: "unset (public only)",
  },
];

// The written-out types are exactly what the schema infers: `deno check` fails otherwise.
const _webhooksOutput: Exactly<v.InferOutput<typeof webhooksSettingsSchema>, WebhooksConfig> = true;
const _webhooksInput: Exactly<v.InferInput<typeof webhooksSettingsSchema>, WebhooksConfigInput | undefined> =
  true;
