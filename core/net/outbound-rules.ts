/**
 * The address rules of svc's one outbound guard (SSRF): which URLs and which addresses svc never
 * fetches from the server side, whatever asked (webhook deliveries, remote JWKS, federation
 * discovery and token endpoints, CAPTCHA verification). A URL must be http(s) without
 * credentials; its host, and every address its name resolves to, must not be loopback, private,
 * link-local, shared (CGNAT), unique-local, multicast, unspecified, reserved, documentation or a
 * cloud metadata address, nor `localhost`, unless the operator allows it (`outbound.allowPrivate`
 * and the older `webhooks.allowPrivateReceivers`: host names, IP addresses or CIDR ranges).
 * IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d`, 6to4 `2002:aabb:ccdd::`) are judged by the IPv4 address they carry.
 *
 * Pure rules, no I/O: the guarded fetch (`core/net/outbound.ts`) resolves names through the
 * runtime adapter and applies these rules to the answers.
 *
 * @module
 */
import { type CidrRange, type IpAddress, parseCidr, parseIp } from "./ip.ts";

/** Why a URL was refused before any request. */
export type OutboundRefusal = "invalid_url" | "unsupported_scheme" | "credentials_in_url" | "private_address";

/** The operator's allow-list of private or loopback destinations (empty: public only). */
export interface OutboundPolicy {
  /** Host names (exact, case-insensitive), IP addresses, or CIDR ranges (`127.0.0.0/8`, `fd00::/8`). */
  readonly allowPrivate: readonly string[];
}

/** A policy that allows no private destination (the default). */
export const PUBLIC_DESTINATIONS_ONLY: OutboundPolicy = { allowPrivate: [] };

const REFUSED_RANGES: readonly CidrRange[] = [
  "0.0.0.0/8", // "this network", unspecified
  "10.0.0.0/8", // private
  "100.64.0.0/10", // shared address space (CGNAT; Alibaba's metadata 100.100.100.200)
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local (AWS, GCP, Azure, OpenStack metadata 169.254.169.254)
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments (Oracle's metadata 192.0.0.192)
  "192.0.2.0/24", // documentation
  "192.88.99.0/24", // 6to4 relay anycast
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "168.63.129.16/32", // Azure's wire server (a public address reachable only from inside Azure)
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast
  "::/128", // unspecified
  "::1/128", // loopback
  "64:ff9b::/96", // NAT64
  "64:ff9b:1::/48", // local-use NAT64
  "100::/64", // discard-only
  "2001::/32", // Teredo
  "2001:db8::/32", // documentation
  "fc00::/7", // unique local (AWS's IPv6 metadata fd00:ec2::254)
  "fe80::/10", // link-local
  "fec0::/10", // site-local (deprecated)
  "ff00::/8", // multicast
].map((text) => parseCidr(text)!);

function inRange(ip: IpAddress, range: CidrRange): boolean {
  if (ip.version !== range.version) return false;
  const bits = BigInt((ip.version === 4 ? 32 : 128) - range.prefix);
  return ip.value >> bits === range.value >> bits;
}

/** The IPv4 address an IPv6 address carries (IPv4-compatible or 6to4), or null. */
function embeddedV4(ip: IpAddress): IpAddress | null {
  if (ip.version !== 6) return null;
  if (ip.value >> 32n === 0n) return { version: 4, value: ip.value & 0xffffffffn }; // ::a.b.c.d
  if (ip.value >> 112n === 0x2002n) return { version: 4, value: (ip.value >> 80n) & 0xffffffffn }; // 6to4
  return null;
}

/**
 * Whether an address is one svc never fetches from unless allowed: loopback, private, link-local,
 * CGNAT, unique-local, multicast, unspecified, reserved, documentation or cloud metadata (IPv4,
 * IPv6, and IPv6 forms carrying such an IPv4 address). Text that is no address: false.
 */
export function isRefusedAddress(address: string): boolean {
  const ip = parseIp(address);
  return ip !== null && refused(ip);
}

function refused(ip: IpAddress): boolean {
  const inner = embeddedV4(ip);
  if (inner !== null && refused(inner)) return true;
  return REFUSED_RANGES.some((range) => inRange(ip, range));
}

/** Whether an allow-list entry is well formed: a host name, an IP address or a CIDR range. */
export function isOutboundAllowEntry(entry: string): boolean {
  return parseCidr(entry) !== null || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(entry);
}

function bare(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** Whether the policy allows a host name (by name) or an address (by address or range). */
export function isAllowedDestination(host: string, policy: OutboundPolicy): boolean {
  if (policy.allowPrivate.length === 0) return false;
  const name = bare(host);
  const ip = parseIp(name);
  for (const entry of policy.allowPrivate) {
    const range = parseCidr(entry);
    if (range !== null) {
      if (ip !== null && inRange(ip, range)) return true;
    } else if (entry.toLowerCase() === name.toLowerCase()) return true;
  }
  return false;
}

/** Whether a host name is `localhost` or under `.localhost` (RFC 6761: always the loopback). */
export function isLocalName(host: string): boolean {
  const h = bare(host).toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost");
}

/**
 * Checks a URL against the rules: null when svc may fetch it, otherwise why not. `resolved` are
 * the addresses its host name resolved to (when the caller resolved it); each must pass too.
 */
export function checkOutboundUrl(
  url: string | URL,
  policy: OutboundPolicy,
  resolved: readonly string[] = [],
): OutboundRefusal | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "invalid_url";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "unsupported_scheme";
  if (parsed.username !== "" || parsed.password !== "") return "credentials_in_url";
  const host = parsed.hostname;
  if (isAllowedDestination(host, policy)) return null;
  if (isLocalName(host) || isRefusedAddress(bare(host))) return "private_address";
  for (const address of resolved) {
    if (isRefusedAddress(address) && !isAllowedDestination(address, policy)) return "private_address";
  }
  return null;
}

/**
 * The guard's policy from the configuration: `outbound.allowPrivate` and the older
 * `webhooks.allowPrivateReceivers` (which has always admitted JWKS URLs too), both empty by default.
 */
export function outboundPolicyFromConfig(config: {
  readonly outbound: { readonly allowPrivate: readonly string[] };
  readonly webhooks: { readonly allowPrivateReceivers: readonly string[] };
}): OutboundPolicy {
  return {
    allowPrivate: [...new Set([...config.outbound.allowPrivate, ...config.webhooks.allowPrivateReceivers])],
  };
}
