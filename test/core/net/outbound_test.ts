/**
 * The outbound guard (`createOutboundFetch`) against loopback servers this test starts: refusals
 * after DNS resolution (nothing is sent), an unresolvable name, redirects never followed unless
 * asked and then re-checked hop by hop (a redirect to a private or metadata address is refused,
 * the hop count is bounded, a POST is never redirected, credentials are dropped across origins),
 * an oversized body cut while streaming (the server stops being read), a declared oversized body
 * refused before reading, a timeout with its code, and the pinned connection: the request goes to
 * the address the guard checked, with the name in `Host`, never through a second resolution.
 */
import { strict as assert } from "node:assert";
import { pinnedFetch } from "../../../cli/pinned-fetch.ts";
import { createOutboundFetch, MAX_REDIRECTS, OutboundError } from "../../../core/net/outbound.ts";
import { ManualClock } from "../../../core/clock.ts";
import { testOutbound } from "../../support/outbound.ts";

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof OutboundError, String(err));
    assert.equal(err.code, code);
    assert.equal(err.status, 502);
    assert.ok(!err.message.includes("://") && !err.message.includes("example"), "no URL in the message");
    return true;
  });
}

/** A loopback server that answers by path and records what it received. */
function loopback(handler: (req: Request) => Response | Promise<Response>) {
  const seen: Request[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(req);
    return handler(req);
  });
  return { base: `http://127.0.0.1:${server.addr.port}`, seen, close: () => server.shutdown() };
}

Deno.test("outbound guard: private destinations refused before any request, after DNS too", async () => {
  const server = loopback(() => new Response("secret"));
  try {
    let sent = 0;
    const outbound = testOutbound({
      names: { "inward.example.com": ["93.184.216.34", "10.0.0.7"], "meta.example.com": ["169.254.169.254"] },
      fetch: (input, init) => {
        sent++;
        return fetch(input, init);
      },
    });
    await rejectsWith(outbound(`${server.base}/`), "outbound_address_refused");
    await rejectsWith(outbound("http://169.254.169.254/latest/meta-data/"), "outbound_address_refused");
    await rejectsWith(outbound("https://inward.example.com/"), "outbound_address_refused");
    await rejectsWith(outbound("https://meta.example.com/"), "outbound_address_refused");
    await rejectsWith(outbound("http://localhost:1/"), "outbound_address_refused");
    await rejectsWith(outbound("file:///etc/passwd"), "outbound_unsupported_scheme");
    await rejectsWith(outbound("not a url"), "outbound_invalid_url");
    assert.equal(sent, 0);
    assert.equal(server.seen.length, 0);
    assert.equal(await outbound.refusal("https://meta.example.com/"), "outbound_address_refused");
    assert.equal(await outbound.refusal("https://idp.example.com/"), null);

    const noDns = testOutbound({ resolveHost: () => Promise.reject(new Error("NXDOMAIN")) });
    await rejectsWith(noDns("https://nowhere.example.com/"), "outbound_unresolvable");
    const empty = testOutbound({ resolveHost: () => Promise.resolve([]) });
    await rejectsWith(empty("https://nowhere.example.com/"), "outbound_unresolvable");

    // The explicit escape hatch: the operator allows this loopback address.
    const allowed = testOutbound({ allowPrivate: ["127.0.0.1"] });
    assert.equal(await (await allowed(`${server.base}/`)).text(), "secret");
  } finally {
    await server.close();
  }
});

