/**
 * The peer bench's load driver counts what it did and alternates fairly: every answered
 * request is counted once, a failed request fails the round, the rounds alternate which side
 * goes first, the median is the middle round, and `--docs` replaces only what lies between its
 * markers. (No timing is asserted: the rounds here last a few milliseconds.)
 */
import assert from "node:assert/strict";
import { drive, interleave, median } from "../../../bench/peers/driver.ts";
import { replaceBetweenMarkers } from "../../../bench/peers/run.ts";

Deno.test("drive counts every answered request, each client's loop included, and its rate", async () => {
  const calls = new Map<number, number>();
  const result = await drive(
    async (client) => {
      await new Promise((r) => setTimeout(r, 1));
      calls.set(client, (calls.get(client) ?? 0) + 1);
    },
    4,
    0.03,
  );
  assert.deepEqual([...calls.keys()].sort(), [0, 1, 2, 3]);
  assert.equal(result.requests, [...calls.values()].reduce((a, b) => a + b, 0));
  assert.ok(result.seconds >= 0.03);
  assert.equal(result.rate, result.requests / result.seconds);
});

Deno.test("a failed request fails the round", async () => {
  await assert.rejects(
    () =>
      drive(
        async (client) => {
          await Promise.resolve();
          if (client === 2) throw new Error("HTTP 500");
        },
        3,
        0.01,
      ),
    /HTTP 500/,
  );
});

Deno.test("interleave warms both sides up, then alternates which one goes first", async () => {
  const order: string[] = [];
  const side = (name: string) => ({
    name,
    request: async () => {
      if (order.at(-1) !== name) order.push(name);
      await new Promise((r) => setTimeout(r, 1));
    },
  });
  const result = await interleave(side("svc"), side("peer"), {
    clients: 1,
    seconds: 0.005,
    rounds: 3,
    warmupSeconds: 0.005,
  });
  // Warm-ups svc, peer; rounds svc peer | peer svc | svc peer: with back-to-back runs of one side
  // merged, six runs (the same order every round would give eight).
  assert.deepEqual(order, ["svc", "peer", "svc", "peer", "svc", "peer"]);
  assert.equal(result.rates.svc.length, 3);
  assert.equal(result.rates.peer.length, 3);
  assert.equal(result.medians.svc, median(result.rates.svc));
});

Deno.test("median is the middle value (the lower middle one for an even count)", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2);
  assert.equal(median([7]), 7);
});

Deno.test("--docs replaces only the text between its own markers", () => {
  const page = [
    "intro",
    "<!-- peers-bench:start -->",
    "old table",
    "<!-- peers-bench:end -->",
    "<!-- peers-bench-node:start -->",
    "old node table",
    "<!-- peers-bench-node:end -->",
    "outro",
  ].join("\n");
  const updated = replaceBetweenMarkers(page, "peers-bench", "new table");
  assert.ok(updated.includes("\n\nnew table\n\n<!-- peers-bench:end -->"));
  assert.ok(!updated.includes("old table\n"));
  assert.ok(updated.includes("old node table"));
  assert.ok(updated.startsWith("intro\n") && updated.endsWith("outro"));
  assert.throws(() => replaceBetweenMarkers("no markers", "peers-bench", "x"), /needs the lines/);
});
