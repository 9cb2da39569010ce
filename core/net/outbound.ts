/**
 * svc's one outbound guard: the fetch every server-side request goes through (webhook deliveries,
 * remote JWKS, federation discovery, token and key endpoints, CAPTCHA verification). Per hop it
 *
 * 1. checks the URL against the address rules (`outbound-rules.ts`: http(s), no credentials, no
 *    private, loopback, link-local, CGNAT, unique-local, multicast, unspecified or metadata
 *    address unless the operator allows it);
 * 2. resolves the host name through the runtime adapter (`resolveHost`) and refuses the URL when a
 *    resolved address is refused, or when the name resolves to nothing;
 * 3. connects to the address it checked when the adapter can pin one (`connect`; DNS rebinding
 *    then has no window), otherwise fetches right after the check (the runtime resolves again:
 *    a name whose answer changes between the two lookups is the remaining window);
 * 4. never lets the runtime follow a redirect: a 3xx is answered as is, or, when the caller asks
 *    for `maxRedirects` (GET and HEAD only), its `Location` goes through steps 1 to 3 again, at
 *    most {@link MAX_REDIRECTS} hops, credentials dropped when the origin changes;
 * 5. bounds the whole exchange by a timeout (resolution, connection and body) and the body by a
 *    size cap, read as a stream and cut at the first byte past the cap.
 *
 * Failures are {@link OutboundError}s with stable codes; their messages never carry the URL
 * (whose path or query may hold a secret). Core does no I/O: the runtime's `fetch`, its resolver
 * and its pinning connector are injected by the host (`cli/run.ts` from the runtime adapter).
 *
 * @module
 */
import type { Clock } from "../clock.ts";
import { SvcError } from "../errors.ts";
import { parseIp } from "./ip.ts";
import {
  checkOutboundUrl,
  isAllowedDestination,
  type OutboundPolicy,
  type OutboundRefusal,
} from "./outbound-rules.ts";

/** The hard upper bound of redirects followed for one request. */
export const MAX_REDIRECTS = 5;
/** Default time limit of one outbound exchange, in milliseconds. */
export const DEFAULT_OUTBOUND_TIMEOUT_MS = 10_000;
/** Default cap of a response body, in bytes (1 MiB). */
export const DEFAULT_OUTBOUND_MAX_BYTES = 1024 * 1024;

/** The stable codes of {@link OutboundError}. */
export type OutboundErrorCode =
  | "outbound_invalid_url"
  | "outbound_unsupported_scheme"
  | "outbound_credentials_in_url"
  | "outbound_address_refused"
  | "outbound_unresolvable"
  | "outbound_too_many_redirects"
  | "outbound_timeout"
  | "outbound_response_too_large"
  | "outbound_unreachable";

const MESSAGES: Record<OutboundErrorCode, string> = {
  outbound_invalid_url: "The outbound URL is not a valid URL.",
  outbound_unsupported_scheme: "The outbound URL is not http or https.",
  outbound_credentials_in_url: "The outbound URL carries credentials.",
  outbound_address_refused: "The outbound URL points at a private, loopback or reserved address.",
  outbound_unresolvable: "The outbound host name does not resolve.",
  outbound_too_many_redirects: "The outbound request was redirected too many times.",
  outbound_timeout: "The outbound request timed out.",
  outbound_response_too_large: "The outbound response is larger than allowed.",
  outbound_unreachable: "The outbound host cannot be reached.",
};

const REFUSAL_CODES: Record<OutboundRefusal, OutboundErrorCode> = {
  invalid_url: "outbound_invalid_url",
  unsupported_scheme: "outbound_unsupported_scheme",
  credentials_in_url: "outbound_credentials_in_url",
  private_address: "outbound_address_refused",
};

