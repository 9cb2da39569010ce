/**
 * What the workload federation plugin's modules share: its config section and event kinds.
 *
 * @module
 */

/** The plugin's config section. */
export interface WorkloadFederationConfig {
  /** The realm whose policies and service accounts `/workload/token` serves (id or name; default: the default realm). */
  readonly realm: string | null;
  /** The longest lifetime (exp − iat) of an external token accepted. */
  readonly maxTokenLifetimeSeconds: number;
}

/** Kinds of the events the plugin emits. */
export const WORKLOAD_EVENTS = {
  tokenExchanged: "workload.token_exchanged",
  exchangeRefused: "workload.exchange_refused",
} as const;
