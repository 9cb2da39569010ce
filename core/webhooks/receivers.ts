/**
 * The SSRF guard of webhook receivers. A receiver URL must be http(s) without credentials,
 * and its host must not be a loopback, private, link-local, shared, multicast or reserved
 * address (IPv4 or IPv6, including IPv4-mapped IPv6), nor `localhost`, unless the operator
 * allows it (`webhooks.allowPrivateReceivers`: host names, IP addresses or CIDR ranges).
 * The guard runs when an endpoint is created or changed and again before every send (with
 * the addresses the host name resolves to, when a resolver is given). Redirects are never
 * followed by the dispatcher, so a public receiver cannot bounce a delivery inward.
 *
 * @module
 */

/** Why a receiver URL was refused. */
export type ReceiverRefusal = "invalid_url" | "unsupported_scheme" | "credentials_in_url" | "private_address";

/** The operator's allow-list of private or loopback receivers. */
export interface ReceiverPolicy {
  /** Host names (exact, case-insensitive), IP addresses, or CIDR ranges (`127.0.0.0/8`, `fd00::/8`). */
  readonly allowPrivate: readonly string[];
}

/** A policy that allows no private receivers. */
export const PUBLIC_RECEIVERS_ONLY: ReceiverPolicy = { allowPrivate: [] };

type Ip = { readonly v: 4 | 6; readonly bytes: Uint8Array };

/** Parses an IPv4 dotted quad or an IPv6 address (brackets allowed); null otherwise. */
export function parseIp(text: string): Ip | null {
  const s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) {
    const bytes = v4.slice(1).map(Number);
    return bytes.every((b) => b <= 255) ? { v: 4, bytes: Uint8Array.from(bytes) } : null;
  }
  if (!s.includes(":") || !/^[0-9a-fA-F:.]+$/.test(s)) return null;
  let head = s, tail = "";
  const dbl = s.indexOf("::");
  if (dbl >= 0) {
    if (s.indexOf("::", dbl + 1) >= 0) return null;
    head = s.slice(0, dbl);
    tail = s.slice(dbl + 2);
  }
  const groups = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if (i === pieces.length - 1 && p.includes(".")) {
        const embedded = parseIp(p);
        if (!embedded || embedded.v !== 4) return null;
        out.push((embedded.bytes[0] << 8) | embedded.bytes[1], (embedded.bytes[2] << 8) | embedded.bytes[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return null;
        out.push(parseInt(p, 16));
      }
    }
    return out;
  };
  const h = groups(head), t = groups(tail);
  if (h === null || t === null) return null;
  const missing = 8 - h.length - t.length;
  if (dbl >= 0 ? missing < 1 : missing !== 0) return null;
  const all = [...h, ...new Array(missing).fill(0), ...t];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return { v: 6, bytes };
}

function inPrefix(ip: Ip, net: Ip, bits: number): boolean {
  if (ip.v !== net.v) return false;
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8);
    if ((ip.bytes[i >> 3] & mask) !== (net.bytes[i >> 3] & mask)) return false;
  }
  return true;
}

function cidr(text: string): { net: Ip; bits: number } | null {
  const slash = text.lastIndexOf("/");
  const net = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!net) return null;
  const max = net.v === 4 ? 32 : 128;
  const bits = slash < 0 ? max : Number(text.slice(slash + 1));
  if (
    !Number.isInteger(bits) || bits < 0 || bits > max || (slash >= 0 && !/^\d+$/.test(text.slice(slash + 1)))
  ) {
    return null;
  }
  return { net, bits };
}

/** Whether an allow-list entry is well formed: a host name, an IP address or a CIDR range. */
export function isReceiverAllowEntry(entry: string): boolean {
  return cidr(entry) !== null || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(entry);
}

const BLOCKED: readonly { net: Ip; bits: number }[] = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
  "::/128",
  "::1/128",
  "64:ff9b::/96",
  "100::/64",
  "2001:db8::/32",
  "fc00::/7",
  "fe80::/10",
  "fec0::/10",
  "ff00::/8",
].map((c) => cidr(c)!);

/** Whether an address is loopback, private, link-local, shared, reserved or multicast. */
export function isPrivateAddress(address: string): boolean {
  const ip = parseIp(address);
  if (!ip) return false;
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses: judge the IPv4 part.
  if (ip.v === 6 && ip.bytes.slice(0, 10).every((b) => b === 0)) {
    const marker = (ip.bytes[10] << 8) | ip.bytes[11];
    if (marker === 0xffff || (marker === 0 && !ip.bytes.slice(12, 15).every((b) => b === 0))) {
      return isPrivateAddress(Array.from(ip.bytes.slice(12)).join("."));
    }
  }
  return BLOCKED.some((b) => inPrefix(ip, b.net, b.bits));
}

function allowed(host: string, policy: ReceiverPolicy): boolean {
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  const ip = parseIp(bare);
  for (const entry of policy.allowPrivate) {
    const range = cidr(entry);
    if (range && ip && inPrefix(ip, range.net, range.bits)) return true;
    if (!range && entry.toLowerCase() === bare.toLowerCase()) return true;
  }
  return false;
}

function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost");
}

/**
 * Checks a receiver URL against the policy: null when it may receive deliveries, otherwise why
 * not. `resolved` are the addresses its host name resolves to (when the caller resolved it).
 */
export function checkReceiverUrl(
  url: string,
  policy: ReceiverPolicy,
  resolved: readonly string[] = [],
): ReceiverRefusal | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "invalid_url";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "unsupported_scheme";
  if (parsed.username !== "" || parsed.password !== "") return "credentials_in_url";
  const host = parsed.hostname;
  if (allowed(host, policy)) return null;
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  if (isLocalName(bare) || isPrivateAddress(bare)) return "private_address";
  for (const address of resolved) {
    if (isPrivateAddress(address) && !allowed(address, policy)) return "private_address";
  }
  return null;
}
