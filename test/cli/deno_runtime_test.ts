/**
 * The Deno adapter's outbound connector (`denoRuntime.connectPinned`): it loads the pinning
 * connector (`cli/pinned-fetch.ts`, `node:http`) on its first request, and connects to the address
 * the guard checked whatever the URL's host name resolves to.
 */
import { strict as assert } from "node:assert";
import { denoRuntime } from "../../cli/deno-runtime.ts";

Deno.test("denoRuntime.connectPinned: a request reaches the pinned address, with the URL's host in Host", async () => {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    seen.push(request.headers.get("host") ?? "");
    return new Response("pinned", { status: 201 });
  });
  try {
    // The name does not resolve; only the pinned address can answer.
    const url = new URL(`http://svc-pinned.invalid:${server.addr.port}/hook`);
    for (let i = 0; i < 2; i++) {
      const response = await denoRuntime.connectPinned!(url, ["127.0.0.1"], { method: "POST", body: "{}" });
      assert.ok(response !== null, "the connector took the request");
      assert.equal(response.status, 201);
      assert.equal(await response.text(), "pinned");
    }
    assert.deepEqual(seen, [
      `svc-pinned.invalid:${server.addr.port}`,
      `svc-pinned.invalid:${server.addr.port}`,
    ]);
  } finally {
    await server.shutdown();
  }
});
