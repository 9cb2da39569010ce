import { strict as assert } from "node:assert";
import { connectReason } from "../../../core/webhooks/dispatcher.ts";
import { OutboundError } from "../../../core/net/outbound.ts";

Deno.test("connectReason: a runtime's network error reads as a reason, never as its raw text", () => {
  // Node/undici: "TypeError: fetch failed" with the system error as cause.
  const node = new TypeError("fetch failed", {
    cause: Object.assign(new Error("connect ECONNREFUSED 10.0.0.7:8443"), { code: "ECONNREFUSED" }),
  });
  assert.equal(connectReason(node), "connection refused");
  // Deno: the reason is in the message.
  const deno = new TypeError(
    "error sending request for url (https://hooks.example/x?token=s3cret): client error (Connect): tcp connect error: Connection refused (os error 111)",
  );
  assert.equal(connectReason(deno), "connection refused");
  // Through the outbound guard: the cause is kept on the OutboundError.
  assert.equal(
    connectReason(new OutboundError("outbound_unreachable", { cause: node }).cause),
    "connection refused",
  );
  assert.equal(
    connectReason(new TypeError("fetch failed", { cause: { code: "ENOTFOUND" } })),
    "host name does not resolve",
  );
  assert.equal(
    connectReason(new TypeError("fetch failed", { cause: { code: "ECONNRESET" } })),
    "connection reset",
  );
  assert.equal(
    connectReason(new TypeError("fetch failed", { cause: { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" } })),
    "TLS handshake failed (certificate not accepted)",
  );
  // Anything unknown: a neutral reason; the URL, address or secret never appear.
  const unknown = connectReason(new TypeError("fetch failed https://hooks.example/x?token=s3cret"));
  assert.equal(unknown, "network error");
  assert.equal(connectReason(undefined), "network error");
  // A cause cycle is bounded.
  const a: { cause?: unknown; message: string } = { message: "x" };
  a.cause = a;
  assert.equal(connectReason(a), "network error");
});
