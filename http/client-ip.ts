/**
 * The client address of a request. The host passes it to `app.fetch(request, env)` as
 * `env.clientAddress` (each runtime adapter reads it from its server: Deno's `remoteAddr`,
 * Node's socket, Bun's `requestIP`); tests pass it to `app.request(path, init, env)`.
 * Forwarded headers (`X-Forwarded-For`) are not trusted: svc behind a proxy sees the proxy.
 *
 * @module
 */
import type { Context } from "hono";
import { parseIp } from "../core/net/ip.ts";

/** What hosts put in Hono's `env` for each request. */
export interface ClientBindings {
  /** The peer's IP address, when the server knows it. */
  readonly clientAddress?: string;
}

/** The client's IP address, or null when the host did not tell it (or told something that is not an IP). */
export function clientIp(c: Context): string | null {
  const address = (c.env as ClientBindings | undefined)?.clientAddress;
  if (typeof address !== "string" || address === "") return null;
  return parseIp(address) === null ? null : address;
}
