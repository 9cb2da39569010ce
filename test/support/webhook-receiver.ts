/**
 * A webhook receiver on loopback (Deno.serve on port 0) with injectable faults, and a
 * signature verifier written from the spec text alone (section 2.8), independent of svc's
 * own code: it uses node:crypto rather than Web Crypto and parses the header by hand.
 *
 * Spec 2.8: "Headers: `X-Svc-Signature: t=<unix_seconds>,v1=<hex>`; `X-Svc-Event: <event kind>`;
 * `X-Svc-Delivery: <idempotency key>`. The signature is a hex HMAC-SHA256 keyed with the
 * endpoint secret over the string `<t>.<raw body>`." Spec 8: tolerance 5 minutes.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The independent verifier: true when some `v1` of the header is the hex HMAC-SHA256, keyed
 * with one of `secrets`, of `<t>.<raw body>`, and `t` is within 300 seconds of `nowSeconds`.
 */
export function independentVerify(
  header: string | null,
  rawBody: string,
  secrets: readonly string[],
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  if (header === null) return false;
  let t: string | undefined;
  const v1: string[] = [];
  for (const item of header.split(",")) {
    const [key, ...rest] = item.split("=");
    const value = rest.join("=");
    if (key === "t") t = value;
    if (key === "v1") v1.push(value);
  }
  if (t === undefined || !/^[0-9]+$/.test(t) || v1.length === 0) return false;
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return false;
  for (const secret of secrets) {
    const expected = Buffer.from(
      createHmac("sha256", secret).update(`${t}.${rawBody}`, "utf8").digest("hex"),
    );
    for (const candidate of v1) {
      const given = Buffer.from(candidate);
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    }
  }
  return false;
}

/** How long a `timeout` fault hangs before answering. */
export const HANG_MS = 3_000;

/** How the receiver answers the next request. */
export type Fault = "ok" | "500" | "timeout" | { status: number };

/** One request the receiver saw. */
export interface Received {
  readonly deliveryId: string | null;
  readonly eventKind: string | null;
  readonly signature: string | null;
  readonly body: string;
  /** Whether the independent verifier accepted it (with the secrets at that moment). */
  readonly verified: boolean;
  /** The answer given. */
  readonly answered: Fault;
}

/** A running receiver. */
export interface Receiver {
  /** `http://127.0.0.1:<port>/hook`. */
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** Faults for the next requests, in order; when empty, the receiver answers 204. */
  readonly faults: Fault[];
  /** Stops listening (connections are then refused) until {@link restart}. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): void;
  close(): Promise<void>;
}

/**
 * Starts a receiver. `secrets()` gives the secrets the independent verifier accepts and
 * `nowSeconds()` the receiver's idea of now (the test's manual clock).
 */
export function startReceiver(options: {
  secrets: () => readonly string[];
  nowSeconds: () => number;
}): Receiver {
  const received: Received[] = [];
  const faults: Fault[] = [];
  const handler = async (req: Request): Promise<Response> => {
    const body = await req.text();
    const fault = faults.shift() ?? "ok";
    const signature = req.headers.get("X-Svc-Signature");
    received.push({
      deliveryId: req.headers.get("X-Svc-Delivery"),
      eventKind: req.headers.get("X-Svc-Event"),
      signature,
      body,
      verified: independentVerify(signature, body, options.secrets(), options.nowSeconds()),
      answered: fault,
    });
    if (fault === "500") return new Response("boom", { status: 500 });
    if (fault === "timeout") {
      // Hang well past the dispatcher's time limit (the tests use 2 s).
      await new Promise((resolve) => setTimeout(resolve, HANG_MS));
      return new Response(null, { status: 204 });
    }
    if (typeof fault === "object") return new Response(null, { status: fault.status });
    return new Response(null, { status: 204 });
  };
  let server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const port = server.addr.port;
  let running = true;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    faults,
    async stop() {
      if (!running) return;
      running = false;
      await server.shutdown();
    },
    restart() {
      if (running) return;
      server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, handler);
      running = true;
    },
    async close() {
      if (running) await server.shutdown();
      running = false;
    },
  };
}
