/**
 * The outbound guard's pinning connector for the runtime adapters (Deno, Node, Bun): an HTTP(S)
 * request over `node:http` / `node:https` whose DNS lookup answers the one address the guard
 * checked, so a name that resolves elsewhere a moment later (DNS rebinding) cannot move the
 * connection. The URL's host stays in the `Host` header and, for https, in SNI and the
 * certificate check. Redirects are never followed (the guard decides); bodies are not decoded
 * (`Accept-Encoding: identity` unless the caller asked otherwise).
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * Kept-alive connections, pooled by host name and port: a pooled socket is connected to an
 * address the guard checked when it was opened.
 */
const AGENTS = {
  "http:": new http.Agent({ keepAlive: true, maxFreeSockets: 16 }),
  "https:": new https.Agent({ keepAlive: true, maxFreeSockets: 16 }),
};

/**
 * Sends `init` to `url`, connecting to one of `addresses` (IPv4 or IPv6 literals, tried as a DNS
 * answer would be) whatever DNS says.
 */
export async function pinnedFetch(
  url: URL,
  addresses: readonly string[],
  init: RequestInit,
): Promise<Response> {
  if (addresses.length === 0) throw new Error("no address to connect to");
  // Request normalizes every body kind (string, form, bytes, stream) and sets its content type.
  const request = new Request(url, { method: init.method, headers: init.headers, body: init.body });
  const body = request.body === null ? null : new Uint8Array(await request.arrayBuffer());
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => headers[name] = value);
  headers["accept-encoding"] ??= "identity";
  if (init.body instanceof URLSearchParams) {
    headers["content-type"] ??= "application/x-www-form-urlencoded;charset=UTF-8";
  }
  if (body !== null) headers["content-length"] = String(body.byteLength);
  const answer = addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, answer);
    else callback(null, answer[0].address, answer[0].family);
  };
  const transport = url.protocol === "https:" ? https : http;
  return await new Promise<Response>((resolve, reject) => {
    const req = transport.request(url, {
      method: request.method,
      headers,
      lookup,
      agent: url.protocol === "https:" ? AGENTS["https:"] : AGENTS["http:"],
      signal: init.signal ?? undefined,
      // SNI carries the name (never an address literal, which TLS forbids there).
      ...(url.protocol === "https:" && isIP(url.hostname.replace(/^\[|\]$/g, "")) === 0
        ? { servername: url.hostname }
        : {}),
    }, (res) => {
      const answer = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
        answer.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
      }
      const status = res.statusCode ?? 502;
      const empty = NULL_BODY.has(status) || request.method === "HEAD";
      if (empty) res.resume();
      resolve(
        new Response(empty ? null : Readable.toWeb(res) as ReadableStream<Uint8Array>, {
          status,
          statusText: res.statusMessage,
          headers: answer,
        }),
      );
    });
    req.on("error", reject);
    req.end(body ?? undefined);
  });
}