/** An outbound request svc refused or could not complete; `code` is stable, the message names no URL. */
export class OutboundError extends SvcError {
  /** The error of `code` (status 502: an upstream problem, never the caller's). */
  constructor(code: OutboundErrorCode, options?: { readonly cause?: unknown }) {
    super(code, MESSAGES[code], 502);
    // The runtime's own error (kept for a caller that maps it to a reason; never in the message).
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** Resolves a host name to its addresses (the runtime adapter's DNS; an empty answer is refused). */
export type OutboundResolver = (hostname: string) => Promise<readonly string[]>;

/**
 * Sends a request to one of `addresses` (all checked by the guard; the runtime picks among them as
 * it would among a DNS answer) while keeping `url`'s host for the `Host` header and TLS; null when
 * the runtime cannot pin this request (then the guard fetches).
 */
export type OutboundConnector = (
  url: URL,
  addresses: readonly string[],
  init: RequestInit,
) => Promise<Response> | null;

/** The runtime's plain fetch, as injected. */
export type RuntimeFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** What the guard is built from. */
export interface OutboundGuardOptions {
  /** The operator's allow-list of private destinations (empty: public only). */
  readonly policy: OutboundPolicy;
  /** The runtime's DNS. */
  readonly resolveHost: OutboundResolver;
  /** The runtime's fetch (used when `connect` is absent or cannot pin a request). */
  readonly fetch: RuntimeFetch;
  /** Connects to the checked address (DNS-rebinding safe), where the runtime allows it. */
  readonly connect?: OutboundConnector;
  /** Default time limit of one exchange in milliseconds (default 10 000). */
  readonly timeoutMs?: number;
  /** Default body cap in bytes (default 1 MiB). */
  readonly maxResponseBytes?: number;
  /**
   * Reuses a name's checked addresses for `ttlMs` (by `clock`), at most 1000 names; absent: every
   * fetch resolves. Only with `connect`: the cached address is the one connected to, so a DNS
   * answer that changes meanwhile cannot reach the connection.
   */
  readonly resolveCache?: { readonly clock: Clock; readonly ttlMs: number };
}

/** A request through the guard: `RequestInit` and per-request limits. */
export interface OutboundRequestInit extends RequestInit {
  /**
   * Redirects to follow, each hop checked again (GET and HEAD only; at most {@link MAX_REDIRECTS}).
   * Default 0: a 3xx is answered as is.
   */
  readonly maxRedirects?: number;
  /** Time limit of this exchange in milliseconds (default: the guard's). */
  readonly timeoutMs?: number;
  /** Body cap of this response in bytes (default: the guard's). */
  readonly maxResponseBytes?: number;
}

/** The guarded fetch, and the guard's verdict on a URL without fetching it. */
export interface OutboundFetch {
  /** Fetches `url` through the guard (see the module doc); rejects with an {@link OutboundError}. */
  (url: string | URL, init?: OutboundRequestInit): Promise<Response>;
  /** Why the guard refuses `url` (its name resolved), or null when it would fetch it. */
  refusal(url: string | URL): Promise<OutboundErrorCode | null>;
}

/** Checked DNS answers by name, while fresh. */
type ResolveCache = Map<string, { addresses: readonly string[]; expiresAt: number }>;

const RESOLVE_CACHE_SIZE = 1000;

async function resolveChecked(
  host: string,
  options: OutboundGuardOptions,
  cache: ResolveCache | null,
  signal: AbortSignal,
): Promise<readonly string[]> {
  const now = options.resolveCache?.clock.now() ?? 0;
  const hit = cache?.get(host);
  if (hit !== undefined && hit.expiresAt > now) return hit.addresses;
  let addresses: readonly string[];
  try {
    addresses = await abortable(options.resolveHost(host), signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new OutboundError("outbound_unresolvable");
  }
  if (cache !== null && addresses.length > 0) {
    cache.delete(host);
    if (cache.size >= RESOLVE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(host, { addresses, expiresAt: now + options.resolveCache!.ttlMs });
  }
  return addresses;
}

/** The addresses to connect to when the guard may pin them; throws the refusal otherwise. */
async function admit(
  url: URL,
  options: OutboundGuardOptions,
  signal: AbortSignal,
  cache: ResolveCache | null = null,
): Promise<{ addresses: readonly string[] | null }> {
  const refused = checkOutboundUrl(url, options.policy);
  if (refused !== null) throw new OutboundError(REFUSAL_CODES[refused]);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (parseIp(host) !== null) return { addresses: [host] };
  // A name the operator allowed by name is trusted whatever it resolves to.
  if (isAllowedDestination(host, options.policy)) return { addresses: null };
  const addresses = await resolveChecked(host, options, cache, signal);
  if (addresses.length === 0) throw new OutboundError("outbound_unresolvable");
  const again = checkOutboundUrl(url, options.policy, addresses);
  if (again !== null) throw new OutboundError(REFUSAL_CODES[again]);
  return { addresses };
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * A body stream that errors (and cancels its source) at the first chunk past `max` bytes; a read
 * failure becomes `failure(err)` (the timeout's code once the time is up).
 */
function capped(
  body: ReadableStream<Uint8Array>,
  max: number,
  failure: (err: unknown) => unknown,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        if (seen > max) {
          await reader.cancel().catch(() => {});
          return controller.error(new OutboundError("outbound_response_too_large"));
        }
        controller.enqueue(value);
      } catch (err) {
        controller.error(failure(err));
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/**
 * Builds the guarded fetch (see the module doc). The host builds one from its runtime adapter and
 * hands it to everything that fetches.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createOutboundFetch, OutboundError } from "@svc/svc";
 *
 * const outbound = createOutboundFetch({
 *   policy: { allowPrivate: [] },
 *   // A name that points inward, as a hostile DNS answers.
 *   resolveHost: () => Promise.resolve(["169.254.169.254"]),
 *   fetch: () => Promise.reject(new Error("never called")),
 * });
 * await assert.rejects(outbound("https://metadata.example/latest"), (err) => {
 *   assert.ok(err instanceof OutboundError);
 *   assert.equal(err.code, "outbound_address_refused");
 *   return true;
 * });
 * assert.equal(await outbound.refusal("http://127.0.0.1:8080/"), "outbound_address_refused");
 * ```
 */
export function createOutboundFetch(options: OutboundGuardOptions): OutboundFetch {
  const cache: ResolveCache | null = options.resolveCache !== undefined && options.connect !== undefined
    ? new Map()
    : null;
  const send = async (url: string | URL, init: OutboundRequestInit = {}): Promise<Response> => {
    const { maxRedirects = 0, timeoutMs, maxResponseBytes, ...request } = init;
    const limit = maxResponseBytes ?? options.maxResponseBytes ?? DEFAULT_OUTBOUND_MAX_BYTES;
    const timeout = AbortSignal.timeout(timeoutMs ?? options.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const method = (request.method ?? "GET").toUpperCase();
    const hops = Math.min(Math.max(0, maxRedirects), MAX_REDIRECTS);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new OutboundError("outbound_invalid_url");
    }
    let headers = new Headers(request.headers);
    for (let hop = 0;; hop++) {
      let response: Response;
      try {
        const { addresses } = await admit(target, options, signal, cache);
        const hopInit: RequestInit = { ...request, method, headers, redirect: "manual", signal };
        response = await (
          (addresses !== null ? options.connect?.(target, addresses, hopInit) : null) ??
            options.fetch(target, hopInit)
        );
      } catch (err) {
        if (err instanceof OutboundError) throw err;
        if (timeout.aborted) throw new OutboundError("outbound_timeout");
        if (request.signal?.aborted) throw request.signal.reason;
        throw new OutboundError("outbound_unreachable", { cause: err });
      }
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location !== null && hops > 0) {
        await response.body?.cancel().catch(() => {});
        if (hop >= hops || (method !== "GET" && method !== "HEAD")) {
          throw new OutboundError("outbound_too_many_redirects");
        }
        let next: URL;
        try {
          next = new URL(location, target);
        } catch {
          throw new OutboundError("outbound_invalid_url");
        }
        if (next.origin !== target.origin) {
          headers = new Headers(headers);
          for (const name of CREDENTIAL_HEADERS) headers.delete(name);
        }
        target = next;
        continue;
      }
      const length = Number(response.headers.get("content-length") ?? NaN);
      if (Number.isFinite(length) && length > limit) {
        await response.body?.cancel().catch(() => {});
        throw new OutboundError("outbound_response_too_large");
      }
      if (response.body === null) return response;
      const failure = (err: unknown) =>
        timeout.aborted
          ? new OutboundError("outbound_timeout")
          : request.signal?.aborted
          ? err
          : new OutboundError("outbound_unreachable", { cause: err });
      return new Response(capped(response.body, limit, failure), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
  };
  const refusal = async (url: string | URL): Promise<OutboundErrorCode | null> => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return "outbound_invalid_url";
    }
    try {
      await admit(target, options, AbortSignal.timeout(options.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS));
      return null;
    } catch (err) {
      return err instanceof OutboundError ? err.code as OutboundErrorCode : "outbound_unresolvable";
    }
  };
  return Object.assign(send, { refusal });
}
