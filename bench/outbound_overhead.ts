/**
 * `deno run -A bench/outbound_overhead.ts [--rounds 400]`: the outbound guard's added cost per
 * fetch, beside a plain `fetch` to the same loopback server in the same run (the loopback allowance
 * switched on for the bench: `allowPrivate: ["127.0.0.1"]`). The variants run interleaved, one
 * request each per round, so a busy machine slows them alike; the report gives each variant's p50
 * and p75, its p50 ratio to the plain fetch and the milliseconds it adds at p50 (goal: ≤ 1 ms).
 *
 * - `plain fetch`: `fetch("http://127.0.0.1:<port>/jwks")`, body read (the baseline);
 * - `guard, pinned`: the guard on the address, connecting through the adapters' pinned connector
 *   (`node:http` with the checked address as its lookup, kept-alive sockets): what `svc start` does;
 * - `guard, runtime fetch`: the guard on the address, then the runtime's own `fetch` (the rules,
 *   the redirect, timeout and size-cap handling, without pinning);
 * - `plain fetch by name`: `fetch` to this machine's host name (the runtime resolves it, or reuses
 *   a pooled connection without resolving);
 * - `guard by name, pinned`: the host name resolved by the system resolver on each fetch
 *   (`getaddrinfo`, as the adapters do), then pinned;
 * - `guard by name, cached`: the same with the 5 s cache of checked answers `svc start` uses.
 */
import { lookup } from "node:dns/promises";
import { pinnedFetch } from "../cli/pinned-fetch.ts";
import { systemClock } from "../core/clock.ts";
import { createOutboundFetch } from "../core/net/outbound.ts";

const ROUNDS = Number(Deno.args.includes("--rounds") ? Deno.args[Deno.args.indexOf("--rounds") + 1] : "400");

const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  () => Response.json({ keys: [] }),
);
const port = server.addr.port;
const byAddress = `http://127.0.0.1:${port}/jwks`;
const byName = `http://${Deno.hostname()}:${port}/jwks`;
const resolveHost = async (name: string) => (await lookup(name, { all: true })).map((entry) => entry.address);
const runtimeFetch = (input: string | URL | Request, init?: RequestInit) => fetch(input, init);
const policy = { allowPrivate: ["127.0.0.1"] };
const pinned = createOutboundFetch({ policy, resolveHost, connect: pinnedFetch, fetch: runtimeFetch });
const unpinned = createOutboundFetch({ policy, resolveHost, fetch: runtimeFetch });
const cached = createOutboundFetch({
  policy,
  resolveHost,
  connect: pinnedFetch,
  fetch: runtimeFetch,
  resolveCache: { clock: systemClock, ttlMs: 5000 },
});

const variants: [string, () => Promise<Response>][] = [
  ["plain fetch", () => fetch(byAddress)],
  ["guard, pinned", () => pinned(byAddress)],
  ["guard, runtime fetch", () => unpinned(byAddress)],
  ["plain fetch by name", () => fetch(byName)],
  ["guard by name, pinned", () => pinned(byName)],
  ["guard by name, cached", () => cached(byName)],
];

const times = new Map(variants.map(([name]) => [name, [] as number[]]));
for (let round = -20; round < ROUNDS; round++) { // 20 warm-up rounds, not recorded
  for (const [name, send] of variants) {
    const start = performance.now();
    const res = await send();
    await res.arrayBuffer();
    const elapsed = performance.now() - start;
    if (res.status !== 200) throw new Error(`${name}: the bench server answered ${res.status}`);
    if (round >= 0) times.get(name)!.push(elapsed);
  }
}
await server.shutdown();

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor(q * values.length)];
const base = quantile(times.get("plain fetch")!, 0.5);
console.log(`${ROUNDS} interleaved rounds on ${Deno.build.os}, Deno ${Deno.version.deno}`);
console.log("variant                  p50 ms   p75 ms   p50 ratio   added at p50");
for (const [name] of variants) {
  const t = times.get(name)!;
  const p50 = quantile(t, 0.5);
  console.log(
    `${name.padEnd(24)} ${p50.toFixed(3).padStart(6)}   ${quantile(t, 0.75).toFixed(3).padStart(6)}   ${
      (p50 / base).toFixed(2).padStart(8)
    }x   ${(p50 - base).toFixed(3).padStart(8)} ms`,
  );
}
