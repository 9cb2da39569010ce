/**
 * The client address of a request. The host passes it to `app.fetch(request, env)` as
 * `env.clientAddress` (each runtime adapter reads it from its server: Deno's `remoteAddr`,
 * Node's socket, Bun's `requestIP`); tests pass it to `app.request(path, init, env)`.
 * `X-Forwarded-For` is believed only from configured proxies (`SVC_TRUSTED_PROXIES`): see
 * {@link resolveClientAddress}, which the server entry applies before the app sees the request.
 *
 * @module
 */
import type { Context } from "hono";
import { CidrTable, parseCidr, parseIp } from "../core/net/ip.ts";

/** What hosts put in Hono's `env` for each request. */
export interface ClientBindings {
  /** The peer's IP address, when the server knows it. */
  readonly clientAddress?: string;
  /**
   * True when the request came from an HTTP server whose parser delivers no more body bytes than
   * a declared `Content-Length` (Deno's, Node's and Bun's servers: HTTP/1.1 framing, and HTTP/2
   * refuses DATA beyond a declared length). The body limit then reads such a body in one call
   * (`http/body-limit.ts`). Absent for a Request made in process, which nothing frames.
   */
  readonly framedBodies?: boolean;
}

/** The client's IP address, or null when the host did not tell it (or told something that is not an IP). */
export function clientIp(c: Context): string | null {
  const address = (c.env as ClientBindings | undefined)?.clientAddress;
  if (typeof address !== "string" || address === "") return null;
  return parseIp(address) === null ? null : address;
}

/** A set of trusted proxy ranges. */
export class TrustedProxies {
  readonly #table = new CidrTable<true>();

  /** `ranges`: IP addresses or CIDR ranges (already validated by the configuration). */
  constructor(ranges: readonly string[]) {
    for (const text of ranges) {
      const range = parseCidr(text);
      if (range !== null) this.#table.set(range, true);
    }
  }

  /** Whether any proxy is trusted at all. */
  get any(): boolean {
    return this.#table.size > 0;
  }

  /** Whether an address belongs to a trusted proxy. */
  trusts(address: string): boolean {
    return this.#table.lookup(address) === true;
  }
}

/**
 * The client address of a request: the peer, unless the peer is a trusted proxy, in which case
 * `X-Forwarded-For` is walked from the right (the hop nearest svc) past trusted proxies to the
 * first address that is not one. A malformed entry stops the walk at the last trusted hop, so a
 * client can never choose its own address by sending the header itself.
 *
 * @example
 * ```ts
 * const proxies = new TrustedProxies(["10.0.0.0/8"]);
 * resolveClientAddress("10.0.0.2", "198.51.100.7, 10.0.0.9", proxies); // "198.51.100.7"
 * resolveClientAddress("203.0.113.5", "198.51.100.7", proxies); // "203.0.113.5" (not a proxy)
 * ```
 */
export function resolveClientAddress(
  peer: string | undefined,
  forwardedFor: string | null,
  proxies: TrustedProxies,
): string | undefined {
  if (peer === undefined || forwardedFor === null || !proxies.any || !proxies.trusts(peer)) return peer;
  let client = peer;
  const hops = forwardedFor.split(",").map((hop) => hop.trim()).filter((hop) => hop !== "");
  for (let i = hops.length - 1; i >= 0; i--) {
    if (parseIp(hops[i]) === null) return client;
    client = hops[i];
    if (!proxies.trusts(client)) return client;
  }
  return client;
}
