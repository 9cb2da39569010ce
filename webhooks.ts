/**
 * `@svc/svc/webhooks`: what a webhook receiver needs, on any runtime (Web Crypto only): verify
 * the `X-Svc-Signature` of a delivery against the endpoint secret, and the header names.
 *
 * @example A receiver on Node
 * ```ts
 * import { verifyWebhookSignature } from "@svc/svc/webhooks";
 *
 * const result = await verifyWebhookSignature({
 *   body: '{"kind":"user.created"}', // the raw body, before JSON parsing
 *   header: "t=1767225600,v1=…",    // X-Svc-Signature
 *   secret: "whsec_…",               // the endpoint's secret
 * });
 * if (!result.ok) console.log(result.reason);
 * ```
 *
 * @module
 */
export {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signWebhookPayload,
  verifyWebhookSignature,
  type VerifyWebhookSignatureInput,
  WEBHOOK_SECRET_PREFIX,
  type WebhookSignatureFailure,
  type WebhookSignatureResult,
} from "./core/webhooks/signature.ts";