Deno.test("outbound guard: redirects answered as is, or followed only when asked and re-checked per hop", async () => {
  const server = loopback((req) => {
    const url = new URL(req.url);
    const to = url.searchParams.get("to");
    if (to !== null) return new Response(null, { status: 302, headers: { Location: to } });
    if (url.pathname === "/loop") return new Response(null, { status: 302, headers: { Location: "/loop" } });
    return Response.json({ path: url.pathname, auth: req.headers.get("authorization") });
  });
  try {
    const outbound = testOutbound({ allowPrivate: ["127.0.0.1"] });
    // Default: the 3xx itself, nothing followed.
    const direct = await outbound(`${server.base}/?to=/final`);
    assert.equal(direct.status, 302);
    assert.equal(server.seen.length, 1);
    // Followed when asked, within the same origin; credentials kept there.
    const followed = await outbound(`${server.base}/?to=/final`, {
      maxRedirects: 2,
      headers: { Authorization: "Bearer t" },
    });
    assert.deepEqual(await followed.json(), { path: "/final", auth: "Bearer t" });
    // A redirect to a private or metadata address is refused, hop by hop.
    const before = server.seen.length;
    await rejectsWith(
      outbound(`${server.base}/?to=${encodeURIComponent("http://169.254.169.254/latest/")}`, {
        maxRedirects: 3,
      }),
      "outbound_address_refused",
    );
    await rejectsWith(
      outbound(`${server.base}/?to=${encodeURIComponent("http://10.0.0.1/")}`, { maxRedirects: 3 }),
      "outbound_address_refused",
    );
    assert.equal(server.seen.length, before + 2, "only the first hops were sent");
    // Bounded: a loop stops at the count asked for (and never past MAX_REDIRECTS).
    const loopStart = server.seen.length;
    await rejectsWith(outbound(`${server.base}/loop`, { maxRedirects: 2 }), "outbound_too_many_redirects");
    assert.equal(server.seen.length - loopStart, 3);
    const capStart = server.seen.length;
    await rejectsWith(outbound(`${server.base}/loop`, { maxRedirects: 100 }), "outbound_too_many_redirects");
    assert.equal(server.seen.length - capStart, MAX_REDIRECTS + 1);
    // A POST (a client secret in its body) is never re-sent to a redirect target.
    const postStart = server.seen.length;
    await rejectsWith(
      outbound(`${server.base}/?to=/final`, { method: "POST", body: "client_secret=s", maxRedirects: 3 }),
      "outbound_too_many_redirects",
    );
    assert.equal(server.seen.length - postStart, 1);
  } finally {
    await server.close();
  }
});

Deno.test("outbound guard: credentials are dropped when a redirect changes origin", async () => {
  const seen: { url: string; auth: string | null }[] = [];
  const outbound = testOutbound({
    fetch: (input, init) => {
      const url = String(input);
      seen.push({ url, auth: new Headers(init?.headers).get("authorization") });
      return Promise.resolve(
        url.startsWith("https://a.example.com")
          ? new Response(null, { status: 302, headers: { Location: "https://b.example.com/keys" } })
          : Response.json({ keys: [] }),
      );
    },
  });
  const res = await outbound("https://a.example.com/keys", {
    maxRedirects: 1,
    headers: { Authorization: "x" },
  });
  assert.equal(res.status, 200);
  assert.deepEqual(seen, [
    { url: "https://a.example.com/keys", auth: "x" },
    { url: "https://b.example.com/keys", auth: null },
  ]);
});

Deno.test("outbound guard: an oversized body is cut while streaming; a declared one is refused", async () => {
  const chunk = new Uint8Array(64 * 1024).fill(65);
  let pulled = 0;
  const server = loopback((req) => {
    if (new URL(req.url).pathname === "/declared") {
      return new Response(new Uint8Array(10_000), { headers: { "Content-Length": "10000" } });
    }
    // 64 MiB on demand, without a length: only what the guard reads is produced.
    return new Response(
      new ReadableStream({
        pull(controller) {
          if (pulled++ >= 1024) return controller.close();
          controller.enqueue(chunk);
        },
      }),
    );
  });
  try {
    const outbound = testOutbound({ allowPrivate: ["127.0.0.1"], maxResponseBytes: 256 * 1024 });
    const res = await outbound(`${server.base}/stream`);
    await rejectsWith(res.arrayBuffer(), "outbound_response_too_large");
    // The socket buffers hold a few MiB; the 64 MiB are never produced.
    assert.ok(pulled < 256, `the server stopped being read early (${pulled} chunks of 1024)`);
    await rejectsWith(
      outbound(`${server.base}/declared`, { maxResponseBytes: 1000 }),
      "outbound_response_too_large",
    );
    // Under the cap, the body arrives whole.
    assert.equal((await (await outbound(`${server.base}/declared`)).arrayBuffer()).byteLength, 10_000);
  } finally {
    await server.close();
  }
});

