/**
 * IP addresses and CIDR ranges as integers, and a longest-prefix-match table over them (used by
 * the abuse gate's per-IP buckets and the risk gate's offline geolocation and IP reputation).
 * IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`) are treated as the IPv4 address they carry.
 *
 * @module
 */

/** An address as an integer: 32 bits for IPv4, 128 for IPv6. */
export interface IpAddress {
  readonly version: 4 | 6;
  readonly value: bigint;
}

/** A CIDR range: the network (host bits zero) and the prefix length. */
export interface CidrRange extends IpAddress {
  readonly prefix: number;
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function parseV4(text: string): bigint | null {
  const m = V4.exec(text);
  if (!m) return null;
  let value = 0n;
  for (let i = 1; i <= 4; i++) {
    const part = m[i];
    if (part.length > 1 && part.startsWith("0")) return null; // no octal-looking octets
    const n = Number(part);
    if (n > 255) return null;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function parseV6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return null;
  const double = text.indexOf("::");
  if (double >= 0 && text.indexOf("::", double + 1) >= 0) return null;
  const split = (part: string): number[] | null => {
    if (part === "") return [];
    const pieces = part.split(":");
    const out: number[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if (i === pieces.length - 1 && p.includes(".")) {
        const v4 = parseV4(p);
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = split(double >= 0 ? text.slice(0, double) : text);
  const tail = double >= 0 ? split(text.slice(double + 2)) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (double >= 0 ? missing < 1 : missing !== 0) return null;
  let value = 0n;
  for (const group of [...head, ...new Array(missing).fill(0), ...tail]) {
    value = (value << 16n) | BigInt(group);
  }
  return value;
}

/**
 * Parses an IPv4 dotted quad or an IPv6 address (brackets and a `%zone` allowed); null when it
 * is neither. An IPv4-mapped IPv6 address comes back as IPv4.
 */
export function parseIp(text: string): IpAddress | null {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  const v4 = parseV4(s);
  if (v4 !== null) return { version: 4, value: v4 };
  const v6 = parseV6(s);
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn) return { version: 4, value: v6 & 0xffffffffn };
  return { version: 6, value: v6 };
}

/** The canonical text of an address (IPv6 in lowercase with the longest zero run compressed). */
export function formatIp(ip: IpAddress): string {
  if (ip.version === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join(".");
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((ip.value >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1, bestLength = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i > 1) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/**
 * The bucket an address is counted in by rate limits: an IPv4 address itself, an IPv6 address
 * by its first `ipv6PrefixBits` bits (`2001:db8::/64`; IPv4-mapped IPv6 counts as IPv4), and
 * text that is no address by its trimmed, lowercased first 100 characters (`raw:…`).
 */
export function ipCountingBucket(text: string, ipv6PrefixBits = 64): string {
  const ip = parseIp(text.trim());
  if (!ip) return `raw:${text.trim().toLowerCase().slice(0, 100)}`;
  if (ip.version === 4) return formatIp(ip);
  const bits = BigInt(128 - Math.min(128, Math.max(0, ipv6PrefixBits)));
  return `${formatIp({ version: 6, value: (ip.value >> bits) << bits })}/${128 - Number(bits)}`;
}

/**
 * Parses `address/prefix` (or a bare address: a single-address range). Host bits set below the
 * prefix are cleared. An IPv4-mapped IPv6 range (`::ffff:0:0/96` or longer) becomes IPv4.
 */
export function parseCidr(text: string): CidrRange | null {
  const s = text.trim();
  const slash = s.indexOf("/");
  const addressText = slash < 0 ? s : s.slice(0, slash);
  const prefixText = slash < 0 ? null : s.slice(slash + 1);
  if (prefixText !== null && !/^\d{1,3}$/.test(prefixText)) return null;
  let bare = addressText;
  if (bare.startsWith("[") && bare.endsWith("]")) bare = bare.slice(1, -1);
  const v4 = parseV4(bare);
  let version: 4 | 6;
  let value: bigint;
  let prefix: number;
  if (v4 !== null) {
    version = 4;
    value = v4;
    prefix = prefixText === null ? 32 : Number(prefixText);
    if (prefix > 32) return null;
  } else {
    const v6 = parseV6(bare);
    if (v6 === null) return null;
    prefix = prefixText === null ? 128 : Number(prefixText);
    if (prefix > 128) return null;
    if (v6 >> 32n === 0xffffn && prefix >= 96) {
      version = 4;
      value = v6 & 0xffffffffn;
      prefix -= 96;
    } else {
      version = 6;
      value = v6;
    }
  }
  const bits = BigInt((version === 4 ? 32 : 128) - prefix);
  return { version, value: (value >> bits) << bits, prefix };
}

/**
 * A longest-prefix-match table from CIDR ranges to values: the most specific range containing
 * an address wins (a later entry for the same range replaces the earlier one). Lookups cost one
 * map probe per distinct prefix length in use.
 */
export class CidrTable<T> {
  readonly #byVersion = { 4: new Map<number, Map<bigint, T>>(), 6: new Map<number, Map<bigint, T>>() };
  readonly #prefixes = { 4: [] as number[], 6: [] as number[] };
  #size = 0;

  /** How many ranges the table holds. */
  get size(): number {
    return this.#size;
  }

  /** Adds (or replaces) a range. */
  set(range: CidrRange, value: T): void {
    const maps = this.#byVersion[range.version];
    let map = maps.get(range.prefix);
    if (!map) {
      maps.set(range.prefix, map = new Map());
      const prefixes = this.#prefixes[range.version];
      prefixes.push(range.prefix);
      prefixes.sort((a, b) => b - a);
    }
    const bits = BigInt((range.version === 4 ? 32 : 128) - range.prefix);
    const key = range.value >> bits;
    if (!map.has(key)) this.#size++;
    map.set(key, value);
  }

  /** The value of the most specific range containing the address, or null. */
  lookup(address: IpAddress | string): T | null {
    const ip = typeof address === "string" ? parseIp(address) : address;
    if (!ip) return null;
    const total = ip.version === 4 ? 32 : 128;
    const maps = this.#byVersion[ip.version];
    for (const prefix of this.#prefixes[ip.version]) {
      const hit = maps.get(prefix)!.get(ip.value >> BigInt(total - prefix));
      if (hit !== undefined) return hit;
    }
    return null;
  }
}
