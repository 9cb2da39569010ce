/**
 * The SSRF guard of webhook receivers: the names the webhook API has always used for svc's one
 * set of outbound address rules (`core/net/outbound-rules.ts`). A receiver URL must be http(s)
 * without credentials, and its host must not be a loopback, private, link-local, shared,
 * multicast or reserved address (IPv4 or IPv6, including IPv4-mapped IPv6), nor `localhost`,
 * unless the operator allows it (`outbound.allowPrivate`, or `webhooks.allowPrivateReceivers`).
 * The rules run when an endpoint is created or changed, and every delivery goes through the
 * outbound guard (`core/net/outbound.ts`), which applies them again to the addresses the host name
 * resolves to and never lets a redirect bounce a delivery inward.
 *
 * @module
 */
import {
  checkOutboundUrl,
  isOutboundAllowEntry,
  isRefusedAddress,
  type OutboundPolicy,
  type OutboundRefusal,
  PUBLIC_DESTINATIONS_ONLY,
} from "../net/outbound-rules.ts";

/** Why a receiver URL was refused. */
export type ReceiverRefusal = OutboundRefusal;

/** The operator's allow-list of private or loopback receivers. */
export type ReceiverPolicy = OutboundPolicy;

/** A policy that allows no private receivers. */
export const PUBLIC_RECEIVERS_ONLY: ReceiverPolicy = PUBLIC_DESTINATIONS_ONLY;

/** Whether an allow-list entry is well formed: a host name, an IP address or a CIDR range. */
export const isReceiverAllowEntry: (entry: string) => boolean = isOutboundAllowEntry;

/** Whether an address is loopback, private, link-local, shared, reserved, multicast or metadata. */
export const isPrivateAddress: (address: string) => boolean = isRefusedAddress;

/**
 * Checks a receiver URL against the policy: null when it may receive deliveries, otherwise why
 * not. `resolved` are the addresses its host name resolves to (when the caller resolved it).
 */
export function checkReceiverUrl(
  url: string,
  policy: ReceiverPolicy,
  resolved: readonly string[] = [],
): ReceiverRefusal | null {
  return checkOutboundUrl(url, policy, resolved);
}