Deno.test("outbound guard: an exchange that does not finish in time fails with outbound_timeout", async () => {
  const hold = Promise.withResolvers<void>();
  const server = loopback(async () => {
    await hold.promise;
    return new Response("late");
  });
  try {
    const outbound = testOutbound({ allowPrivate: ["127.0.0.1"], timeoutMs: 50 });
    await rejectsWith(outbound(`${server.base}/`), "outbound_timeout");
  } finally {
    hold.resolve();
    await server.close();
  }
});

Deno.test("outbound guard: the pinned connection goes to the checked address, the name in Host", async () => {
  const server = loopback((req) => new Response(`host=${req.headers.get("host")}`));
  try {
    const port = new URL(server.base).port;
    let answers = 0;
    let unpinned = 0;
    const outbound = createOutboundFetch({
      policy: { allowPrivate: ["127.0.0.1"] },
      // A rebinding DNS: the first answer (the one checked) is the allowed address, any later
      // one would be the metadata service.
      resolveHost: () => Promise.resolve(answers++ === 0 ? ["127.0.0.1"] : ["169.254.169.254"]),
      connect: pinnedFetch,
      fetch: () => {
        unpinned++;
        return Promise.reject(new Error("a second resolution"));
      },
    });
    const res = await outbound(`http://keys.rebind.example:${port}/jwks`);
    assert.equal(await res.text(), `host=keys.rebind.example:${port}`);
    assert.equal(answers, 1, "resolved once");
    assert.equal(unpinned, 0, "the runtime never resolved the name itself");
    assert.equal(server.seen.length, 1);
  } finally {
    await server.close();
  }
});

Deno.test("outbound guard: checked answers are reused for the cache's time when pinned, and checked again", async () => {
  const server = loopback(() => new Response("ok"));
  try {
    const port = new URL(server.base).port;
    const clock = new ManualClock(0);
    let answer = ["127.0.0.1"];
    let lookups = 0;
    const guard = (connect: boolean, allowPrivate: string[]) =>
      createOutboundFetch({
        policy: { allowPrivate },
        resolveHost: () => {
          lookups++;
          return Promise.resolve(answer);
        },
        ...(connect ? { connect: pinnedFetch } : {}),
        fetch: (input, init) => fetch(input, init),
        resolveCache: { clock, ttlMs: 5000 },
      });
    const outbound = guard(true, ["127.0.0.1"]);
    const url = `http://cached.example:${port}/`;
    await (await outbound(url)).text();
    answer = ["169.254.169.254"]; // the name rebinds
    await (await outbound(url)).text();
    assert.equal(lookups, 1, "the second fetch used the checked answer, and connected to it");
    clock.advance(5001);
    await rejectsWith(outbound(url), "outbound_address_refused");
    assert.equal(lookups, 2);
    assert.equal(server.seen.length, 2);
    // A policy that no longer allows the cached address refuses it though cached.
    answer = ["127.0.0.1"];
    const strict = guard(true, []);
    await rejectsWith(strict(url), "outbound_address_refused");
    // Without a pinning connector nothing is cached (the runtime would resolve again anyway).
    lookups = 0;
    const unpinned = guard(false, ["127.0.0.1"]);
    await (await unpinned(`http://127.0.0.1:${port}/`)).text();
    await rejectsWith(unpinned("http://cached.example:1/"), "outbound_unreachable");
    await rejectsWith(unpinned("http://cached.example:1/"), "outbound_unreachable");
    assert.equal(lookups, 2);
  } finally {
    await server.close();
  }
});
