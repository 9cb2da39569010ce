/**
 * svc's outbound guard for tests: the real guard (`createOutboundFetch`) with the policy a test
 * names, over the real `fetch` or a fake one, and a resolver that answers a public documentation-
 * free address (93.184.216.34) for every name unless the test maps the name itself.
 */
import {
  createOutboundFetch,
  type OutboundFetch,
  type OutboundGuardOptions,
  type RuntimeFetch,
} from "../../core/net/outbound.ts";

/** A public address the test resolver answers for names the test does not map. */
export const PUBLIC_TEST_ADDRESS = "93.184.216.34";

/** The guard with `allowPrivate` (default none), `fetch` (default the real one) and `names` mapped. */
export function testOutbound(options: {
  readonly allowPrivate?: readonly string[];
  readonly fetch?: RuntimeFetch;
  readonly names?: Readonly<Record<string, readonly string[]>>;
  readonly resolveHost?: OutboundGuardOptions["resolveHost"];
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
} = {}): OutboundFetch {
  return createOutboundFetch({
    policy: { allowPrivate: options.allowPrivate ?? [] },
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    resolveHost: options.resolveHost ??
      ((name) => Promise.resolve(options.names?.[name] ?? [PUBLIC_TEST_ADDRESS])),
    timeoutMs: options.timeoutMs,
    maxResponseBytes: options.maxResponseBytes,
  });
}
